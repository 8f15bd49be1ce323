#!/usr/bin/env bash
# session 8 call 2 (as call 1, EPI_RW v2: quads loaded all before any store, the tail slices in a store loop of their own): gemm.wgsl's EPI_RW (the 128 x 128 tile's epilogue in its
# own output tile after a plain store; wave plans' tails in gemm_reduce's
# TAIL mode) against the bias pass (WGNN_GEMM_EPI_RW=0: build/old/wgnn is
# a wrapper that sets it): registers, products, --check, whole encoders.
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
{
bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:2304 --in-shape f32:6304,768 --in-shape f32:768,2304 --iters 1 2>&1 | grep -E "gemm|regist" | head -8
WGNN_GEMM_EPI_RW=0 bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu --iters 1 2>&1 | grep -E "gemm|regist" | head -8
bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu --iters 1 2>&1 | grep -E "gemm|regist" | head -8
op_env chk -- addmm --in-shape f32:2304 --in-shape f32:3000,768 --in-shape f32:768,2304 --check --iters 2
op_env chkg -- addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu --check --iters 2
op_env chkr -- linear --in-shape f32:6304,768 --in-shape f32:768,768 --in-shape f32:768 --in-shape f32:6304,768 --arg residual=true --check --iters 2
for shape in "qkv 2304 768 none" "fc1 3072 768 gelu" "fc2 768 3072 none" "out 768 768 none"; do
  set -- $shape; l=$1; N=$2; K=$3; A=$4
  for M in 1576 6304 6272; do
    args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
    op_env "$l-$M" -- addmm $args
    op_env "$l-$M" WGNN_GEMM_EPI_RW=0 -- addmm $args
  done
done
op_env mm4k -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
op_env addmm4k -- addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096
op_env addmm4k WGNN_GEMM_EPI_RW=0 -- addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
OUT=$OUT/m OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
grep -h -A12 "^by op" $OUT/m/wgnn_vit_b16_b32_f32.txt $OUT/m/old_vit_b16_b32_f32.txt
rm -rf $OUT/m
