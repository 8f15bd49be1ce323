#!/usr/bin/env bash
# Session 24 call 9: fc1's product at batch 32 with a float16 B [k, n]
# (addmm, 6304 x 3072 x 768, bias, GELU; the f16 encoders' route since
# cfaddee) on other tiles and staging (WGNN_GEMM_TILE, WGNN_GEMM_DB),
# against linear with the f16 weight [n, k] (the route before), two rounds.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
A=(addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f16:768,3072 --arg activation=gelu)
for round in 1 2; do
  op_env "r$round linear [n,k]" -- linear --in-shape f32:6304,768 --in-shape f16:3072,768 --in-shape f32:3072 --arg activation=gelu
  op_env "r$round addmm" -- "${A[@]}"
  op_env "r$round addmm" WGNN_GEMM_DB=0 -- "${A[@]}"
  for t in 16x16x8x8x16 16x16x8x8x4 16x16x8x4x16 16x16x8x4x8 16x16x4x8x8; do
    op_env "r$round addmm" WGNN_GEMM_TILE=$t -- "${A[@]}"
  done
done
