#!/usr/bin/env bash
# Session 14, call 2: GEMM tiles around 16x4x8x4x16 (32 x 64, 8 x 4 a
# thread), which beat the default 8x8x4x8x16 (4 x 8 a thread) in call 1
# at ViT-B/16's batch 1 (M = 197): tile sweep with registers (build/kstat
# on the fc1 product's dump), K-slice counts on the winner, whole-encoder
# GPU spans. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 > $OUT/torch.txt 2>&1
TILES="default 16x4x8x4x16 16x4x8x4x32 16x4x8x4x8 8x4x8x4x16 16x8x8x4x16 16x2x8x4x16 32x4x8x2x16 16x4x8x2x16 8x8x8x4x16"
for t in $TILES; do
  e=(); [ $t != default ] && e=(WGNN_GEMM_TILE=$t)
  d=$OUT/dump_$t; rm -rf $d
  env "${e[@]}" WGNN_DUMP_SHADERS=$d ./build/wgnn bench op addmm --in-shape f32:3072 --in-shape f32:197,768 \
    --in-shape f32:768,3072 --arg activation=gelu --iters 1 > /dev/null 2>&1
  echo "== tile $t | $(build/kstat $d 2>/dev/null | grep -m1 gemm | grep -o 'Register Count=[0-9]*\|Binary Size=[0-9]*' | tr '\n' ' ')"
  vit_products 197 "${e[@]}"
done
rm -rf $OUT/dump_*
for s in 1 2 3 4 6 8 12; do
  echo "== 16x4x8x4x16 split $s"
  vit_products 197 WGNN_GEMM_TILE=16x4x8x4x16 WGNN_GEMM_SPLIT=$s
done
for t in $TILES; do
  e=(); [ $t != default ] && e=(WGNN_GEMM_TILE=$t)
  for m in vit_b16 siglip_b16; do
    echo "$t $m: $(env "${e[@]}" ./build/wgnn run --model $w/$m --input $w/${m}_x1.npy --iters 20 --profile \
      --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E '^GPU span|^pipelined|vs /' | \
      sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//' | tr '\n' ' ')"
  done
done
