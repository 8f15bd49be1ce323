#!/usr/bin/env bash
# Session 12, call 13: the score loop's unroll with the P.V loop's at 16
# (WGNN_FUSED_FLAGS uN with c16). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
run() { # label env... -- shape
  local l=$1; shift; local e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
  local it=20; case $1 in 4,16*|*16384*) it=5 ;; esac
  echo "$l $1: $(env "${e[@]}" build/wgnn bench sdpa --shape $1 --impl auto --iters $it --warmup 2 2>&1 | tail -1 | sed 's/ timer=.*//; s/ (min.*iters)//')"
}
for round in 1 2; do
  s=1,12,4096,4096,64
  run default -- $s
  for u in 2 8; do run u${u}c16 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu${u}c16 -- $s; done
  s=4,16,4096,4096,128
  run default -- $s
  for u in 4 16; do run u${u}c16 WGNN_FUSED_TILE=16x16x2x2 WGNN_FUSED_FLAGS=glqu${u}c16 -- $s; done
done
