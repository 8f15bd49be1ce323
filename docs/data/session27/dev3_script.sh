#!/usr/bin/env bash
# Session 27 call 3: where the long-sequence fused kernels' time goes, by
# leaving parts out (timing only: those outputs are wrong). sdpa_fused (D = 64's
# default tile), WGNN_FUSED_EXP: 4 no barriers in the key loop, 8 no exp2 of
# the scores. sdpa_fused_vh (D = 128), 5th field of WGNN_FUSED_VH: 8 no
# barriers, 16 no exp2, 32 no score loop, 64 no P.V. Then VF 128: 48 query
# rows (TY = 6) with V whole beside P, one P.V pass and four barriers a
# tile (three 96-thread workgroups an SM at <= 224 registers), against 48
# rows with the two halves (6,2,4,8,0) and the default (8,2,4,8,0).
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
for v in 6,2,4,8,128 6,2,4,8,0 6,2,4,8,129 6,2,2,8,128 6,2,4,4,128; do
  echo "== kstat vh $v"; WGNN_FUSED_VH=$v timeout 30 bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,4,4096,4096,128 --impl fused --iters 1 2>&1 | grep "sdpa_fused" | cut -d'|' -f3,5-8
done
for v in 6,2,4,8,128 6,2,4,8,129; do
  WGNN_FUSED_VH=$v run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check
  WGNN_FUSED_VH=$v run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check --f16
done
for round in 1 2; do
  for v in 8,2,4,8,0 6,2,4,8,0 6,2,4,8,128 6,2,4,8,129 6,2,2,8,128 6,2,4,4,128 6,2,4,16,128; do
    WGNN_FUSED_VH=$v run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10
  done
done
for round in 1 2; do
  for e in 0 4 8 12; do
    WGNN_FUSED_EXP=$e run $B bench sdpa --shape 1,12,4096,4096,64 --impl fused --iters 20
  done
  for v in 0 8 16 24 32 64 96 120; do
    WGNN_FUSED_VH=8,2,4,8,$v run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10
  done
done
