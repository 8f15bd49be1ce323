#!/usr/bin/env bash
# Session 12, call 11: the P.V loop's unroll on its own (WGNN_FUSED_FLAGS
# 'cN'; the build's default is now twice the score loop's), further than 2u,
# and the new default checked against the CPU reference. Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh # sdpa_env
for round in 1 2; do
  for s in 1,12,4096,4096,64 1,16,16384,16384,64; do
    sdpa_env default -- $s
    sdpa_env c4 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu4c4 -- $s
    sdpa_env c16 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu4c16 -- $s
    sdpa_env c32 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu4c32 -- $s
  done
  s=4,16,4096,4096,128
  sdpa_env default -- $s
  sdpa_env c8 WGNN_FUSED_TILE=16x16x2x2 WGNN_FUSED_FLAGS=glqu8c8 -- $s
  sdpa_env c32 WGNN_FUSED_TILE=16x16x2x2 WGNN_FUSED_FLAGS=glqu8c32 -- $s
done
for D in 64 128; do
  echo "check D=$D: $(build/wgnn bench sdpa --shape 1,3,1030,1500,$D --mask --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
  echo "check D=$D f16: $(build/wgnn bench sdpa --shape 1,3,1500,1030,$D --f16 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
done
