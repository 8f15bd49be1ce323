#!/usr/bin/env bash
# Session 13, call 2: what a dispatch costs the GPU (bench/graph_overhead.c
# with each run's GPU span: one pass, a timestamp at each end) and ViT-B/16 /
# SigLIP-B/16 at batch 1 with the GPU span of a resident run.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
./build/graph_overhead 500 | tee $OUT/overhead.txt
OUT=$OUT/m WEIGHTS=f32 ITERS=30 bash bench/h200_models.sh 1 > $OUT/models.txt 2>&1
grep -h -E '^pipelined|^resident|^GPU' $OUT/m/wgnn_*.txt
cp $OUT/m/wgnn_*.txt $OUT/
rm -rf $OUT/m
