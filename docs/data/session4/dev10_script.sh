#!/usr/bin/env bash
# session 4, device call 10: pipelined decode steps as one command buffer (build/wgnn) against 0b097d7 (build/old/wgnn, every 40 dispatches)
set -u
. bench/h200_env.sh
OUT=$OUT/llm OLD=build/old/wgnn ITERS=5 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -E "wgnn:|greedy|torch|GPU time"
