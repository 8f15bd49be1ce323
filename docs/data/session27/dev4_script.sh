#!/usr/bin/env bash
# Session 27 call 4: the synchronous call at batch 1 with smaller first
# pieces of the run recorded ahead (WGNN_GRAPH_CHUNK=gN: pieces of N, 2N,
# 4N, ... dispatches; the default is g16), so the GPU starts sooner after
# the submit; ViT-B/16 and SigLIP-B/16, two rounds, 50 runs each.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -2
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    ITERS=50 enc_run "r$round g16" $m 1
    for c in g2 g4 g8; do ITERS=50 enc_run "r$round $c" $m 1 WGNN_GRAPH_CHUNK=$c; done
  done
done
