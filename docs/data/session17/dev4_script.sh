#!/usr/bin/env bash
# Session 17, call 4: the encoders' benchmark with PyTorch in the same call
# after the K groups (ea95677 and its docs) against 3feb1b2's build
# (build/old/wgnn, the session's start): ViT-B/16 and SigLIP-B/16 at batch
# 1, 8, 32, f32 and f16 weights; then batch 1 synchronous calls with waits
# that poll. The per-run outputs are in dev4_models.tgz. Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
OUT0=$OUT
OUT=/tmp/dev4_models OLD=build/old/wgnn ITERS=30 bash bench/h200_models.sh 1,8,32 2>&1 | grep -v "Writing model"
tar czf $OUT0/dev4_models.tgz -C /tmp dev4_models
w=/tmp/wgnn-models
for round in 1 2; do
  for bin in ./build/wgnn build/old/wgnn; do
    for m in vit_b16 siglip_b16; do
      echo "round $round $bin --poll-us 2000 $m b1: $($bin --poll-us 2000 run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^GPU span|^pipelined|vs /|rror' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/activations.*//; s/host .* in fetch (waiting, read-back)//' | tr '\n' ' ')"
    done
  done
done
