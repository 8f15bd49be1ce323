#!/usr/bin/env bash
# Session 24 call 5: the state of 8007de2 on the three open performance
# issues, PyTorch in the same call (session 22's dev1_script.sh, with the
# encoders' resident runs and spans printed for both batches): issue 11's
# SDPA shapes (bench/h200_sdpa.sh, auto), issue 9's encoders at batch 1
# and 32 (bench/h200_models.sh, f32), issue 10's Qwen3-0.6B-shaped decode
# for f32, f16 and q8 (bench/h200_llm.sh). Device tool: carry [".gl",
# "deps/dawn/lib", "build"]; raw output under $OUT.
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export OUT=${OUT:-/tmp/wgnn-bench}
echo "== sdpa"
OUT=$OUT/sdpa SHAPES="1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64" IMPLS=auto \
  timeout 150 bash bench/h200_sdpa.sh
echo "== models"
OUT=$OUT/models ITERS=30 WEIGHTS=f32 timeout 240 bash bench/h200_models.sh 1,32
for f in $OUT/models/wgnn_*_f32.txt; do echo "-- $f"; grep -E "^GPU span|^pipelined|^resident" "$f"; done
echo "== llm"
OUT=$OUT/llm ITERS=5 NEW=64 timeout 190 bash bench/h200_llm.sh
