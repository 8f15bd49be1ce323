#!/usr/bin/env bash
# session 4, device call 8: BK 16 for the 64 x 64 and 32 x 128 tiles (their vec4 loads need it)
set -u
. bench/h200_env.sh
for v in "linear --in-shape f32:512,1024 --in-shape f32:6144,1024|16x16x4x4" "linear --in-shape f32:512,3072 --in-shape f32:1024,3072 --in-shape f32:512,1024|16x16x4x4" "linear --in-shape f32:512,1024 --in-shape f32:4096,1024|16x16x4x4" "linear --in-shape f32:197,768 --in-shape f32:3072,768 --in-shape f32:3072|16x8x4x8" "linear --in-shape f32:197,3072 --in-shape f32:768,3072 --in-shape f32:768|16x8x4x8" "linear --in-shape f32:197,768 --in-shape f32:2304,768 --in-shape f32:2304|16x8x4x8" "linear --in-shape f32:197,768 --in-shape f32:768,768 --in-shape f32:768|16x8x4x8"; do
  op=${v%%|*}; t=${v#*|}
  for bk in 8 16; do
    echo "$t x$bk ${op}: $(WGNN_GEMM_TILE=${t}x$bk ./build/wgnn bench op $op --iters 20 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j.get("median_ms"), j.get("error",""))')"
  done
  echo "auto ${op}: $(./build/wgnn bench op $op --iters 20 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j.get("median_ms"), j.get("error",""))')"
done
