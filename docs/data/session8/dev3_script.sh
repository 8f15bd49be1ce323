#!/usr/bin/env bash
# session 8 call 3: the q|k|v bias folded into sdpa_qkvpacked (the product
# runs plain: mm, no bias pass) against the bias in the product
# (WGNN_SDPA_PACKED=nobias; build/old/wgnn is a wrapper that sets it):
# products, attention with and without the bias, --check, whole encoders.
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
{
op_env chk32 -- sdpa_qkvpacked --in-shape f32:32,197,3,12,64 --in-shape f32:2304 --check --iters 2
op_env chk1 -- sdpa_qkvpacked --in-shape f32:1,197,3,12,64 --in-shape f32:2304 --check --iters 2
op_env chk1c -- sdpa_qkvpacked --in-shape f32:2,300,3,4,80 --in-shape f32:960 --arg is_causal=true --check --iters 2
for M in 1576 6304 6272; do
  op_env "qkv-$M" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
  op_env "mm-$M" -- mm --in-shape f32:$M,768 --in-shape f32:768,2304
done
for B in 1 8 32; do
  op_env "att-$B" -- sdpa_qkvpacked --in-shape f32:$B,197,3,12,64
  op_env "attb-$B" -- sdpa_qkvpacked --in-shape f32:$B,197,3,12,64 --in-shape f32:2304
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
OUT=$OUT/m OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
for f in wgnn_vit_b16_b32_f32 old_vit_b16_b32_f32 wgnn_vit_b16_b8_f32 old_vit_b16_b8_f32; do echo "== $f"; grep -A10 "^by op" $OUT/m/$f.txt; done
rm -rf $OUT/m
