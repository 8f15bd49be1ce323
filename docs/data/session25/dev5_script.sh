#!/usr/bin/env bash
# Session 25 call 5: the final build on a GPU. test_gemm and test_models
# (checked against the CPU reference and stored PyTorch outputs) with the
# H100's compute units known, i.e. with its wave plans and K groups; the
# README's `make run` command (tests/models/vit on the sample image); the
# `wgnn run --profile` note where the units are unknown
# (WGNN_COMPUTE_UNITS=0); ViT-B/16 at batch 1 and 32 once more (enc_run),
# PyTorch eager in the same call. Device tool: carry [".gl",
# "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_gemm test_models; do
  echo "== $t"; timeout 250 ./build/$t 2>&1 | tail -3
done
echo "== make run's encoder"
./build/wgnn run --model tests/models/vit --image tests/models/image.png --iters 20 --profile \
  --ref tests/models/vit/pil_last_hidden_state.npy --pooled-ref tests/models/vit/pil_pooler_output.npy 2>&1 | grep -E 'vs |note|GPU time'
echo "== the note, units unknown"
WGNN_COMPUTE_UNITS=0 ./build/wgnn run --model tests/models/vit --image tests/models/image.png --iters 2 --profile 2>&1 | grep -E 'note'
echo "== encoders"
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,32 --iters 10 2>&1 | grep -v "Writing model" | grep vit_b16
ITERS=50 enc_run "final" vit_b16 1
ITERS=10 enc_run "final" vit_b16 32
