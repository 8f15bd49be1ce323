#!/usr/bin/env bash
# Session 12, call 1: the fused kernel's QG variant (Q read from global
# memory in the score loop, no sQ tile; WGNN_FUSED_FLAGS 'q') against the
# default route, with register counts (issue 11). Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
CANDS="auto:: \
q8x16x2x2u8:8x16x2x2:glqu8 \
q8x16x2x1u8:8x16x2x1:glqu8 \
q16x16x2x1u8:16x16x2x1:glqu8 \
q16x16x2x2u8:16x16x2x2:glqu8 \
q8x16x2x2u4:8x16x2x2:glqu4 \
l8x16x2x2u8:8x16x2x2:glu8 \
q16x16x1x2u8:16x16x1x2:glqu8" \
SHAPES="1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,12,197,197,64" \
BUDGET=300 OUT=$OUT bash bench/h200_sdpa_sweep.sh
