#!/usr/bin/env bash
# Session 12, call 11: the P.V loop's unroll on its own (WGNN_FUSED_FLAGS
# 'cN'; the build's default is now twice the score loop's), further than 2u,
# and the new default checked against the CPU reference. Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
run() { # label env... -- shape
  local l=$1; shift; local e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
  local it=20; case $1 in 4,16*|*16384*) it=5 ;; esac
  echo "$l $1: $(env "${e[@]}" build/wgnn bench sdpa --shape $1 --impl auto --iters $it --warmup 2 2>&1 | tail -1 | sed 's/ timer=.*//; s/ (min.*iters)//')"
}
for round in 1 2; do
  for s in 1,12,4096,4096,64 1,16,16384,16384,64; do
    run default -- $s
    run c4 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu4c4 -- $s
    run c16 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu4c16 -- $s
    run c32 WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=glwu4c32 -- $s
  done
  s=4,16,4096,4096,128
  run default -- $s
  run c8 WGNN_FUSED_TILE=16x16x2x2 WGNN_FUSED_FLAGS=glqu8c8 -- $s
  run c32 WGNN_FUSED_TILE=16x16x2x2 WGNN_FUSED_FLAGS=glqu8c32 -- $s
done
for D in 64 128; do
  echo "check D=$D: $(build/wgnn bench sdpa --shape 1,3,1030,1500,$D --mask --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
  echo "check D=$D f16: $(build/wgnn bench sdpa --shape 1,3,1500,1030,$D --f16 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
done
