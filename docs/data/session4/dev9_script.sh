#!/usr/bin/env bash
# session 4, device call 9: the final build (vec4 GEMM loads, K tiles of 16 for 128x64, 64x64, 32x128) against 6ba72de
set -u
. bench/h200_env.sh
OUT=$OUT/models OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 2>&1 | grep -E '^===|wall|median|torch'
OUT=$OUT/llm OLD=build/old/wgnn WEIGHTS=f32 ITERS=5 NEW=32 bash bench/h200_llm.sh 2>&1 | grep -E "wgnn:|greedy|torch|GPU time"
