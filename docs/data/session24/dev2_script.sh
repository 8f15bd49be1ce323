#!/usr/bin/env bash
# Session 24 call 2: ViT-B/16's batch-32 products with a bias (fc1: bias and
# GELU; q|k|v: bias) run as the plain product on the 128 x 128 tile into
# scratch and a bias pass (gemm_reduce) over the whole output. What would
# the bias and GELU in the 128 x 128 tile's epilogue cost? Registers
# (build/kstat) and times (bench op) of: the default plan; the 128 x 128
# tile with the bias in its epilogue (WGNN_GEMM_SPLIT=1
# WGNN_GEMM_TILE=16x16x8x8x8: HAS_BIAS); the same with the bias in the
# accumulators (WGNN_GEMM_BIAS_INIT=1); the plain product (no bias) for
# reference. Then the dispatch floor (build/graph_overhead 500).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
fc1=(addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu)
qkv=(addmm --in-shape f32:2304 --in-shape f32:6304,768 --in-shape f32:768,2304)
V=("default" "epi:WGNN_GEMM_SPLIT=1:WGNN_GEMM_TILE=16x16x8x8x8" "binit:WGNN_GEMM_SPLIT=1:WGNN_GEMM_TILE=16x16x8x8x8:WGNN_GEMM_BIAS_INIT=1")
echo "== registers"
for v in "${V[@]}"; do
  IFS=: read -r -a a <<<"$v"
  echo "-- ${a[0]} fc1"; env "${a[@]:1}" bash bench/kernel_stats/kstat.sh -- bench op "${fc1[@]}" --iters 1 --warmup 0 2>&1 | grep -v "^(dumps"
done
echo "-- plain mm 6304x768x3072"; bash bench/kernel_stats/kstat.sh -- bench op mm --in-shape f32:6304,768 --in-shape f32:768,3072 --iters 1 --warmup 0 2>&1 | grep -v "^(dumps"
echo "== times"
for round in 1 2; do
  for v in "${V[@]}"; do
    IFS=: read -r -a a <<<"$v"
    op_env "r$round ${a[0]} fc1" "${a[@]:1}" -- "${fc1[@]}"
    op_env "r$round ${a[0]} qkv" "${a[@]:1}" -- "${qkv[@]}"
  done
  op_env "r$round plain fc1" -- mm --in-shape f32:6304,768 --in-shape f32:768,3072
  op_env "r$round plain qkv" -- mm --in-shape f32:6304,768 --in-shape f32:768,2304
done
for v in "${V[@]:1}"; do
  IFS=: read -r -a a <<<"$v"
  op_env "chk ${a[0]}" "${a[@]:1}" -- addmm --in-shape f32:3072 --in-shape f32:600,768 --in-shape f32:768,3072 --arg activation=gelu --check
done
echo "== dispatch floor"
./build/graph_overhead 500 2>&1 | tail -12
