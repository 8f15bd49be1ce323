#!/usr/bin/env bash
# Session 25 call 1. (1) Issue 11: the fused kernel's D = 64 tile with sQ
# and sP swizzled by thread row too (SWR, WGNN_FUSED_SWR=1: a warp's two
# thread rows read rows 8 apart, 128-byte multiples apart unpadded, so
# the same banks) against the default, two rounds, with registers (kstat)
# and checks against the CPU reference; SWR on other tiles. (2) Issue 9:
# the GEMM planner's tail plan only 3% under the best uniform slicing (the
# default now) against any tail that models less (WGNN_GEMM_WAVES=1, the
# old rule): the products it moves (fc1 at 1576 rows, fc2 at 6304), then
# the encoders at batch 32 and 8, two rounds, PyTorch eager in the same
# call. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== sdpa: SWR at the default tile"
for round in 1 2; do
  for sh in 1,12,4096,4096,64 1,16,16384,16384,64; do
    sdpa_env "r$round default" -- $sh
    sdpa_env "r$round swr" WGNN_FUSED_SWR=1 -- $sh
  done
done
echo "== sdpa: other tiles, with and without SWR"
for t in 8x16x4x2:glwu8 16x8x4x1:glwu4 8x8x4x2:glwu4 16x16x4x1:glwu8; do
  IFS=: read -r tile fl <<<"$t"
  for s in 0 1; do
    sdpa_env "$tile $fl swr=$s" WGNN_FUSED_TILE=$tile WGNN_FUSED_FLAGS=$fl WGNN_FUSED_SWR=$s -- 1,12,4096,4096,64
  done
done
echo "== checks (SWR)"
for e in WGNN_FUSED_SWR=1 "WGNN_FUSED_SWR=1 WGNN_FUSED_TILE=16x8x4x1 WGNN_FUSED_FLAGS=glwu4"; do
  echo "$e: $(env $e build/wgnn bench sdpa --shape 1,3,1030,1500,64 --mask --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
  echo "$e: $(env $e build/wgnn bench sdpa --shape 1,3,1500,1030,64 --f16 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
done
echo "== registers"
for s in 0 1; do
  WGNN_FUSED_SWR=$s bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,12,4096,4096,64 --iters 1 --warmup 0 2>&1 | grep -i 'sdpa_fused\|regist' | head -4
done
echo "== GEMM: the products the tail margin moves"
F1_8=(addmm --in-shape f32:3072 --in-shape f32:1576,768 --in-shape f32:768,3072 --arg activation=gelu)
F2_32=(addmm --in-shape f32:768 --in-shape f32:6304,3072 --in-shape f32:3072,768 --in-shape f32:6304,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true)
QKV_16=(addmm --in-shape f32:2304 --in-shape f32:3152,768 --in-shape f32:768,2304)
for round in 1 2; do
  for v in "" WGNN_GEMM_WAVES=1; do
    op_env "r$round fc1 1576" $v -- "${F1_8[@]}"
    op_env "r$round fc2 6304" $v -- "${F2_32[@]}"
    op_env "r$round qkv 3152" $v -- "${QKV_16[@]}"
  done
done
echo "== encoders"
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 8,32 --iters 10 2>&1 | grep -v "Writing model" | tail -4
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    for b in 32 8; do
      it=10; [ $b = 8 ] && it=20
      ITERS=$it enc_run "r$round margin" $m $b
      ITERS=$it enc_run "r$round waves=1" $m $b WGNN_GEMM_WAVES=1
    done
  done
done
