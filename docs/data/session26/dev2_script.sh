#!/usr/bin/env bash
# Session 26 call 2: sdpa_fused_vh (Q resident in workgroup memory for 64
# rows, K tile of 32 keys, V staged in two halves of D beside P; six
# barriers a tile) against the landed D = 128 tile (Q read through L1).
. bench/h200_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
sh=4,16,4096,4096,128
for round in 1 2; do
  run $B bench sdpa --shape $sh --impl fused --iters 10
  for vh in 8,2,4,8 8,2,4,16 8,2,8,16 8,2,2,8 8,1,4,8 16,1,4,8 16,1,4,16; do
    WGNN_FUSED_VH=$vh run $B bench sdpa --shape $sh --impl fused --iters 10
  done
done
for vh in 8,2,4,8 16,1,4,8; do
  WGNN_FUSED_VH=$vh run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check
  WGNN_FUSED_VH=$vh run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check --f16
done
for vh in 8,2,4,8 8,2,8,16 16,1,4,8; do
  echo "== kstat $vh"; WGNN_FUSED_VH=$vh bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,4,4096,4096,128 --impl fused --iters 1 2>&1 | grep "sdpa_fused"
done
