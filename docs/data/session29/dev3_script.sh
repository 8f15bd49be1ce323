#!/usr/bin/env bash
# Session 29 call 3: call 2's whole-K tiles for fc1 at batch 1 with two
# staging buffers and one barrier a K tile (WGNN_GEMM_DB=1), and the
# default's tile with it.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
FC1="addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu"
for r in 1 2; do
  op_env "fc1" -- $FC1
  op_env "fc1" WGNN_GEMM_DB=1 -- $FC1
  for t in 8x16x8x8x8 8x16x8x8x16 16x8x8x8x8 8x8x8x8x8 8x16x8x4x16 16x4x8x4x16 16x4x8x4x8; do
    op_env "fc1" WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 WGNN_GEMM_DB=1 -- $FC1
  done
  op_env "fc1" WGNN_GEMM_TILE=8x16x8x8x8 WGNN_GEMM_SPLIT=2 WGNN_GEMM_KW=1 WGNN_GEMM_DB=1 -- $FC1
done
