#!/usr/bin/env bash
# Session 12, call 6: the new long-sequence defaults (D=64: 8x16x4x2 SWZ u4;
# D=128: 16x16x2x2 QG u8) against eab1804's build (build/old2/wgnn, the
# fused kernel as session 11 left it), PyTorch in the same call; causal GQA
# prefill and float16 storage, which take the same tiles. Device tool:
# carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
SH="1,16,1024,1024,64 1,12,4096,4096,64 1,16,16384,16384,64 4,16,4096,4096,128 1,8,4096,256,64 1,12,197,197,64 1,8,1,4096,64"
SHAPES="$SH" IMPLS=auto OUT=$OUT/new bash bench/h200_sdpa.sh
echo "## before (build/old2/wgnn), auto"
for s in $SH; do
  it=20; case $s in 4,16,4096*|*16384*) it=5 ;; esac
  echo "old $s: $(build/old2/wgnn bench sdpa --shape $s --impl auto --iters $it --warmup 2 2>&1 | tail -1 | sed 's/ timer=.*//')"
done
echo "## float16 storage"
for b in build/wgnn build/old2/wgnn; do
  for s in 1,12,4096,4096,64 4,16,4096,4096,128; do
    it=20; case $s in 4,16*) it=5 ;; esac
    echo "$b $s f16: $($b bench sdpa --shape $s --f16 --impl auto --iters $it --warmup 2 2>&1 | tail -1 | sed 's/ timer=.*//')"
  done
done
echo "## causal GQA prefill (16 q heads, 8 kv heads), bench op"
for S in 2048 4096; do
  for D in 64 128; do
    a="sdpa --in-shape f32:1,16,$S,$D --in-shape f32:1,8,$S,$D --in-shape f32:1,8,$S,$D --arg causal=top_left --arg enable_gqa=true"
    op_bin new build/wgnn -- $a
    op_bin old build/old2/wgnn -- $a
  done
done
echo "## checks against the CPU reference"
for D in 64 128; do
  op_bin new build/wgnn -- sdpa --in-shape f32:1,4,1100,$D --in-shape f32:1,2,1100,$D --in-shape f32:1,2,1100,$D --arg causal=top_left --arg enable_gqa=true --iters 1 --warmup 0 --check
  echo "$(build/wgnn bench sdpa --shape 1,3,1030,1500,$D --mask --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
  echo "$(build/wgnn bench sdpa --shape 1,3,1500,1030,$D --f16 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
done
