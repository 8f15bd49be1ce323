#!/usr/bin/env bash
# session 7 call 1: does wave quantization cost the large products?
# mm on the 128 x 128 tile (two workgroups an SM, 264 at once on 132 SMs)
# at row counts that give whole and partial last waves.
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
for N in 3072 2304; do for M in 5632 5760 6016 6272 6304 6400 7040; do
  op_env "n$N-m$M" -- mm --in-shape f32:$M,768 --in-shape f32:768,$N
done; done
# fc2-like: K = 3072, N = 768, 4 slices -> 1200 workgroups at M = 6304
for M in 5632 6304 7040; do
  op_env "fc2-m$M" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768
done
