#!/usr/bin/env bash
# Session 12, call 3: QG tiles of 128 query rows at 512 threads (16 warps a
# workgroup), and 32 lanes along the keys, at D=128. Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
CANDS="auto:: \
q16x16x2x2u8:16x16x2x2:glqu8 \
q32x16x2x1u8:32x16x2x1:glqu8 \
q32x16x2x1u4:32x16x2x1:glqu4 \
q32x16x2x1u2:32x16x2x1:glqu2 \
q16x32x1x2u8:16x32x1x2:glqu8 \
q16x32x1x2u4:16x32x1x2:glqu4 \
q32x8x2x1u4:32x8x2x1:glqu4" \
SHAPES="4,16,4096,4096,128 1,12,4096,4096,64" \
BUDGET=300 OUT=$OUT bash bench/h200_sdpa_sweep.sh
