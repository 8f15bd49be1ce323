#!/usr/bin/env bash
# scripts/setup.sh: everything wgnn needs before `cmake` can run.
#
#   - build tools (cmake >= 3.21, make, gcc, npm; with --with-fuzz also clang
#     and its libFuzzer runtime) and C libraries (libcjson-dev, libstb-dev,
#     libpcre2-dev, libutf8proc-dev)
#     and the Vulkan headers (libvulkan-dev, for bench/kernel_stats),
#     installed with apt only when missing;
#   - Dawn: libwebgpu_wrapper.so from the npm package bun-webgpu-linux-x64 and
#     the webgpu.h/dawn headers from Debian's libwebgpu-dawn-dev, both
#     downloaded (never installed) into deps/dawn/;
#   - a Vulkan driver: Mesa's lavapipe >= 24 (on Debian 12 from
#     bookworm-backports, through a private apt sources list).
#
# Usage: scripts/setup.sh [--with-fuzz]
#   WGNN_SKIP_LAVAPIPE=1  skip the Vulkan driver step (machine with a GPU driver)
#
# Idempotent: once done, a re-run only checks the tools, the Vulkan driver and
# the stamp deps/.setup-ok-<sha256 of this script>, and takes well under 1 s.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="$ROOT/scripts/setup.sh"
DEPS="$ROOT/deps"
DL="$DEPS/downloads"
DAWN="$DEPS/dawn"

NPM_PKG=bun-webgpu-linux-x64
NPM_VER=0.1.7
NPM_SHA=8badfecdad4e726ac12be4f29771f4cbd7ce7683b4418316a547c5bda94fb798
DEB_PKG=libwebgpu-dawn-dev
DEB_VER='0.0~git20260909.1a75cb7f-1'
DEB_SHA=209296cbbc8d7fb18c8a3c1ae67d8df5f075428546636867d2a29a24ced80a1e
MESA_MIN=24
CMAKE_MIN=3.21
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=http://deb.debian.org/debian

log() { echo "setup: $*" >&2; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

WITH_FUZZ=0
for arg in "$@"; do
  case "$arg" in
    --with-fuzz) WITH_FUZZ=1 ;;
    -h|--help) sed -n '2,16p' "$SELF" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$arg' (usage: scripts/setup.sh [--with-fuzz])" ;;
  esac
done

is_root() { [ "$(id -u)" = 0 ]; }
sha256() { sha256sum "$1" | cut -d' ' -f1; }
command -v apt-get >/dev/null && command -v dpkg-query >/dev/null ||
  die "apt-get/dpkg not found: this script supports Debian/Ubuntu only"

mkdir -p "$DEPS" "$DL"
exec 9>"$DEPS/.setup.lock"
flock 9 || die "cannot lock $DEPS/.setup.lock"
rm -rf "$DEPS"/.tmp.*   # left by a killed run (we hold the lock)
TMP="$(mktemp -d "$DEPS/.tmp.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# ---------------------------------------------------------------- build tools
APT_UPDATED=0
sys_apt_install() {   # packages... (from the system's own apt sources)
  is_root || die "missing packages: $*; install them (as root: apt-get install $*) and re-run"
  if [ "$APT_UPDATED" = 0 ]; then
    log "apt-get update (system sources)"
    apt-get update -qq >&2 || log "warning: apt-get update reported errors; trying the install anyway"
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 ||
    die "apt-get install $* failed (see apt's message above; is the Debian archive reachable?)"
}

fuzzer_rt() {   # libFuzzer runtime of the installed clang
  local d; d="$(clang --print-runtime-dir 2>/dev/null)" || return 1
  compgen -G "$d/libclang_rt.fuzzer*.a" >/dev/null
}

