#!/usr/bin/env bash
# scripts/fetch-gl-loaders.sh: download (never install) the Vulkan/GL loader
# .debs that a GPU machine lacking them needs (and cJSON, PCRE2 and utf8proc, which the library links), into the git-ignored .gl/ folder
# of the repo root. Idempotent: does nothing when all of them are there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PKGS=(libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 libcjson1 libpcre2-8-0 libutf8proc2)
missing=0
for p in "${PKGS[@]}"; do compgen -G ".gl/${p}_*.deb" >/dev/null || missing=1; done
if [ "$missing" = 0 ]; then echo "fetch-gl-loaders: .gl/ already has all ${#PKGS[@]} .debs" >&2; exit 0; fi

mkdir -p .gl /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
# shellcheck disable=SC2086
apt-get $o update ||
  { echo "fetch-gl-loaders: apt-get update failed (is the Debian archive reachable?)" >&2; exit 1; }
# shellcheck disable=SC2086
(cd .gl && apt-get $o download "${PKGS[@]}") ||
  { echo "fetch-gl-loaders: apt-get download ${PKGS[*]} failed" >&2; exit 1; }
ls -1 .gl >&2
