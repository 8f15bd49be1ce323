#!/usr/bin/env bash
# Session 29 call 2: fc1 at batch 1 (197 x 3072 x 768, bias and GELU) on
# whole-K tiles of 128 x 64 and kin (cuBLAS runs its 128 x 64 x 8 tile there,
# 96 blocks, no split: 40.6 us in call 1 against wgnn's 51.3), no K slices
# or K groups; then the same tiles for q|k|v.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
FC1="addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu"
QKV="addmm --in-shape f32:2304 --in-shape f32:197,768 --in-shape f32:768,2304"
for r in 1 2; do
  op_env "fc1" -- $FC1
  for t in 8x16x8x8x8 8x16x8x8x16 16x8x8x8x8 16x8x8x8x16 8x8x8x8x8 8x8x8x8x16 16x16x8x8x8 16x16x8x8x16 8x16x8x4x16 8x32x4x8x8 16x4x8x4x16; do
    op_env "fc1" WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 -- $FC1
  done
  for t in 8x16x8x8x8 8x16x8x8x16; do
    op_env "fc1" WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=2 WGNN_GEMM_KW=1 -- $FC1
    op_env "fc1" WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=2 -- $FC1
  done
done
op_env "qkv" -- $QKV
for t in 8x16x8x8x8 8x16x8x8x16 8x8x8x8x16; do
  op_env "qkv" WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 -- $QKV
done
op_env "fc1chk" WGNN_GEMM_TILE=8x16x8x8x8 WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 -- $FC1 --check
