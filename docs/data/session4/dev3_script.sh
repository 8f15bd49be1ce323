#!/usr/bin/env bash
# session 4, device call 3: the GEMM epilogue fix and bias routing (build/wgnn) against ec9ffb6 (build/old/wgnn)
set -u
. bench/h200_env.sh
echo "=== kstat addmm 128x128 after the epilogue fix"
WGNN_GEMM_TILE=16x16x8x8x8 WGNN_GEMM_SPLIT=1 bash bench/kernel_stats/kstat.sh -o /tmp/k3 -- bench op addmm --in-shape f32:1024 --in-shape f32:1024,1024 --in-shape f32:1024,1024 --iters 1 2>&1 | grep -v '^(dumps'
grep gemm /tmp/k3/kstat.tsv
echo "=== forced tiles, no split, 4096^3"
for t in 16x16x8x8x8 16x16x8x4x8; do
  for op in "mm --in-shape f32:4096,4096 --in-shape f32:4096,4096" "addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096" "linear --in-shape f32:4096,4096 --in-shape f32:4096,4096 --in-shape f32:4096"; do
    echo "$t ${op%% *}: $(WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 ./build/wgnn bench op $op --iters 10 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j.get("median_ms"), j.get("error",""))')"
  done
done
L="mm_4096 addmm_4096 linear_6304x2304x768 linear_6304x768x3072 mm_1576x3072x768 linear_1576x3072x768 linear_197x768x768 conv2d_3x3_64_224_b8 conv2d_3x3_64_56_b8 bmm_96x197x197x64"
echo "=== ops new"
OUT=$OUT/ops ITERS=20 bash bench/h200_ops.sh $L 2>&1 | python3 -c '
import json,sys
for l in sys.stdin:
    try: j=json.loads(l)
    except Exception: continue
    print(j.get("impl","wgnn"), j.get("label"), j.get("median_ms", j.get("ms")), j.get("tflops", ""), j.get("error",""))'
echo "=== ops old"
WGNN=build/old/wgnn OUT=$OUT/ops_old ITERS=20 bash bench/h200_ops.sh $L 2>&1 | python3 -c '
import json,sys
for l in sys.stdin:
    try: j=json.loads(l)
    except Exception: continue
    if j.get("impl") == "torch": continue
    print("old", j.get("label"), j.get("median_ms"), j.get("tflops", ""), j.get("error",""))'
echo "=== models"
OUT=$OUT/models OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32
echo "=== llm"
OUT=$OUT/llm OLD=build/old/wgnn ITERS=5 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -E "wgnn:|greedy|torch|GPU time"
