#!/usr/bin/env bash
# Session 16, call 9: the final build's q8 row of bench/h200_llm.sh (call 4
# was before linear_q8's four columns a thread), PyTorch in the same call.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
mkdir -p $OUT/llm
WEIGHTS="q8 f16" ITERS=5 NEW=64 OUT=$OUT/llm bash bench/h200_llm.sh
rm -f $OUT/llm/ids_*.npy