check_tools() {
  local missing=()
  command -v cmake >/dev/null || missing+=(cmake)
  command -v make  >/dev/null || missing+=(make)
  command -v gcc   >/dev/null || missing+=(gcc libc6-dev)
  command -v npm   >/dev/null || missing+=(npm)
  command -v dpkg-deb >/dev/null || missing+=(dpkg)
  # C libraries from Debian's archive: cJSON (config.json and other JSON),
  # stb_image (PNG/JPEG input), PCRE2 (tokenizer pre-tokenization regexes),
  # utf8proc (tokenizer NFC normalization)
  [ -f /usr/include/cjson/cJSON.h ] || missing+=(libcjson-dev)
  [ -f /usr/include/stb/stb_image.h ] || missing+=(libstb-dev)
  [ -f /usr/include/pcre2.h ] || missing+=(libpcre2-dev)
  [ -f /usr/include/utf8proc.h ] || missing+=(libutf8proc-dev)
  # Vulkan headers: bench/kernel_stats (registers and code size of the kernels)
  [ -f /usr/include/vulkan/vulkan.h ] || missing+=(libvulkan-dev)
  [ "$WITH_FUZZ" = 0 ] || command -v clang >/dev/null || missing+=(clang)
  [ ${#missing[@]} = 0 ] || sys_apt_install "${missing[@]}"

  local v; v="$(cmake --version | sed -n '1s/^cmake version //p')"
  dpkg --compare-versions "$v" ge "$CMAKE_MIN" ||
    die "cmake $v is too old: wgnn needs cmake >= $CMAKE_MIN"

  if [ "$WITH_FUZZ" = 1 ] && ! fuzzer_rt; then
    local major; major="$(clang -dumpversion | cut -d. -f1)"
    sys_apt_install "libclang-rt-$major-dev"
    fuzzer_rt || die "libFuzzer runtime (libclang_rt.fuzzer) still missing after installing libclang-rt-$major-dev"
  fi
}

# ------------------------------------------------------------- Vulkan driver
ldconfig_p() { if command -v ldconfig >/dev/null; then ldconfig -p; else /sbin/ldconfig -p; fi; }
mesa_version() { dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true; }
vulkan_ok() {
  [ -f /usr/share/vulkan/icd.d/lvp_icd.json ] || [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || return 1
  local v; v="$(mesa_version)"
  [ -n "$v" ] && dpkg --compare-versions "$v" ge "$MESA_MIN" || return 1
  ldconfig_p | grep 'libvulkan\.so\.1' >/dev/null
}

ensure_vulkan() {
  [ "${WGNN_SKIP_LAVAPIPE:-0}" = 1 ] && { log "WGNN_SKIP_LAVAPIPE=1: not checking lavapipe"; return 0; }
  vulkan_ok && return 0
  local cur; cur="$(mesa_version)"
  log "lavapipe >= $MESA_MIN needed (mesa-vulkan-drivers: ${cur:-not installed})"
  is_root || die "Vulkan driver missing or too old: install mesa-vulkan-drivers >= $MESA_MIN and libvulkan1 (on Debian 12 from bookworm-backports) as root, or set WGNN_SKIP_LAVAPIPE=1 on a machine with a GPU driver"
  local codename; codename="$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")"
  if [ "$codename" = bookworm ]; then
    [ -f "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
    local S="$DEPS/apt-bookworm"
    mkdir -p "$S/lists/partial" "$S/cache/archives/partial"
    cat > "$S/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR bookworm main
deb [signed-by=$KEYRING] $MIRROR bookworm-updates main
deb [signed-by=$KEYRING] $MIRROR bookworm-backports main
deb [signed-by=$KEYRING] http://deb.debian.org/debian-security bookworm-security main
EOF
    local O=(-o "Dir::Etc::SourceList=$S/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$S/lists" -o "Dir::Cache=$S/cache" -o APT::Sandbox::User=root)
    log "apt-get update (private list: bookworm, bookworm-updates, bookworm-backports)"
    apt-get "${O[@]}" update -qq >&2 ||
      die "apt-get update with the bookworm-backports list failed (is the Debian archive reachable?)"
    log "apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1"
    DEBIAN_FRONTEND=noninteractive apt-get "${O[@]}" install -y -qq -t bookworm-backports \
      mesa-vulkan-drivers libvulkan1 >&2 ||
      die "installing mesa-vulkan-drivers from bookworm-backports failed (see apt's message above)"
    apt-get "${O[@]}" clean || true
  else
    sys_apt_install mesa-vulkan-drivers libvulkan1
  fi
  vulkan_ok || die "lavapipe still unusable: mesa-vulkan-drivers is '$(mesa_version)' (Dawn needs >= $MESA_MIN), or lvp_icd.json / libvulkan.so.1 is missing; install a newer Mesa, or set WGNN_SKIP_LAVAPIPE=1 on a machine with a GPU driver"
  log "lavapipe: mesa-vulkan-drivers $(mesa_version)"
}

# ------------------------------------------------------------- Dawn library
dawn_lib() {
  local tgz="$DL/$NPM_PKG-$NPM_VER.tgz"
  if [ -f "$tgz" ] && [ "$(sha256 "$tgz")" = "$NPM_SHA" ]; then
    log "$NPM_PKG@$NPM_VER: already downloaded"
  else
    rm -f "$tgz"
    log "npm pack $NPM_PKG@$NPM_VER"
    (cd "$DL" && npm_config_cache="$DEPS/npm-cache" npm_config_update_notifier=false \
       npm pack "$NPM_PKG@$NPM_VER" --pack-destination "$DL" --no-audit --no-fund --loglevel=error >/dev/null) ||
      die "npm pack $NPM_PKG@$NPM_VER failed (is the npm registry reachable?)"
    [ -f "$tgz" ] || die "npm pack $NPM_PKG@$NPM_VER did not produce $tgz"
    local got; got="$(sha256 "$tgz")"
    if [ "$got" != "$NPM_SHA" ]; then
      rm -f "$tgz"
      die "sha256 of $NPM_PKG-$NPM_VER.tgz is $got, expected $NPM_SHA (corrupt download or republished package; deleted it)"
    fi
  fi
  local t="$TMP/lib"; mkdir -p "$t"
  tar -xzf "$tgz" -C "$t" package/libwebgpu_wrapper.so ||
    die "extracting package/libwebgpu_wrapper.so from $tgz failed"
  chmod 755 "$t/package/libwebgpu_wrapper.so"
  mkdir -p "$DAWN/lib"
  mv -f "$t/package/libwebgpu_wrapper.so" "$DAWN/lib/libwebgpu_wrapper.so"
  LIB_SHA="$(sha256 "$DAWN/lib/libwebgpu_wrapper.so")"
  log "installed deps/dawn/lib/libwebgpu_wrapper.so"
}

# ------------------------------------------------------------- Dawn headers
find_deb() {   # version -> path of an already downloaded .deb for it, if any
  local f
  for f in "$DL/${DEB_PKG}"_*.deb; do
    [ -f "$f" ] || continue
    [ "$(dpkg-deb -f "$f" Version 2>/dev/null)" = "$1" ] && { echo "$f"; return 0; }
  done
  return 1
}

dawn_headers() {
  local deb="" ver="$DEB_VER" pinned=1
  if deb="$(find_deb "$DEB_VER")" && [ "$(sha256 "$deb")" = "$DEB_SHA" ]; then
    log "$DEB_PKG $DEB_VER: already downloaded"
  else
    [ -z "$deb" ] || rm -f "$deb"
    [ -f "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
    local S="$DEPS/apt-unstable"
    mkdir -p "$S/lists/partial" "$S/cache/archives/partial"
    echo "deb [signed-by=$KEYRING] $MIRROR unstable main" > "$S/sources.list"
    local O=(-o "Dir::Etc::SourceList=$S/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$S/lists" -o "Dir::Cache=$S/cache" -o Debug::NoLocking=1
             -o APT::Sandbox::User=root)
    log "apt-get update (private list: Debian unstable, for $DEB_PKG)"
    apt-get "${O[@]}" update -qq >&2 ||
      die "apt-get update with Debian unstable's list failed (is the Debian archive reachable?)"
    if ! apt-cache "${O[@]}" madison "$DEB_PKG" | awk -F'|' '{gsub(/ /,"",$2); print $2}' |
         grep -Fx -- "$DEB_VER" >/dev/null; then
      ver="$(apt-cache "${O[@]}" policy "$DEB_PKG" | sed -n 's/^ *Candidate: *//p')"
      [ -n "$ver" ] && [ "$ver" != "(none)" ] || die "$DEB_PKG is not in Debian unstable's index"
      pinned=0
      log "WARNING: $DEB_PKG $DEB_VER is gone from Debian unstable; using the current version $ver (no sha256 pin)"
      deb="$(find_deb "$ver")" || deb=""
    fi
    if [ -z "$deb" ] || [ "$pinned" = 1 ]; then
      local t="$TMP/deb"; mkdir -p "$t"
      log "apt-get download $DEB_PKG=$ver"
      (cd "$t" && apt-get "${O[@]}" download -qq "$DEB_PKG=$ver" >&2) ||
        die "apt-get download $DEB_PKG=$ver failed (is the Debian archive reachable?)"
      local f; f="$(compgen -G "$t/*.deb" | head -n1)" || true
      [ -n "$f" ] || die "apt-get download $DEB_PKG=$ver produced no .deb"
      if [ "$pinned" = 1 ] && [ "$(sha256 "$f")" != "$DEB_SHA" ]; then
        die "sha256 of $DEB_PKG $DEB_VER is $(sha256 "$f"), expected $DEB_SHA"
      fi
      deb="$DL/$(basename "$f")"
      mv -f "$f" "$deb"
    fi
  fi
  local t="$TMP/hdr"; mkdir -p "$t"
  dpkg-deb -x "$deb" "$t/x" || die "dpkg-deb -x $deb failed"
  [ -f "$t/x/usr/include/webgpu/webgpu.h" ] || die "$deb has no usr/include/webgpu/webgpu.h"
  mkdir -p "$t/include" "$DAWN"
  cp -a "$t/x/usr/include/webgpu" "$t/include/"
  [ ! -d "$t/x/usr/include/dawn" ] || cp -a "$t/x/usr/include/dawn" "$t/include/"
  rm -rf "$DAWN/include.old"
  [ ! -e "$DAWN/include" ] || mv "$DAWN/include" "$DAWN/include.old"
  mv "$t/include" "$DAWN/include"
  rm -rf "$DAWN/include.old"
  DEB_USED="$ver"; DEB_USED_SHA="$(sha256 "$deb")"; DEB_PINNED="$pinned"
  log "installed deps/dawn/include (webgpu/, dawn/) from $DEB_PKG $ver"
}

# -------------------------------------------------------------------- main
check_tools
ensure_vulkan

STAMP="$DEPS/.setup-ok-$(sha256 "$SELF")"
if [ -f "$STAMP" ] && [ -f "$DAWN/lib/libwebgpu_wrapper.so" ] &&
   [ -f "$DAWN/include/webgpu/webgpu.h" ] && [ -f "$DAWN/VERSIONS" ]; then
  log "up to date (deps/dawn)"
  exit 0
fi

dawn_lib
dawn_headers

{
  echo "# written by scripts/setup.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "dawn-lib      npm $NPM_PKG@$NPM_VER  tgz-sha256=$NPM_SHA"
  echo "              lib/libwebgpu_wrapper.so sha256=$LIB_SHA"
  echo "dawn-headers  deb $DEB_PKG=$DEB_USED  sha256=$DEB_USED_SHA  $([ "$DEB_PINNED" = 1 ] && echo pinned || echo "NOT the pinned $DEB_VER")"
  echo "mesa-vulkan-drivers $(mesa_version || true)"
  echo "libvulkan1          $(dpkg-query -W -f='${Version}' libvulkan1 2>/dev/null || echo '?')"
} > "$DAWN/VERSIONS.tmp"
mv -f "$DAWN/VERSIONS.tmp" "$DAWN/VERSIONS"

rm -f "$DEPS"/.setup-ok-*
touch "$STAMP"
log "done (deps/dawn/VERSIONS)"
