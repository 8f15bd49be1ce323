#!/usr/bin/env bash
# session 5 call 9: Qwen3 after the in-place refactor (wgnn__op_plan) and linear_q8's single RMS reduction
OUT=/tmp/l9 WEIGHTS="q8 f32" ITERS=5 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -v "Writing model\|Loading"
