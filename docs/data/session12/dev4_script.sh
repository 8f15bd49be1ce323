#!/usr/bin/env bash
# Session 12, call 4: what the fused kernel's barriers cost (issue 11).
# build/hack1/wgnn: HEAD (79d176c) with the LEAN loop's barriers "K reads
# done" and "tile end" removed (2 of 4 a key tile); build/hack2/wgnn: all 4
# removed. Their outputs are wrong (races): timing only. Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
for round in 1 2; do
  for b in build/wgnn build/hack1/wgnn build/hack2/wgnn; do
    for s in 1,12,4096,4096,64 4,16,4096,4096,128; do
      it=20; case $s in 4,16*) it=5 ;; esac
      echo "$b round $round: $($b bench sdpa --shape $s --impl auto --iters $it --warmup 2 2>&1 | tail -1)"
    done
  done
done
