#!/usr/bin/env bash
# Session 30 call 3 (same host as call 2, still warm): ViT-B/16 at batch 32,
# this tree against HEAD~'s build (build/old/wgnn), two more rounds, then
# PyTorch eager again. Device tool: carry [".gl", "deps/dawn/lib", "build"].
# (Run as one command line; written out here.)
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh; . bench/op_median.sh; w=/tmp/wgnn-models
[ -e $w/vit_b16_x32.npy ] || python3 bench/torch_models.py $w --batches 32 --iters 10 2>&1 | grep side
for r in 2 3; do ITERS=10 enc_run "r$r new" vit_b16 32; ITERS=10 BIN=build/old/wgnn enc_run "r$r old" vit_b16 32; done
python3 bench/torch_models.py $w --batches 32 --iters 10 2>&1 | grep side | grep vit
