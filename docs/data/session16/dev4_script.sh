#!/usr/bin/env bash
# Session 16, call 4: the session's final build. bench/h200_llm.sh (PyTorch
# eager fp32 and wgnn generate f32 / f16 / q8 with --profile, decode at
# context 512-576, --max-context 640); ViT-B/16 batch 1 GPU span against
# c9220a1's build (build/old/wgnn; the split-KV reduce's n_splits changed);
# the decode kernel's registers. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
mkdir -p $OUT/llm
WEIGHTS="f32 f16 q8" ITERS=5 NEW=64 OUT=$OUT/llm bash bench/h200_llm.sh
rm -f $OUT/llm/ids_*.npy
w=/tmp/wgnn-models
[ -f $w/vit_b16_x1.npy ] || python3 bench/torch_models.py $w --batches 1 --iters 3 > $OUT/torch_models.txt 2>&1
for round in 1 2; do
  for bin in build/old/wgnn ./build/wgnn; do
    echo "round $round $bin vit_b16 b1: $($bin run --model $w/vit_b16 --input $w/vit_b16_x1.npy --iters 30 --profile \
      --ref $w/vit_b16_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E '^input|^GPU span|^pipelined|vs /' | tr '\n' ' ' | cut -c1-400)"
  done
done
qkv=(qkv_sdpa_kvcache --in-shape f32:1,1,4096 --in-shape f32:640,128 --in-shape f32:640,128 --in-shape f32:1,8,640,128
  --in-shape f32:1,8,640,128 --in-shape "i32:1{530,531}" --in-shape f32:128 --in-shape f32:128 --arg num_heads=16 --arg num_kv_heads=8)
bash bench/kernel_stats/kstat.sh -- bench op "${qkv[@]}" --iters 2 2>&1 | grep -E "decode|reduce|kernel" | head -6
