#!/usr/bin/env bash
# Session 32 call 5: ViT's CLS row through the patch product (a row of
# zeros padded ahead of the patches; no cat, the first LayerNorm in the
# product) against the build before it (build/old/wgnn: a88b7e2's
# tree), interleaved: ViT-B/16 batch 1 three rounds, batch 32 two rounds,
# SigLIP-B/16 batch 1 once each (unchanged: a control); PyTorch eager in
# the same call (bench/torch_models.py). Device tool: carry [".gl",
# "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  . bench/h200_env.sh; . bench/op_median.sh; w=/tmp/wgnn-models; mkdir -p $w
  timeout 150 python3 bench/torch_models.py $w --batches 1,32 --iters 20 2>&1 | grep side
  for bin in build/wgnn build/old/wgnn; do
    $bin run --model $w/vit_b16 --input $w/vit_b16_x1.npy --iters 2 2>&1 | grep "^graph:" | sed "s|^|$bin |"
  done
  for r in 1 2 3; do
    ITERS=100 enc_run "r$r new" vit_b16 1; BIN=build/old/wgnn ITERS=100 enc_run "r$r old" vit_b16 1
  done
  for r in 1 2; do
    ITERS=20 enc_run "r$r new" vit_b16 32; BIN=build/old/wgnn ITERS=20 enc_run "r$r old" vit_b16 32
  done
  ITERS=100 enc_run "new" siglip_b16 1; BIN=build/old/wgnn ITERS=100 enc_run "old" siglip_b16 1
} > $OUT/dev5_log.txt 2>&1
