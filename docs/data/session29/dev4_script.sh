#!/usr/bin/env bash
# Session 29 call 4: gemm.wgsl loading K tiles two ahead into registers
# (WGNN_GEMM_PD=2, two named register sets) against one ahead (the default,
# PD=1), same build: fc1 at batch 1 on the default plan and on whole-K
# tiles (call 2's), ViT-B/16's four block products at M = 197 and 6304,
# the encoders at batch 1 (two rounds), and the registers.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -2
FC1="addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu"
for pd in 1 2; do
  for t in 8x16x8x8x8 16x8x8x8x8 8x8x8x8x8 16x4x8x4x16 16x4x8x4x8 8x16x8x4x16; do
    op_env "fc1" WGNN_GEMM_PD=$pd WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 -- $FC1
  done
done
for r in 1 2; do
  for pd in 1 2; do vit_products 197 WGNN_GEMM_PD=$pd; done
done
for pd in 1 2; do vit_products 6304 WGNN_GEMM_PD=$pd; done
for r in 1 2; do
  for m in vit_b16 siglip_b16; do
    for pd in 1 2; do ITERS=50 enc_run "r$r pd$pd" $m 1 WGNN_GEMM_PD=$pd; done
  done
done
op_env "fc1chk" WGNN_GEMM_PD=2 WGNN_GEMM_TILE=8x16x8x8x8 WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 -- $FC1 --check
op_env "fc2chk" WGNN_GEMM_PD=2 -- addmm --in-shape f32:768 --in-shape f32:197,3072 --in-shape f32:3072,768 --in-shape f32:197,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true --check
for pd in 1 2; do
  echo "== kstat PD=$pd"
  WGNN_GEMM_PD=$pd bash bench/kernel_stats/kstat.sh -- bench op $FC1 --iters 1 --warmup 0 2>&1 | grep -i -E 'gemm|regist' | head -6
  WGNN_GEMM_PD=$pd WGNN_GEMM_TILE=8x16x8x8x8 WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 bash bench/kernel_stats/kstat.sh -- bench op $FC1 --iters 1 --warmup 0 2>&1 | grep -i -E 'gemm|regist' | head -6
done
