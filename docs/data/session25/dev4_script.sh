#!/usr/bin/env bash
# Session 25 call 4: with the H100's compute units known (b491761),
# ViT-B/16 and SigLIP-B/16 at batch 1 with waits that poll from the start
# (WGNN_WAIT_SPIN=3000, as --poll-us 3000) against the default wait (blocking until shortly before
# the run's expected end, then polling), two rounds; and float16 weights at
# batch 1, 8 and 32 (their last H100 figures, session 24, ran without the
# units). enc_run lines; PyTorch eager in the same call. Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8,32 --iters 10 2>&1 | grep -v "Writing model" | tail -6
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    ITERS=50 enc_run "r$round default" $m 1
    ITERS=50 enc_run "r$round poll3000" $m 1 WGNN_WAIT_SPIN=3000
  done
done
for m in vit_b16 siglip_b16; do
  for b in 1 8 32; do
    it=50; [ $b = 8 ] && it=20; [ $b = 32 ] && it=10
    ATOL=5e-3 ITERS=$it enc_run "f16" $m $b -- --weights f16
  done
done
