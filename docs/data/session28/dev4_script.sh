#!/usr/bin/env bash
# Session 28 call 4: the long-sequence attention kernels with 32-row
# workgroups of 64 threads (half the landed tiles' rows and threads: four
# workgroups an SM at the same registers, so that a barrier holds two
# warps, not four; K and V read from L2 twice as often). Knobs only, the
# landed build (f9f3efa's code = 5bd5a33's).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2; do
  sdpa_env "r$r landed" -- 4,16,4096,4096,128
  for v in 4,2,4,8 4,2,4,4 4,2,2,8; do sdpa_env "r$r VH=$v" WGNN_FUSED_VH=$v -- 4,16,4096,4096,128; done
  sdpa_env "r$r landed" -- 1,12,4096,4096,64
  for f in glwu4 glwu8 glwu2; do sdpa_env "r$r 4x16x4x2 $f" WGNN_FUSED_TILE=4x16x4x2 WGNN_FUSED_FLAGS=$f -- 1,12,4096,4096,64; done
done
