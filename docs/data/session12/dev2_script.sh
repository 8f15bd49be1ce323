#!/usr/bin/env bash
# Session 12, call 2: QG at D=128 with smaller unrolls (registers: call 1
# had 248-255 at every QG tile). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
CANDS="auto:: \
q16x16x2x2u8:16x16x2x2:glqu8 \
q16x16x2x2u4:16x16x2x2:glqu4 \
q16x16x2x2u2:16x16x2x2:glqu2 \
q16x16x2x2u1:16x16x2x2:glqu1 \
q16x16x2x1u2:16x16x2x1:glqu2 \
q8x16x2x2u2:8x16x2x2:glqu2 \
q16x16x1x2u2:16x16x1x2:glqu2" \
SHAPES="4,16,4096,4096,128 1,12,4096,4096,64" \
BUDGET=300 OUT=$OUT bash bench/h200_sdpa_sweep.sh
