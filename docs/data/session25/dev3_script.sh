#!/usr/bin/env bash
# Session 25 call 3: the state of b491761 (the H100 SXM5 in the compute-
# units table) on the open performance issues, PyTorch in the same call
# (session 24's dev5_script.sh with batch 8 added): issue 11's SDPA shapes
# (bench/h200_sdpa.sh, auto), issue 9's encoders at batch 1, 8 and 32
# (bench/h200_models.sh, f32; resident runs and spans printed), and
# Qwen3-0.6B-shaped decode and prefill for f32, f16 and q8
# (bench/h200_llm.sh: prefill's products take wave plans now on the H100).
# Device tool: carry [".gl", "deps/dawn/lib", "build"]; raw output under $OUT.
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export OUT=${OUT:-/tmp/wgnn-bench}
echo "== sdpa"
OUT=$OUT/sdpa SHAPES="1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,8,1,4096,64" IMPLS=auto \
  timeout 150 bash bench/h200_sdpa.sh
echo "== models"
OUT=$OUT/models ITERS=30 WEIGHTS=f32 timeout 260 bash bench/h200_models.sh 1,8,32
for f in $OUT/models/wgnn_*_f32.txt; do echo "-- $f"; grep -E "^input|^GPU span|^pipelined|^resident" "$f"; done
echo "== llm"
OUT=$OUT/llm ITERS=5 NEW=64 timeout 190 bash bench/h200_llm.sh
