#!/usr/bin/env bash
# session 10 call 1: the LayerNorm in the split-K reduce (gemm_reduce_ln.wgsl,
# addmm/linear layer_norm=true) against the norms as nodes of their own
# (WGNN_LN_FUSED=0; build/old2/wgnn is a wrapper that sets it): the op tests
# on the H200 (subgroup 32, wave plans), the residual products alone and
# with the norm, encoders at batch 1, 8, 32 (f32, then f16 at batch 32).
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
./build/test_ops addmm linear layer_norm 2>&1 | tail -3
WGNN_GEMM_SPLIT=2 ./build/test_models 2>&1 | tail -1
{
for M in 6304 1576 197; do
  A=(--in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768)
  L=(--in-shape f32:768 --in-shape f32:768 --arg layer_norm=true --arg ln_eps=1e-12)
  F=(--in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768)
  op_env "chk-$M" -- addmm "${A[@]}" "${L[@]}" --arg residual=true --check --iters 2
  op_env "out-$M" -- addmm "${A[@]}" --arg residual=true
  op_env "outln-$M" -- addmm "${A[@]}" "${L[@]}" --arg residual=true
  op_env "fc2-$M" -- addmm "${F[@]}" --arg residual=true
  op_env "fc2ln-$M" -- addmm "${F[@]}" "${L[@]}" --arg residual=true
  op_env "ln-$M" -- layer_norm --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg normalized_shape=768
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
OUT=$OUT/m OLD=build/old2/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
for f in wgnn_vit_b16_b1_f32 old_vit_b16_b1_f32 wgnn_vit_b16_b32_f32 old_vit_b16_b32_f32; do
  echo "== $f"; grep -h -A12 "^by op" $OUT/m/$f.txt
done
cp $OUT/m/wgnn_vit_b16_b1_f32.txt $OUT/m/old_vit_b16_b1_f32.txt $OUT/m/wgnn_vit_b16_b32_f32.txt $OUT/m/old_vit_b16_b32_f32.txt $OUT/ 2>/dev/null; rm -rf $OUT/m
OUT=$OUT/m16 OLD=build/old2/wgnn WEIGHTS=f16 ITERS=20 bash bench/h200_models.sh 32 > $OUT/models16.txt 2>&1
models_summary $OUT/m16 | tee $OUT/summary16.txt; rm -rf $OUT/m16
