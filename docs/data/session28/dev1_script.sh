#!/usr/bin/env bash
# Session 28 call 1: key groups in sdpa_fused (KG: the split-KV's key
# splits as thread groups of one workgroup, no reduce dispatch) at ViT's
# sequence, against the split + reduce (WGNN_FUSED_KG=0), the attention
# alone and inside ViT-B/16 / SigLIP-B/16 at batch 1.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -2
KGDBG=1 ./build/wgnn bench sdpa --shape 1,12,197,197,64 --impl auto --iters 2 --warmup 1 2>&1 | grep ^kg | head -1
./build/wgnn bench sdpa --shape 1,12,197,197,64 --impl auto --check --iters 20 2>&1 | tail -2
for r in 1 2; do
  for kg in -1 0 2 3 4; do sdpa_env "r$r KG=$kg" WGNN_FUSED_KG=$kg -- 1,12,197,197,64; done
  for t in 4x16x2x1 4x8x2x1 8x16x2x1 8x8x1x1; do
    for kg in 0 2 4; do sdpa_env "r$r $t KG=$kg" WGNN_FUSED_TILE=$t WGNN_FUSED_FLAGS=g WGNN_FUSED_KG=$kg -- 1,12,197,197,64; done
  done
done
for r in 1 2; do
  for m in vit_b16 siglip_b16; do
    ITERS=50 enc_run "r$r default" $m 1
    ITERS=50 enc_run "r$r KG=0" $m 1 WGNN_FUSED_KG=0
  done
done
