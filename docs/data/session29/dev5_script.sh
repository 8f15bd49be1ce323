#!/usr/bin/env bash
# Session 29 call 5: the landed build (pd.patch reverted) on the same
# measures as call 4, to tell the refactor's cost from the host's: ViT-B/16's
# products at M = 197, the encoders at batch 1, the registers of fc1's
# kernels; and PyTorch's ViT-B/16 forward at batch 32 in a CUDA graph (its
# line did not print in call 1).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -2
FC1="addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu"
vit_products 197
op_env "fc1" WGNN_GEMM_TILE=8x16x8x8x8 WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 -- $FC1
for r in 1 2; do ITERS=50 enc_run "r$r landed" vit_b16 1; done
ITERS=50 enc_run "r1 landed" siglip_b16 1
bash bench/kernel_stats/kstat.sh -- bench op $FC1 --iters 1 --warmup 0 2>&1 | grep -E '\| gemm' | head -3
WGNN_GEMM_TILE=8x16x8x8x8 WGNN_GEMM_SPLIT=1 WGNN_GEMM_KW=1 bash bench/kernel_stats/kstat.sh -- bench op $FC1 --iters 1 --warmup 0 2>&1 | grep -E '\| gemm' | head -3
python3 bench/torch_graph_encoder.py $w/vit_b16 32 --iters 20 2>&1 | grep -E "^torch CUDA graph"
