#!/usr/bin/env bash
# Session 32 call 3 (same H100 as call 2, still warm; models from call 2):
# first pieces of 32 and 12 dispatches against the default, two rounds.
# Run as one command line; written out here. Device tool: carry [".gl",
# "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh; . bench/op_median.sh
for r in 1 2; do ITERS=100 enc_run "r$r default" vit_b16 1; ITERS=100 enc_run "r$r g32" vit_b16 1 WGNN_GRAPH_CHUNK=g32; ITERS=100 enc_run "r$r g12" vit_b16 1 WGNN_GRAPH_CHUNK=g12; done 2>&1 | sed 's/input.*runs: median/sync/; s/pipelined: 100 runs in [0-9.]* ms,/pipelined/; s/ a run ; outputs.*GPU span of a resident run//; s/(100 runs).*//' | tee $OUT/dev3_log.txt
