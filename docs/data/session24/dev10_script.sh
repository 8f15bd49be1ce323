#!/usr/bin/env bash
# Session 24 call 10: one staging buffer for a float16 B read along n on the
# 128 x 128 tile (this tree) - the f16 encoders against 8007de2's build
# (build/old/wgnn: f16 weights [n, k] through linear), GPU span and resident
# runs, ViT-B/16 at batch 32, 8, 1 and SigLIP-B/16 at 32, two rounds.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8,32 --iters 2 2>&1 | grep -c side
enc() { # BIN LABEL MODEL BATCH [run options]: resident run and GPU span, check
  local bin=$1 l=$2 m=$3 b=$4; shift 4
  echo "$l $m b$b: $($bin run --model $w/$m --input $w/${m}_x$b.npy --iters ${ITERS:-50} "$@" \
    --profile --ref $w/${m}_last$b.npy --atol 5e-3 --rtol 5e-3 2>&1 | grep -E '^GPU span|^resident|vs /|rror' |
    sed 's/(its one compute pass.*timestamps)://; s/outputs equal.*single run.s//; s/last_hidden_state vs .*: max/max/;
      s/, 0 of .*-> ok/ ok/; s/(input left on the GPU.*protocol)//; s/resident: [0-9]* runs of the graph alone,/resident/' |
    tr '\n' ' ')"
}
for round in 1 2; do
  for mb in vit_b16:32 vit_b16:8 vit_b16:1 siglip_b16:32; do
    m=${mb%:*} b=${mb#*:}; it=50; [ $b = 32 ] && it=10; [ $b = 8 ] && it=20
    ITERS=$it enc ./build/wgnn "r$round new f16" $m $b --weights f16
    ITERS=$it enc ./build/old/wgnn "r$round old f16" $m $b --weights f16
  done
done
