#!/usr/bin/env bash
# Session 27 call 2: sdpa_fused_vh with V after the scores and K straight
# into workgroup memory (VF = 5: 174 registers in call 1, two workgroups an
# SM; 168 would give three) at smaller unrolls, registers and times; then
# the state of issues 9 and 11 (state_script.sh: bench/h200_state.sh
# without the decoders), PyTorch in the same call.
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
for v in 8,2,2,8,5 8,2,1,8,5 8,2,4,4,5 8,2,2,4,5 8,2,1,4,5 8,2,2,8,4 8,2,2,8,1 8,2,2,8,0; do
  echo "== kstat vh $v"; WGNN_FUSED_VH=$v timeout 30 bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,4,4096,4096,128 --impl fused --iters 1 2>&1 | grep "sdpa_fused" | cut -d'|' -f5-8
done
for round in 1 2; do
  run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10
  for v in 8,2,2,8,5 8,2,1,8,5 8,2,4,4,5 8,2,2,4,5 8,2,1,4,5 8,2,2,8,4 8,2,2,8,1; do
    WGNN_FUSED_VH=$v run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10
  done
done
bash docs/data/session27/state_script.sh
