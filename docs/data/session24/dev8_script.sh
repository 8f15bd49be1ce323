#!/usr/bin/env bash
# Session 24 call 8: why the 128 x 128 tile is slower with a float16 B read
# along n (addmm, mat2 f16 [k, n]) than along k (linear, weight f16 [n, k])
# at 6304 x 3072 x 768: registers and code size (build/kstat) of both, and
# the f32 addmm for reference. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for c in "addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f16:768,3072 --arg activation=gelu" \
         "linear --in-shape f32:6304,768 --in-shape f16:3072,768 --in-shape f32:3072 --arg activation=gelu" \
         "addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu"; do
  echo "-- $c"; bash bench/kernel_stats/kstat.sh -- bench op $c --iters 1 --warmup 0 2>&1 | grep "| gemm"
done
