#!/usr/bin/env bash
# Registers, code size and shared memory of every pipeline a wgnn command
# builds, as the Vulkan driver's compiler reports them. From the repo root
# (on the H200 device: after `. bench/h200_env.sh`, build carried):
#
#   bash bench/kernel_stats/kstat.sh [-o DIR] [--robust] [--ir] -- bench sdpa --shape 1,12,4096,4096,64 --iters 1
#
# runs `WGNN_DUMP_SHADERS=DIR build/wgnn ARGS` (Dawn's WGSL and SPIR-V per
# pipeline into DIR, src/gpu/shader_dump.c), then build/kstat DIR (each
# module compiled again by the driver with statistics capture), and prints a
# table (bench/kernel_stats/summary.py). DIR keeps wgnn.out, kstat.tsv (every
# statistic) and the dumps; default: a fresh folder under ${TMPDIR:-/tmp}.
# Exit 3: the driver reports no statistics (lavapipe); the dumps were still
# assembled and built. WGNN and KSTAT override build/wgnn and build/kstat.
# --ir: also the driver's internal representations of each pipeline, in DIR/ir.
set -u
cd "$(dirname "$0")/../.."
dir="" kargs=() ir=0
while [ $# -gt 0 ]; do
  case $1 in
    -o) dir=$2; shift 2 ;;
    --robust) kargs+=(--robust); shift ;;
    --ir) ir=1; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
W=${WGNN:-./build/wgnn} K=${KSTAT:-./build/kstat}
[ -x "$K" ] || { echo "kstat.sh: $K missing (needs libvulkan-dev at build time: scripts/setup.sh, then make)" >&2; exit 1; }
[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/wgnn-kstat.XXXXXX")
rm -rf "$dir" && mkdir -p "$dir"
[ $ir = 0 ] || { mkdir -p "$dir/ir" && kargs+=(--ir "$dir/ir"); }
WGNN_DUMP_SHADERS="$dir" "$W" "$@" > "$dir/wgnn.out" 2>&1
wrc=$?
[ $wrc = 0 ] || { echo "kstat.sh: wgnn $* failed ($wrc):" >&2; tail -5 "$dir/wgnn.out" >&2; }
# Dawn's library holds the SPIR-V assembler kstat loads
LD_LIBRARY_PATH=$PWD/deps/dawn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$K" ${kargs[@]+"${kargs[@]}"} "$dir" > "$dir/kstat.tsv" 2> "$dir/kstat.err"
krc=$?
grep '^# ' "$dir/kstat.tsv" | grep -v '^# seq'
[ -s "$dir/kstat.err" ] && cat "$dir/kstat.err" >&2
python3 bench/kernel_stats/summary.py "$dir/kstat.tsv"
echo "(dumps and every statistic: $dir)"
[ $wrc = 0 ] || exit 1
exit $krc
