#!/usr/bin/env bash
# session 8 call 5: probes for the GEMM: the 128 x 128 tile with K tiles
# of 16 (WGNN_GEMM_TILE=16x16x8x8x16) against 8, registers and time; plain
# products of batch-8 encoder shapes on the 128 x 128 tile against their
# default tile (64 x 64), for a wave rule for plain products.
. bench/h200_env.sh
. bench/op_median.sh
for t in 16x16x8x8x8 16x16x8x8x16; do
  WGNN_GEMM_TILE=$t bash bench/kernel_stats/kstat.sh -- bench op mm --in-shape f32:4096,4096 --in-shape f32:4096,4096 --iters 1 2>&1 | grep -E "\| gemm" | head -2
done
for sh in "4096,4096 4096,4096" "6304,768 768,3072" "6304,3072 3072,768" "6304,768 768,2304"; do
  set -- $sh
  op_env "mm $1x$2" -- mm --in-shape f32:$1 --in-shape f32:$2
  op_env "mm $1x$2" WGNN_GEMM_TILE=16x16x8x8x16 -- mm --in-shape f32:$1 --in-shape f32:$2
done
for sh in "1576,768 768,2304" "1576,768 768,3072" "1576,3072 3072,768" "1576,768 768,768" "2048,1024 1024,1024"; do
  set -- $sh
  op_env "mm $1x$2" -- mm --in-shape f32:$1 --in-shape f32:$2
  op_env "mm $1x$2" WGNN_GEMM_TILE=16x16x8x8x8 -- mm --in-shape f32:$1 --in-shape f32:$2
done
