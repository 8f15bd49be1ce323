#!/usr/bin/env bash
# Session 26 call 1: sdpa_fused_kt (K transposed, K and V from global memory,
# two barriers a tile) against the landed fused kernel, and registers.
. bench/h200_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|wgnn:.*' | tr '\n' ' '; echo; }
for sh in 1,12,4096,4096,64 1,16,16384,16384,64; do
  for round in 1 2; do
    run $B bench sdpa --shape $sh --impl fused --iters 20
    for kt in 8,2,4,4 8,2,4,16 8,2,4,8,q 8,2,4,8,qd 8,1,4,8 8,1,4,8,d 4,2,4,8; do
      WGNN_FUSED_KT=$kt run $B bench sdpa --shape $sh --impl fused --iters 20
    done
  done
done
sh=4,16,4096,4096,128
for round in 1 2; do
  run $B bench sdpa --shape $sh --impl fused --iters 10
  for kt in 8,1,4,8 8,1,4,8,qd 4,2,4,8 16,1,4,8,q; do WGNN_FUSED_KT=$kt run $B bench sdpa --shape $sh --impl fused --iters 10; done
done
for kt in 8,2,4,4 8,2,4,8,qd 8,1,4,8,d; do
  WGNN_FUSED_KT=$kt run $B bench sdpa --shape 1,4,1030,1100,64 --impl fused --iters 1 --check
  WGNN_FUSED_KT=$kt run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check --f16
done
for kt in 8,2,4,4 8,2,4,8,qd 8,1,4,8; do
  echo "== kstat $kt D=64"; WGNN_FUSED_KT=$kt bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,12,4096,4096,64 --impl fused --iters 1 2>&1 | grep -v "^(dumps" | head -12
done
echo "== kstat 8,1,4,8 D=128"; WGNN_FUSED_KT=8,1,4,8 bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 1 2>&1 | grep -v "^(dumps" | head -12
