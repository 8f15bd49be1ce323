#!/usr/bin/env bash
# Session 12, call 10: the LEAN loops' unrolls apart (issue 11): builds of
# HEAD with the score loop's unroll doubled (build/h_ju: JU = 2u) or the
# P.V loop's (build/h_cu: CU = 2u), u = 4 at D=64 and 8 at D=128 by
# default. Registers from build/kstat. Device tool: carry [".gl",
# "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
for round in 1 2; do
  for b in build/wgnn build/h_ju/wgnn build/h_cu/wgnn; do
    for s in 1,12,4096,4096,64 1,16,16384,16384,64 4,16,4096,4096,128; do
      it=20; case $s in 4,16*|*16384*) it=5 ;; esac
      d=$OUT/dump_$(basename $(dirname $b))_$s; rm -rf $d
      line=$(WGNN_DUMP_SHADERS=$d $b bench sdpa --shape $s --impl auto --iters $it --warmup 2 2>&1 | tail -1 | sed 's/ timer=.*//; s/ (min.*iters)//')
      regs=$(build/kstat $d 2>/dev/null | grep sdpa_fused | head -1 | grep -o "JU=[0-9]* CU=[0-9]*\|Register Count=[0-9]*" | tr "\n" " ")
      echo "$b round $round: $line | $regs"
    done
  done
done
rm -rf $OUT/dump_*
