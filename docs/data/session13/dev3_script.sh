#!/usr/bin/env bash
# Session 13, call 3: GEMM register tiles with 8 x 8 values a thread at
# M = 197 (ViT-B/16 batch 1): its four block products (bench op medians),
# then the whole encoder's GPU span (WGNN_PROFILE_SPAN, median of 20) for
# each tile. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 > $OUT/torch.txt 2>&1
TILES="default 8x4x8x8x16 16x4x8x8x16 16x4x8x4x16 4x8x4x16x16 8x4x8x8x8 8x8x8x8x16"
for t in $TILES; do
  e=(); [ $t != default ] && e=(WGNN_GEMM_TILE=$t)
  echo "== tile $t"
  vit_products 197 "${e[@]}"
done
for t in $TILES; do
  e=(); [ $t != default ] && e=(WGNN_GEMM_TILE=$t)
  for m in vit_b16 siglip_b16; do
    echo "$t $m: $(env "${e[@]}" ./build/wgnn run --model $w/$m --input $w/${m}_x1.npy --iters 20 --profile \
      --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E '^GPU span|^pipelined|vs /' | \
      sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//' | tr '\n' ' ')"
  done
done
# attention at batch 1: row tiles of 8-32 rows, key splits 1-4 (bench sdpa, auto route)
for t in default 2x16x2x1 4x16x2x1 4x8x2x1 8x8x2x1; do
  for sp in 1 2 4; do
    e=(WGNN_FUSED_SPLIT=$sp); [ $t != default ] && e+=(WGNN_FUSED_TILE=$t)
    sdpa_env "$t/s$sp" "${e[@]}" -- 1,12,197,197,64
  done
done
