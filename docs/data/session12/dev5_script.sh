#!/usr/bin/env bash
# Session 12, call 5: the fused kernel's workgroup memory as one array, and
# its SWZ layout (unpadded rows, swizzled sKV, sP [row group][key];
# WGNN_FUSED_FLAGS 'w'), which fits 64-key tiles (KE=4) at 8 rows a thread
# at D=64 (issue 11). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
CANDS="auto:: \
w8x16x4x2u8:8x16x4x2:glwu8 \
w8x16x4x2u4:8x16x4x2:glwu4 \
w8x16x4x2u2:8x16x4x2:glwu2 \
w8x16x2x2u8:8x16x2x2:glwu8 \
w8x16x4x1u8:8x16x4x1:glwu8 \
w16x16x4x1u8:16x16x4x1:glwu8 \
wq16x16x2x2u8:16x16x2x2:glwqu8" \
SHAPES="1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,12,197,197,64" \
BUDGET=300 OUT=$OUT bash bench/h200_sdpa_sweep.sh
