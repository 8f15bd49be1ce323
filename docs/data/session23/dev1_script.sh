#!/usr/bin/env bash
# Session 23 call 1: where ViT-B/16's batch-1 GPU span goes, and whether its
# attention (sdpa_qkvpacked at (1,12,197,197,64), today 32-row tiles of 16
# keys in 4 key splits + the split-KV reduce: two dispatches a layer) runs
# faster in the graph with other tiles or splits (the knobs
# WGNN_FUSED_TILE / WGNN_FUSED_SPLIT; a knob-set tile is the plain kernel).
# (1) the per-node profile; (2) every variant through enc_run (synchronous
# call, pipelined, GPU span, check against PyTorch), two rounds; (3) a
# scratch build (build/skip/wgnn: this commit plus a WGNN_HACK_SKIP switch
# that leaves out the dispatches of the named ops; its outputs are wrong,
# only its times mean something) for the span without the attention / the
# products. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 2>&1 | grep -v "Writing model" | tail -2
echo "== profile (default)"
./build/wgnn run --model $w/vit_b16 --input $w/vit_b16_x1.npy --iters 20 --profile 2>&1 | grep -vE "^  encoder.layer.([1-9]|1[01])\." | head -70
V=("default" "s1:WGNN_FUSED_SPLIT=1" "s2:WGNN_FUSED_SPLIT=2" "s3:WGNN_FUSED_SPLIT=3"
   "t4x8x2x1:WGNN_FUSED_TILE=4x8x2x1" "t4x16x2x1:WGNN_FUSED_TILE=4x16x2x1" "t4x8x4x1:WGNN_FUSED_TILE=4x8x4x1"
   "t2x16x2x1:WGNN_FUSED_TILE=2x16x2x1" "t4x16x2x1s2:WGNN_FUSED_TILE=4x16x2x1:WGNN_FUSED_SPLIT=2"
   "t8x16x2x1s1:WGNN_FUSED_TILE=8x16x2x1:WGNN_FUSED_SPLIT=1" "t4x4x4x1:WGNN_FUSED_TILE=4x4x4x1")
for round in 1 2; do
  for v in "${V[@]}"; do
    IFS=: read -r -a a <<<"$v"
    ITERS=50 enc_run "r$round ${a[0]}" vit_b16 1 "${a[@]:1}"
  done
done
echo "== sdpa alone (bench sdpa, qkv separate)"
for v in "${V[@]}"; do
  IFS=: read -r -a a <<<"$v"
  sdpa_env "${a[0]}" "${a[@]:1}" -- 1,12,197,197,64
done
echo "== skip build (outputs wrong; times only)"
for round in 1 2; do
  for sk in none sdpa_qkvpacked addmm sdpa_qkvpacked,addmm; do
    echo "r$round skip $sk: $(WGNN_HACK_SKIP=$sk ./build/skip/wgnn run --model $w/vit_b16 --input $w/vit_b16_x1.npy --iters 50 --profile 2>&1 | grep -E '^input|^GPU span' | sed 's/first run (graph build + run) [0-9.]* ms;//; s/(its one compute pass.*timestamps)://' | tr '\n' ' ')"
  done
done
