#!/usr/bin/env bash
# Session 31 call 3 (same host, still warm): ViT-B/16 at batches 1 and 32,
# two more rounds (enc_run: synchronous, pipelined, resident, GPU span),
# then PyTorch eager again. Run as one command line; written out here.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh; . bench/op_median.sh; w=/tmp/wgnn-models
(for r in 2 3; do ITERS=50 enc_run "r$r" vit_b16 1; ITERS=20 enc_run "r$r" vit_b16 32; done
 python3 bench/torch_models.py $w --batches 1,32 --iters 20 2>&1 | grep side | grep vit) > $OUT/dev3_log.txt 2>&1
