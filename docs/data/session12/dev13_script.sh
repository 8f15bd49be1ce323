#!/usr/bin/env bash
# Session 12, call 13: the score loop's unroll with the P.V loop's at 16
# (WGNN_FUSED_FLAGS uN with c16). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh # sdpa_env
for round in 1 2; do
  s=1,12,4096,4096,64
  sdpa_env default -- $s
  for u in 2 8; do sdpa_env u${u}c16 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu${u}c16 -- $s; done
  s=4,16,4096,4096,128
  sdpa_env default -- $s
  for u in 4 16; do sdpa_env u${u}c16 WGNN_FUSED_TILE=16x16x2x2 WGNN_FUSED_FLAGS=glqu${u}c16 -- $s; done
done
