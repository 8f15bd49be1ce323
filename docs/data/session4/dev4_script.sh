#!/usr/bin/env bash
# session 4, device call 4: loop epilogue without a bias; new routing (build/wgnn) vs old routing (build/old/wgnn)
set -u
. bench/h200_env.sh
for b in ./build/wgnn build/old/wgnn; do
  echo "=== $b"
  for t in 16x16x8x8x8; do
    for op in "mm --in-shape f32:4096,4096 --in-shape f32:4096,4096" "addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096"; do
      echo "forced $t ${op%% *}: $(WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 $b bench op $op --iters 10 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j.get("median_ms"), j.get("error",""))')"
    done
  done
  WGNN=$b OUT=/tmp/o ITERS=20 bash bench/h200_ops.sh mm_4096 addmm_4096 linear_6304x2304x768 linear_6304x768x3072 linear_1576x3072x768 conv2d_3x3_64_224_b8 2>/dev/null | python3 -c '
import json,sys
for l in sys.stdin:
    try: j=json.loads(l)
    except Exception: continue
    if j.get("impl") == "torch": continue
    print(j.get("label"), j.get("median_ms"), j.get("tflops", ""), j.get("error",""))'
done
OUT=$OUT/models OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 8,32 2>&1 | grep -E '^===|wall|median'
