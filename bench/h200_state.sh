#!/usr/bin/env bash
# The state of the open performance issues in one device call, PyTorch in
# the same call: issue 11's SDPA shapes (bench/h200_sdpa.sh, auto route),
# issue 9's encoders (bench/h200_models.sh, f32; resident runs and GPU
# spans printed), issue 10's Qwen3-0.6B-shaped decode and prefill for f32,
# f16 and q8 (bench/h200_llm.sh). Sessions 22, 24 and 25 ran this as
# copies in docs/data/session*/ (session 25's dev3_script.sh is this with
# the defaults). From the repo root on the device machine, build carried
# (device tool: carry [".gl", "deps/dawn/lib", "build"]):
#   bash bench/h200_state.sh
# Env: OUT (raw output, default /tmp/wgnn-bench), SHAPES (SDPA shapes),
# BATCHES (encoders, default 1,8,32), LLM (0: leave the decoders out, as
# session 27 did with issue 10 blocked; about 3 minutes less).
cd "$(dirname "$0")/.."
. bench/h200_env.sh
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export OUT=${OUT:-/tmp/wgnn-bench}
echo "== sdpa"
OUT=$OUT/sdpa SHAPES=${SHAPES:-"1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,8,1,4096,64"} \
  IMPLS=auto timeout 150 bash bench/h200_sdpa.sh
echo "== models"
OUT=$OUT/models ITERS=30 WEIGHTS=f32 timeout 260 bash bench/h200_models.sh ${BATCHES:-1,8,32}
for f in $OUT/models/wgnn_*_f32.txt; do echo "-- $f"; grep -E "^input|^GPU span|^pipelined|^resident" "$f"; done
[ "${LLM:-1}" = 0 ] && exit 0
echo "== llm"
OUT=$OUT/llm ITERS=5 NEW=64 timeout 190 bash bench/h200_llm.sh
