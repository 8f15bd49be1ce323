#!/usr/bin/env bash
# Session 24 call 3 (a scratch build: WGNN_HACK_EPI, see the session's
# README): fc1 at batch 32 (6304 x 3072 x 768, bias and GELU) on the 128 x
# 128 tile with the bias in the accumulators (WGNN_GEMM_BIAS_INIT=1,
# WGNN_GEMM_SPLIT=1, WGNN_GEMM_TILE=16x16x8x8x8), its GELU applied by:
# EPI=1 the unrolled store_all (acc passed by value), EPI=2 an unrolled
# act_all(&acc) before the store loop, EPI=3 a loop over acc before the
# store loop; against the default (plain product + bias pass) and the
# plain product. Registers (kstat) and times, two rounds; tanh-GELU too.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=(WGNN_GEMM_SPLIT=1 WGNN_GEMM_TILE=16x16x8x8x8 WGNN_GEMM_BIAS_INIT=1)
fc1=(addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu)
fc1t=(addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu_tanh)
echo "== registers"
for e in 1 2 3; do
  echo "-- EPI=$e"; env "${F[@]}" WGNN_HACK_EPI=$e bash bench/kernel_stats/kstat.sh -- bench op "${fc1[@]}" --iters 1 --warmup 0 2>&1 | grep "| gemm"
done
echo "== times"
for round in 1 2; do
  op_env "r$round default fc1" -- "${fc1[@]}"
  for e in 1 2 3; do op_env "r$round EPI=$e fc1" "${F[@]}" WGNN_HACK_EPI=$e -- "${fc1[@]}"; done
  op_env "r$round plain" -- mm --in-shape f32:6304,768 --in-shape f32:768,3072
  op_env "r$round default fc1t" -- "${fc1t[@]}"
  for e in 2 3; do op_env "r$round EPI=$e fc1t" "${F[@]}" WGNN_HACK_EPI=$e -- "${fc1t[@]}"; done
done
for e in 1 2 3; do
  op_env "chk EPI=$e" "${F[@]}" WGNN_HACK_EPI=$e -- addmm --in-shape f32:3072 --in-shape f32:600,768 --in-shape f32:768,3072 --arg activation=gelu --check
done
