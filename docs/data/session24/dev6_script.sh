#!/usr/bin/env bash
# Session 24 call 6: why ViT-B/16 with float16 weights is slower at batch 32
# (span 36.4 against 31.7 ms, call 4): fc1's product (6304 x 3072 x 768,
# bias, GELU) as the f32 graph runs it (addmm, weight [k, n]), as linear
# with an f32 weight [n, k] (B transposed), and as linear with an f16
# weight [n, k] (what the f16 graph runs); fc2's shape likewise (no bias
# epilogue differences: residual and LayerNorm left out). Device tool:
# carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  op_env "r$round fc1 addmm f32 [k,n]" -- addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu
  op_env "r$round fc1 linear f32 [n,k]" -- linear --in-shape f32:6304,768 --in-shape f32:3072,768 --in-shape f32:3072 --arg activation=gelu
  op_env "r$round fc1 linear f16 [n,k]" -- linear --in-shape f32:6304,768 --in-shape f16:3072,768 --in-shape f32:3072 --arg activation=gelu
  op_env "r$round fc2 mm f32 [k,n]" -- mm --in-shape f32:6304,3072 --in-shape f32:3072,768
  op_env "r$round fc2 linear f32 [n,k]" -- linear --in-shape f32:6304,3072 --in-shape f32:768,3072
  op_env "r$round fc2 linear f16 [n,k]" -- linear --in-shape f32:6304,3072 --in-shape f16:768,3072
done
echo "== registers"
for spec in "f32:3072,768" "f16:3072,768"; do
  echo "-- linear $spec"; bash bench/kernel_stats/kstat.sh -- bench op linear --in-shape f32:6304,768 --in-shape $spec \
    --in-shape f32:3072 --arg activation=gelu --iters 1 --warmup 0 2>&1 | grep "| gemm"
done
