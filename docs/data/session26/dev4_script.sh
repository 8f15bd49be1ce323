#!/usr/bin/env bash
# Session 26 call 4: sdpa_fused_vh's unrolls (JU score loop, CU P.V loop)
# at 8x16, RG 2 (call 3's best), float32 and float16, against the landed tile.
. bench/h200_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
sh=4,16,4096,4096,128
for round in 1 2; do
  run $B bench sdpa --shape $sh --impl fused --iters 10
  for vh in 8,2,4,8 8,2,4,4 8,2,4,16 8,2,4,32 8,2,2,8 8,2,2,16 8,2,1,8; do
    WGNN_FUSED_VH=$vh run $B bench sdpa --shape $sh --impl fused --iters 10
  done
done
run $B bench sdpa --shape $sh --impl fused --iters 10 --f16
WGNN_FUSED_VH=8,2,4,8 run $B bench sdpa --shape $sh --impl fused --iters 10 --f16
run $B bench sdpa --shape 1,16,8192,8192,128 --impl fused --iters 5
WGNN_FUSED_VH=8,2,4,8 run $B bench sdpa --shape 1,16,8192,8192,128 --impl fused --iters 5
run $B bench sdpa --shape 1,16,1024,1024,128 --impl fused --iters 20
WGNN_FUSED_VH=8,2,4,8 run $B bench sdpa --shape 1,16,1024,1024,128 --impl fused --iters 20
