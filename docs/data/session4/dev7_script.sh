#!/usr/bin/env bash
# session 4, device call 7: the final build (vec4 GEMM loads) against 6ba72de: Qwen3 prefill/decode f32, encoders at batch 1
set -u
. bench/h200_env.sh
OUT=$OUT/llm OLD=build/old/wgnn WEIGHTS=f32 ITERS=5 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -E "wgnn:|greedy|torch|GPU time"
OUT=$OUT/models OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1 2>&1 | grep -E '^===|wall|median|torch'
