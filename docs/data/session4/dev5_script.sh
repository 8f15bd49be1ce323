#!/usr/bin/env bash
# session 4, device call 5: vec4 global loads in the GEMM (build/wgnn) vs 6ba72de (build/old/wgnn); BK 8 / 16
set -u
. bench/h200_env.sh
for b in ./build/wgnn build/old/wgnn; do
  echo "=== $b"
  for t in 16x16x8x8x8 16x16x8x8x16 16x16x8x4x8 16x16x8x4x16 16x16x4x4x8; do
    for op in "mm --in-shape f32:4096,4096 --in-shape f32:4096,4096" "linear --in-shape f32:6304,768 --in-shape f32:2304,768" "linear --in-shape f32:6304,3072 --in-shape f32:768,3072"; do
      echo "forced $t ${op}: $(WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 $b bench op $op --iters 10 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j.get("median_ms"), j.get("error",""))')"
    done
  done
done
echo "=== kstat"
WGNN_GEMM_TILE=16x16x8x8x8 bash bench/kernel_stats/kstat.sh -o /tmp/k5 -- bench op mm --in-shape f32:1024,1024 --in-shape f32:1024,1024 --iters 1 2>&1 | grep gemm
WGNN_GEMM_TILE=16x16x8x8x16 bash bench/kernel_stats/kstat.sh -o /tmp/k6 -- bench op mm --in-shape f32:1024,1024 --in-shape f32:1024,1024 --iters 1 2>&1 | grep gemm
WGNN=build/old/wgnn WGNN_GEMM_TILE=16x16x8x8x16 bash bench/kernel_stats/kstat.sh -o /tmp/k7 -- bench op mm --in-shape f32:1024,1024 --in-shape f32:1024,1024 --iters 1 2>&1 | grep gemm
