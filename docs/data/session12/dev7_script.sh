#!/usr/bin/env bash
# Session 12, call 7: more tiles around the new defaults (issue 11): QG with
# 64-key tiles at D=64 (128 rows: 16x16x4x2 fits 48 KiB only without sQ),
# 32-row 64-key tiles, unroll 1, and 64-key tiles at D=128. Device tool:
# carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
CANDS="auto:: \
q16x16x4x2u4:16x16x4x2:glwqu4 \
q8x16x4x2u4:8x16x4x2:glwqu4 \
w4x16x4x2u4:4x16x4x2:glwu4 \
w8x16x4x2u1:8x16x4x2:glwu1 \
q16x16x4x1u4:16x16x4x1:glwqu4 \
q16x16x4x1u8:16x16x4x1:glwqu8 \
q8x16x4x1u4:8x16x4x1:glwqu4" \
SHAPES="1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64" \
BUDGET=300 OUT=$OUT bash bench/h200_sdpa_sweep.sh
