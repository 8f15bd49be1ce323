#!/usr/bin/env bash
# session 6 call 4: GEMM register tiles of 16 x 8 / 8 x 16 values at 128
# threads (128 x 128 output tiles, half the workgroup-memory loads per FMA
# of the 8 x 8 tile at 256 threads) against the default, plain products;
# register counts from bench/kernel_stats
. bench/h200_env.sh
W=./build/wgnn
. bench/op_median.sh
T=${T:-"16x16x8x8x8 16x8x16x8x8 8x16x8x16x8 16x8x16x8x16 8x16x8x16x16 16x16x8x8x16"}
for t in $T; do
  printf "%-14s " $t; WGNN_GEMM_TILE=$t bash bench/kernel_stats/kstat.sh -- bench op mm --in-shape f32:512,512 --in-shape f32:512,512 --iters 1 2>&1 | grep -i "gemm" | head -1 | cut -c1-160
  op_env chk WGNN_GEMM_TILE=$t -- mm --in-shape f32:300,516 --in-shape f32:516,332 --check --iters 2
done
for s in "mm4096 4096 4096 4096" "fc1 6304 3072 768" "qkv 6304 2304 768" "fc2 6304 768 3072" "b8fc1 1576 3072 768"; do
  set -- $s
  for t in $T; do op_env $1 WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 -- mm --in-shape f32:$2,$4 --in-shape f32:$4,$3; done
done
