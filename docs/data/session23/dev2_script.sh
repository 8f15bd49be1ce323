#!/usr/bin/env bash
# Session 23 call 2: call 1 found more key splits faster for ViT-B/16's
# attention in the graph (1 split 2.258-2.265 ms span, 2: 2.210-2.221,
# 3: 2.184-2.196, 4 (the default): 2.167-2.180 on an H100): more splits
# (5, 7, 13), and tiles of 128 threads or 8-key tiles at the default's 32
# rows. enc_run lines (synchronous call, pipelined, GPU span, check against
# PyTorch), two rounds, then the attention alone (bench sdpa).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 2>&1 | grep -v "Writing model" | tail -2
V=("default" "s5:WGNN_FUSED_SPLIT=6" "s7:WGNN_FUSED_SPLIT=7" "s13:WGNN_FUSED_SPLIT=13"
   "t8x16x1x1:WGNN_FUSED_TILE=8x16x1x1" "t8x16x1x1s7:WGNN_FUSED_TILE=8x16x1x1:WGNN_FUSED_SPLIT=7"
   "t8x8x1x1:WGNN_FUSED_TILE=8x8x1x1" "t8x8x1x1s13:WGNN_FUSED_TILE=8x8x1x1:WGNN_FUSED_SPLIT=13"
   "t8x8x1x1s25:WGNN_FUSED_TILE=8x8x1x1:WGNN_FUSED_SPLIT=25" "t16x8x2x1s7:WGNN_FUSED_TILE=16x8x2x1:WGNN_FUSED_SPLIT=7"
   "t8x4x4x1s7:WGNN_FUSED_TILE=8x4x4x1:WGNN_FUSED_SPLIT=7")
for round in 1 2; do
  for v in "${V[@]}"; do
    IFS=: read -r -a a <<<"$v"
    ITERS=50 enc_run "r$round ${a[0]}" vit_b16 1 "${a[@]:1}"
  done
done
for v in default "s7:WGNN_FUSED_SPLIT=7" "s13:WGNN_FUSED_SPLIT=13"; do
  IFS=: read -r -a a <<<"$v"
  ITERS=50 enc_run "${a[0]}" siglip_b16 1 "${a[@]:1}"
done
echo "== sdpa alone (bench sdpa, qkv separate)"
for v in "${V[@]}"; do
  IFS=: read -r -a a <<<"$v"
  sdpa_env "${a[0]}" "${a[@]:1}" -- 1,12,197,197,64
done
