#!/usr/bin/env bash
# session 4, device call 2: GEMM tile registers (kstat), the LLM decode before/after qkv_sdpa_kvcache, q8 GEMV
set -u
. bench/h200_env.sh
mkdir -p $OUT/kstat
echo "=== kstat: 128x128 tile, plain vs bias (1024^3)"
for v in "mm|mm --in-shape f32:1024,1024 --in-shape f32:1024,1024" "addmm|addmm --in-shape f32:1024 --in-shape f32:1024,1024 --in-shape f32:1024,1024" "linear_bias|linear --in-shape f32:1024,1024 --in-shape f32:1024,1024 --in-shape f32:1024"; do
  l=${v%%|*}; a=${v#*|}
  for t in 16x16x8x8x8 16x8x8x8x8 16x16x4x4x8; do
    echo "--- $l tile $t"
    WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 bash bench/kernel_stats/kstat.sh -o /tmp/k_${l}_$t -- bench op $a --iters 1 2>&1 | grep -v '^(dumps' | head -12
    cp /tmp/k_${l}_$t/kstat.tsv $OUT/kstat/${l}_$t.tsv 2>/dev/null
  done
done
echo "=== timing 4096^3, tile forced, no split"
for t in 16x16x8x8x8 16x8x8x8x8; do
  for op in "mm --in-shape f32:4096,4096 --in-shape f32:4096,4096" "addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096"; do
    echo "$t $op: $(WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 ./build/wgnn bench op $op --iters 10 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j.get("median_ms"), j.get("error",""))')"
  done
done
echo "=== gemv"
SHAPES="1024:4096 2048:1024 1024:6144 3072:1024 1024:151936" FORMATS="q8 f16" ITERS=30 bash bench/h200_gemv.sh
echo "=== gemv old"
WGNN=build/old/wgnn SHAPES="1024:6144 1024:151936" FORMATS="q8" ITERS=30 bash bench/h200_gemv.sh
echo "=== floor: a trivial kernel"
./build/wgnn bench op relu --in-shape f32:1024 --iters 30 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print("relu 1024:", j["median_ms"]*1e3, "us")'
echo "=== llm"
OUT=$OUT/llm OLD=build/old/wgnn ITERS=5 NEW=64 bash bench/h200_llm.sh
