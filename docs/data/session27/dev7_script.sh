#!/usr/bin/env bash
# Session 27 call 7: the ceiling of folding the reduces into the next product
# at batch 1. A scratch build (skip_last.patch) with WGNN_HACK_SKIP_LAST set
# leaves out the last dispatch of every node with two or more: the split-K
# reduces of the out projection and fc2 and the attention's split-KV reduce,
# 36 of ViT-B/16's 105 dispatches. Timing only: those outputs are wrong.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -2
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    ITERS=50 enc_run "r$round default" $m 1
    ITERS=50 enc_run "r$round skip-last" $m 1 WGNN_HACK_SKIP_LAST=1
  done
done
