#!/usr/bin/env bash
# Session 24 call 11: ViT-B/16's fc2 and out projection at batch 32 (6304
# rows, residual and LayerNorm in the reduce) with forced K slices
# (WGNN_GEMM_SPLIT) and without wave plans (WGNN_GEMM_WAVES=0), against the
# planner's choice; two rounds. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F2=(addmm --in-shape f32:768 --in-shape f32:6304,3072 --in-shape f32:3072,768 --in-shape f32:6304,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true)
OU=(addmm --in-shape f32:768 --in-shape f32:6304,768 --in-shape f32:768,768 --in-shape f32:6304,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true)
for round in 1 2; do
  op_env "r$round fc2" -- "${F2[@]}"
  for v in WGNN_GEMM_WAVES=0 WGNN_GEMM_SPLIT=2 WGNN_GEMM_SPLIT=3 WGNN_GEMM_SPLIT=4 WGNN_GEMM_SPLIT=6; do op_env "r$round fc2" $v -- "${F2[@]}"; done
  op_env "r$round out" -- "${OU[@]}"
  for v in WGNN_GEMM_WAVES=0 WGNN_GEMM_SPLIT=1 WGNN_GEMM_SPLIT=2 WGNN_GEMM_SPLIT=3; do op_env "r$round out" $v -- "${OU[@]}"; done
done
