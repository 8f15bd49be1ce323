#!/usr/bin/env bash
# session 7 call 2: split-K slice counts against the wave model of call 1
# (a last wave that puts two workgroups on some SM costs a whole wave; one
# a SM, about half). ViT-B/16 (M = 6304) and SigLIP (6272) batch 32.
. bench/h200_env.sh
. bench/op_median.sh
for M in 6304 6272; do
  for s in 1 2 3 4 6; do
    op_env "fc2-m$M" WGNN_GEMM_SPLIT=$s -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768
  done
  for s in 1 2 3; do
    op_env "fc1-m$M" WGNN_GEMM_SPLIT=$s -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
  done
done
for s in 3 4; do
  op_env "fc2lin" WGNN_GEMM_SPLIT=$s -- linear --in-shape f32:6304,3072 --in-shape f32:768,3072 --in-shape f32:768
done
