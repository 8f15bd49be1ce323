#!/usr/bin/env bash
# Session 23 call 6: test_lm on the GPU at two and three decode steps in
# flight (the ring of read-back slots, steps past a stop, errors), and
# bench/graph_overhead: what a dependent dispatch and a decode-sized GEMV
# cost inside a graph run (distinct weights against one weight for all).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for d in 2 3; do echo "test_lm depth $d: $(WGNN_DECODE_DEPTH=$d timeout 200 ./build/test_lm 2>&1 | tail -1)"; done
./build/graph_overhead 500 2>&1 | tail -12
