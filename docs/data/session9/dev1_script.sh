#!/usr/bin/env bash
# session 9 call 1 (was session 8 call 7, not run then): reduce_rows with one subgroup a row where a row fits one
# subgroup's lanes cached (norm.c's rows_config) against its lanes before
# (WGNN_ROWS_SUBGROUP=0; build/old2/wgnn is a wrapper that sets it): row
# ops, encoders at batch 1, 8, 32, Qwen3 f32.
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
{
op_env chk -- layer_norm --in-shape f32:6304,768 --in-shape f32:768 --in-shape f32:768 --arg normalized_shape=768 --check --iters 2
for M in 6304 1576 197; do
  for v in default WGNN_ROWS_SUBGROUP=0; do
    e=(); [ $v != default ] && e=($v)
    op_env "ln-$M" "${e[@]}" -- layer_norm --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg normalized_shape=768
  done
done
for v in default WGNN_ROWS_SUBGROUP=0; do
  e=(); [ $v != default ] && e=($v)
  op_env "rms-512" "${e[@]}" -- rms_norm --in-shape f32:512,1024 --in-shape f32:1024 --arg normalized_shape=1024
  op_env "smax-197" "${e[@]}" -- softmax --in-shape f32:2364,197 --arg dim=1
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
OUT=$OUT/m OLD=build/old2/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
grep -h -A9 "^by op" $OUT/m/wgnn_vit_b16_b32_f32.txt | grep layer_norm
grep -h -A9 "^by op" $OUT/m/old_vit_b16_b32_f32.txt | grep layer_norm
cp $OUT/m/wgnn_vit_b16_b1_f32.txt $OUT/m/wgnn_vit_b16_b32_f32.txt $OUT/m/old_vit_b16_b32_f32.txt $OUT/ 2>/dev/null; rm -rf $OUT/m
OUT=$OUT/llm OLD=build/old2/wgnn WEIGHTS=f32 ITERS=5 NEW=32 bash bench/h200_llm.sh 2>&1 | grep -E "^wgnn|^===|ids" | head -8
