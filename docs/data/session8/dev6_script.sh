#!/usr/bin/env bash
# session 8 call 6: plain products of one wave of 128 x 128 tiles on that
# tile (gemm.c's one_wave; with it the batch-8 encoders move their q|k|v
# bias into sdpa_qkvpacked too), against a253c77 (build/old/wgnn):
# products, encoders at batch 8 and 32, Qwen3 f32 (its prefill's gate|up,
# 512 x 6144 x 1024, is such a product).
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
{
op_env chk -- mm --in-shape f32:1576,768 --in-shape f32:768,2304 --check --iters 2
for sh in "1576,768 768,2304" "512,1024 6144,1024"; do
  set -- $sh
  op="mm"; [ $1 = 512,1024 ] && op=linear
  op_env "$op $1x$2" -- $op --in-shape f32:$1 --in-shape f32:$2
  op_bin "$op $1x$2" build/old/wgnn -- $op --in-shape f32:$1 --in-shape f32:$2
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
OUT=$OUT/m OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
rm -rf $OUT/m
OUT=$OUT/llm OLD=build/old/wgnn WEIGHTS=f32 ITERS=5 NEW=32 bash bench/h200_llm.sh 2>&1 | grep -E "^wgnn|^===|greedy|ids|prefill GPU" | head -12
