#!/usr/bin/env bash
# Session 13, call 1: ViT-B/16 and SigLIP-B/16 at batch 1 (f32), with the
# pipelined runs' host time split into submit (upload, recording) and fetch
# (waiting, read-back): is a pipelined run bound by the host or the GPU?
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
OUT=$OUT/m WEIGHTS=f32 ITERS=50 bash bench/h200_models.sh 1 > $OUT/models.txt 2>&1
grep -h -E '^pipelined|^resident|^input' $OUT/m/wgnn_*.txt
cp $OUT/m/wgnn_*.txt $OUT/
rm -rf $OUT/m
