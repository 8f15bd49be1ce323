#!/usr/bin/env bash
# session 10 call 3: the session's defaults (LayerNorm in the reduce, one
# quad a lane; two staging buffers on the 128 x 128 tile) against the
# session-9 behaviour (build/old2/wgnn: WGNN_GEMM_DB=0 WGNN_LN_FUSED=0) on
# the encoders at batch 1, 8, 32 and Qwen3 f32; and a sweep of small-M tiles
# (WGNN_GEMM_TILE) on ViT-B/16's batch-1 products.
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
./build/test_ops addmm linear 2>&1 | tail -1
./build/test_gemm 2>&1 | tail -1
{
for t in default 16x8x4x8x32 16x8x4x4x16 16x8x4x4x32 16x16x4x4x32 8x8x4x8x16 8x8x4x8x32; do
  E=(); [ $t != default ] && E=(WGNN_GEMM_TILE=$t)
  M=197
  op_env "fc1" "${E[@]}" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
  op_env "fc2" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  op_env "qkv" "${E[@]}" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
  op_env "out" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
OUT=$OUT/m OLD=build/old2/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
for f in wgnn_vit_b16_b1_f32 wgnn_vit_b16_b32_f32; do
  echo "== $f"; grep -h -A10 "^by op" $OUT/m/$f.txt
done
cp $OUT/m/wgnn_vit_b16_b1_f32.txt $OUT/m/old_vit_b16_b1_f32.txt $OUT/ 2>/dev/null; rm -rf $OUT/m
OUT=$OUT/llm OLD=build/old2/wgnn WEIGHTS=f32 ITERS=5 NEW=32 bash bench/h200_llm.sh 2>&1 | grep -E "^wgnn|^===|ids|torch" | head -12
rm -rf $OUT/llm
