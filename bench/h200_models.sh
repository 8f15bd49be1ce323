#!/usr/bin/env bash
# ViT-B/16 and SigLIP-B/16 (random-init, real sizes) on the NVIDIA H200:
# PyTorch eager fp32 (TF32 off) and `wgnn run` in one device call
# (docs/PERFORMANCE.md). Run from the repo root on the device machine with
# the build carried:  bash bench/h200_models.sh [BATCHES]
# Env: ITERS (30), WEIGHTS ("f32 f16"), OLD (another wgnn binary, e.g. an
# earlier commit's build/wgnn copied to build/old/wgnn, run after each new
# one with the same arguments: before/after in one call).
set -u
cd "$(dirname "$0")/.."
. bench/h200_env.sh
batches=${1:-1,8,32}
work=/tmp/wgnn-models
mkdir -p "$work"
out=${OUT:-/tmp/wgnn-bench}
mkdir -p "$out"
python3 bench/torch_models.py "$work" --batches "$batches" --iters ${ITERS:-30} | tee "$out/torch_models.jsonl"
for m in vit_b16 siglip_b16; do
  for b in ${batches//,/ }; do
    for w in ${WEIGHTS:-f32 f16}; do
      echo "=== wgnn run $m batch $b weights $w"
      # float16 weights round each weight by up to 2^-11 relative: a looser bound
      tol=2e-3; [ "$w" = f16 ] && tol=5e-3
      ./build/wgnn run --model "$work/$m" --input "$work/${m}_x$b.npy" --weights $w --iters ${ITERS:-30} \
        --profile --ref "$work/${m}_last$b.npy" --pooled-ref "$work/${m}_pool$b.npy" --atol $tol --rtol $tol \
        > "$out/wgnn_${m}_b${b}_$w.txt" 2>&1
      grep -E "^input|^GPU time|vs /|wgnn:" "$out/wgnn_${m}_b${b}_$w.txt"
      if [ -n "${OLD:-}" ]; then
        echo "=== $OLD run $m batch $b weights $w"
        "$OLD" run --model "$work/$m" --input "$work/${m}_x$b.npy" --weights $w --iters ${ITERS:-30} \
          --profile --ref "$work/${m}_last$b.npy" --pooled-ref "$work/${m}_pool$b.npy" --atol $tol --rtol $tol \
          > "$out/old_${m}_b${b}_$w.txt" 2>&1
        grep -E "^GPU time|vs /" "$out/old_${m}_b${b}_$w.txt"
      fi
    done
  done
done
