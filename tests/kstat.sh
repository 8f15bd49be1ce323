#!/usr/bin/env bash
# bench/kernel_stats end to end on whatever driver runs the tests: wgnn
# dumps its pipelines (WGNN_DUMP_SHADERS), kstat assembles and builds each
# one. lavapipe reports no statistics (exit 3): the dump, the assembly and
# the pipeline layout are still checked.
# usage: tests/kstat.sh BUILD_DIR
set -u
b=$1
d="$b/kstat-test"
out=$(WGNN="$b/wgnn" KSTAT="$b/kstat" bash "$(dirname "$0")/../bench/kernel_stats/kstat.sh" -o "$d" -- \
      bench sdpa --shape 1,2,33,40,16 --iters 1 --warmup 0 --impl fused 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || [ $rc = 3 ] || { echo "FAIL: kstat.sh exit $rc"; exit 1; }
grep -q $'\tsdpa_fused\t' "$d/kstat.tsv" || { echo "FAIL: no sdpa_fused line in $d/kstat.tsv"; exit 1; }
[ -s "$d/index.tsv" ] && ls "$d"/*_sdpa_fused.wgsl >/dev/null || { echo "FAIL: dump files missing"; exit 1; }
echo "PASS (kstat exit $rc)"
