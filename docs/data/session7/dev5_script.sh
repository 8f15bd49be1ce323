#!/usr/bin/env bash
# session 7 call 5: the session's final code against bed8c80 (build/old/wgnn):
# registers of the GEMM kernels (plain and SK), the attention check at ViT's
# shape, then both encoders at batch 1, 8, 32 with PyTorch in the same call.
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
{
bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:768 --in-shape f32:6304,768 --in-shape f32:768,768 --iters 1 2>&1 | grep -iE "gemm|name|regis" | head -8
./build/wgnn bench sdpa --shape 32,12,197,197,64 --check --iters 20 2>&1 | tail -2
op_env sdpaqkv -- sdpa_qkvpacked --in-shape f32:32,197,3,12,64
op_bin sdpaqkv build/old/wgnn -- sdpa_qkvpacked --in-shape f32:32,197,3,12,64
args="--in-shape f32:768 --in-shape f32:6304,768 --in-shape f32:768,768"
op_env out-6304 -- addmm $args
op_bin out-6304 build/old/wgnn -- addmm $args
} > $OUT/pre.txt 2>&1
cat $OUT/pre.txt
OUT=$OUT/m OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m
