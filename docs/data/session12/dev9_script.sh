#!/usr/bin/env bash
# Session 12, call 9: where the new long-sequence tiles' time goes (issue
# 11), as the issue's first measurements did for the old tile: builds of
# e250c99 with the score loop removed (build/h_noqk), the P.V loop removed
# (build/h_nopv), or the exponentials removed (build/h_noexp: p = s - m,
# alpha = 1). Wrong outputs: timing only. Registers from build/kstat.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
for round in 1 2; do
  for b in build/wgnn build/h_noqk/wgnn build/h_nopv/wgnn build/h_noexp/wgnn; do
    for s in 1,12,4096,4096,64 4,16,4096,4096,128; do
      it=20; case $s in 4,16*) it=5 ;; esac
      d=$OUT/dump_$(basename $(dirname $b))_$s; rm -rf $d
      line=$(WGNN_DUMP_SHADERS=$d $b bench sdpa --shape $s --impl auto --iters $it --warmup 2 2>&1 | tail -1 | sed 's/ timer=.*//')
      regs=$(build/kstat $d 2>/dev/null | grep sdpa_fused | head -1)
      echo "$b round $round: $line | $regs"
    done
  done
done
rm -rf $OUT/dump_*
