#!/usr/bin/env bash
# Session 27 call 6: sdpa_fused_vh with sQ's and sP's vec4 index XORed by the
# thread row's parity (5th field of WGNN_FUSED_VH, SW: 1 sQ, 2 sP), so the
# two thread rows of a warp read different banks; the XOR is folded into
# the unrolled step (j0 + (ju ^ parity)), not done a load as session 26's
# variant did. Registers, --check, and two rounds of times.
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
for v in 8,2,4,8,0 8,2,4,8,1 8,2,4,8,2 8,2,4,8,3; do
  echo "== kstat vh $v"; WGNN_FUSED_VH=$v timeout 30 bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,4,4096,4096,128 --impl fused --iters 1 2>&1 | grep "sdpa_fused" | cut -d'|' -f3,5-8
done
for v in 8,2,4,8,3; do
  WGNN_FUSED_VH=$v run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check
  WGNN_FUSED_VH=$v run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check --f16
done
( cd build && WGNN_FUSED_VH=8,2,4,8,3 timeout 60 ./test_sdpa 15 vh 2>&1 | tail -1 )
for round in 1 2; do
  for v in 8,2,4,8,0 8,2,4,8,1 8,2,4,8,2 8,2,4,8,3 8,2,8,16,3; do
    WGNN_FUSED_VH=$v run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10
  done
done
for v in 8,2,4,8,0 8,2,4,8,3; do
  WGNN_FUSED_VH=$v run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10 --f16
  WGNN_FUSED_VH=$v run $B bench sdpa --shape 1,16,8192,8192,128 --impl fused --iters 5
done
