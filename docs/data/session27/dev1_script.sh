#!/usr/bin/env bash
# Session 27 call 1: register-saving variants of the two long-sequence fused
# kernels, with their register counts. sdpa_fused_vh (D = 128), 5th field
# of WGNN_FUSED_VH (VF bits): 1 V loaded after the score loop (not held in
# registers across it), 2 lazy rescale (skip o *= alpha when alpha == 1),
# 4 K straight into workgroup memory (no prefetch registers). sdpa_fused
# (D = 64's default LEAN tile), WGNN_FUSED_EXP bits: 1 V after the scores,
# 2 lazy rescale. Plus session 26's vh ctests on the GPU.
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( cd build && WGNN_FUSED_VH=8,2,4,8 timeout 60 ./test_sdpa 15 vh 2>&1 | tail -1 )
( cd build && timeout 60 ./test_sdpa 15 vh 2>&1 | tail -1 )
( cd build && WGNN_FUSED_VH=8,2,4,8 timeout 60 ./test_ops sdpa_qkvpacked 2>&1 | tail -1 )
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
for vf in 0 1 2 4 5; do
  echo "== kstat vh $vf"; WGNN_FUSED_VH=8,2,4,8,$vf timeout 30 bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,4,4096,4096,128 --impl fused --iters 1 2>&1 | grep "sdpa_fused"
done
for e in 0 1; do
  echo "== kstat d64 exp $e"; WGNN_FUSED_EXP=$e timeout 30 bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,4,4096,4096,64 --impl fused --iters 1 2>&1 | grep "sdpa_fused"
done
for vf in 1 2 4 5 7; do
  WGNN_FUSED_VH=8,2,4,8,$vf run $B bench sdpa --shape 1,4,1030,1100,128 --impl fused --iters 1 --check
done
for e in 1 3; do WGNN_FUSED_EXP=$e run $B bench sdpa --shape 1,4,1030,1100,64 --impl fused --iters 1 --check; done
for round in 1 2; do
  run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10
  for vf in 1 2 3 4 5 7; do
    WGNN_FUSED_VH=8,2,4,8,$vf run $B bench sdpa --shape 4,16,4096,4096,128 --impl fused --iters 10
  done
  for e in 0 1 2 3; do
    WGNN_FUSED_EXP=$e run $B bench sdpa --shape 1,12,4096,4096,64 --impl fused --iters 20
  done
done
for e in 0 1 3; do
  WGNN_FUSED_EXP=$e run $B bench sdpa --shape 1,16,16384,16384,64 --impl fused --iters 5
done
