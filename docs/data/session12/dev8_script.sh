#!/usr/bin/env bash
# Session 12, call 8: fused-attention tiles at ViT's S = 197 (issue 9's
# batch 32: 12 attention nodes, ~9% of the run) with the SWZ layout and
# one-warp workgroups. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
CANDS="auto:: \
d8x8x2x1:8x8x2x1:g \
w8x8x2x1:8x8x2x1:gw \
g4x8x2x2:4x8x2x2:g \
g4x8x4x2:4x8x4x2:g \
w4x8x4x2:4x8x4x2:gw \
g4x8x4x1:4x8x4x1:g \
g4x16x2x2:4x16x2x2:g \
w4x16x4x2:4x16x4x2:gw \
g8x8x2x2:8x8x2x2:g" \
SHAPES="32,12,197,197,64 8,12,197,197,64 32,12,196,196,64" \
BUDGET=200 OUT=$OUT bash bench/h200_sdpa_sweep.sh
