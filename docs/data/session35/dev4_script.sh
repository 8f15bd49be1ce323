#!/usr/bin/env bash
# Session 35 call 4: session 32 call 6 (issue 9 encoders, issue 11 SDPA) on any card; see that script.
# card's name), issue 9's encoders and then issue 11's SDPA shapes, each
# with PyTorch in the same call: ViT-B/16 at batch 1 (three rounds) and 32
# (two), SigLIP-B/16 at both once (enc_run), then bench/h200_sdpa.sh's
# shapes (auto route). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
{ name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$name"
  . bench/h200_env.sh; . bench/op_median.sh; w=/tmp/wgnn-models; mkdir -p $w
  timeout 150 python3 bench/torch_models.py $w --batches 1,32 --iters 20 2>&1 | grep side
  for r in 1 2 3; do ITERS=100 enc_run "r$r" vit_b16 1; done
  for r in 1 2; do ITERS=20 enc_run "r$r" vit_b16 32; done
  ITERS=100 enc_run "r1" siglip_b16 1; ITERS=20 enc_run "r1" siglip_b16 32
  echo "== sdpa"
  OUT=$OUT/sdpa SHAPES="1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,8,1,4096,64" \
    IMPLS=auto timeout 150 bash bench/h200_sdpa.sh 2>&1 | tail -25
} > $OUT/dev4_log.txt 2>&1
