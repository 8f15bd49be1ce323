#!/usr/bin/env bash
# session 7 call 6: wave plans for products that reach a wave once split in
# K (batch 8: M = 1576), against bed8c80 (build/old/wgnn); encoders at
# batch 1, 8, 32 with PyTorch in the same call.
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
{
op_env chk -- addmm --in-shape f32:768 --in-shape f32:1576,3072 --in-shape f32:3072,768 --check --iters 2
for shape in "qkv 2304 768 none" "fc1 3072 768 gelu" "fc2 768 3072 none" "out 768 768 none"; do
  set -- $shape; l=$1; N=$2; K=$3; A=$4
  for M in 1576 1568; do
    args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
    op_env "$l-$M" -- addmm $args
    op_bin "$l-$M" build/old/wgnn -- addmm $args
  done
done
} > $OUT/pre.txt 2>&1
cat $OUT/pre.txt
OUT=$OUT/m OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m
rm -rf $OUT/m
