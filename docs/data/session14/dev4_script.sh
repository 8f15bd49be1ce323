#!/usr/bin/env bash
# Session 14, call 4: ViT-B/16 and SigLIP-B/16 at batch 1 with the new
# small-M GEMM tile (HEAD), then two untaken variants in one build
# (build/var/wgnn: HEAD plus a WGNN_VAR switch, not committed): bit 1 caps
# the small tile's K slices at 6 (fc2: 8 -> 6), bit 2 puts products with
# N * K >= 2^21 (fc1, fc2) on 64 x 64 (16x8x8x4x16). GPU spans, two rounds.
# Then bench/h200_models.sh at batch 1 (PyTorch in the same call, profiles).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
w=/tmp/wgnn-models
OUT0=$OUT
OUT=$OUT0/models WEIGHTS="f32 f16" ITERS=30 bash bench/h200_models.sh 1
for round in 1 2; do
  for v in 0 1 2 3; do
    for m in vit_b16 siglip_b16; do
      echo "round $round var $v $m: $(WGNN_VAR=$v ./build/var/wgnn run --model $w/$m --input $w/${m}_x1.npy --iters 20 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E '^GPU span|^pipelined|vs /' | \
        sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/host .*read-back)//' | tr '\n' ' ')"
    done
  done
done
