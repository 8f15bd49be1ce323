#!/usr/bin/env bash
# Session 31 call 2 (the host of call 1, still warm): issue 9's encoders,
# f32 at batches 1 and 32, PyTorch eager in the same call (the models part
# of bench/h200_state.sh). Run as one command line; written out here.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh; O=$OUT
(OUT=$O/models ITERS=30 WEIGHTS=f32 timeout 380 bash bench/h200_models.sh 1,32 2>&1 | tail -25
 for f in $O/models/wgnn_*_f32.txt; do echo "-- $f"; grep -E "^input|^GPU span|^pipelined|^resident" "$f"; done) > $OUT/dev2_log.txt 2>&1
