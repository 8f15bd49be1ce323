#!/usr/bin/env bash
# session 7 call 3: the GEMM's wave plan (gemm.c wave_choose, gemm.wgsl SK)
# against bed8c80 (build/old/wgnn): the batch-32 encoder products, plain
# products that must not move, and both encoders at batch 8 and 32.
. bench/h200_env.sh
. bench/op_median.sh
op_env chk WGNN_COMPUTE_UNITS=270 -- addmm --in-shape f32:2944 --in-shape f32:2945,64 --in-shape f32:64,2944 --arg activation=gelu --check --iters 2
op_env chkl WGNN_COMPUTE_UNITS=270 -- linear --in-shape f32:2945,64 --in-shape f32:2944,64 --in-shape f32:2944 --check --iters 2
for shape in "qkv 2304 768 none" "fc1 3072 768 gelu" "fc2 768 3072 none" "out 768 768 none"; do
  set -- $shape; l=$1; N=$2; K=$3; A=$4
  for M in 6304 6272; do
    args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
    op_env "$l-$M" -- addmm $args
    op_bin "$l-$M" build/old/wgnn -- addmm $args
  done
done
for c in "mm --in-shape f32:4096,4096 --in-shape f32:4096,4096" \
         "addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096" \
         "mm --in-shape f32:6304,768 --in-shape f32:768,3072"; do
  op_env "plain" -- $c
  op_bin "plain" build/old/wgnn -- $c
done
OUT=/tmp/m3 OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 8,32 2>&1 | grep -vE "^\s*$"
for f in /tmp/m3/wgnn_*.txt /tmp/m3/old_*.txt; do echo "== $f"; grep -E "pipelined|runs: median" $f | head -3; done
