#!/usr/bin/env bash
# GEMM routing at ViT-B/16 batch 32 shapes: split-K and tiles for the products with a bias
. bench/h200_env.sh
W=./build/wgnn
run() { # label env... -- args
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  printf "%-14s %-34s " "$label" "${envs[*]:-default}"
  env "${envs[@]}" $W bench op linear "$@" --iters 20 --warmup 3 --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  try: d=json.loads(l); print("%.4f ms" % d["median_ms"])
  except Exception: print(l.strip()[:200])'
}
for shape in "fc2 6304 768 3072" "out 6304 768 768" "fc1 6304 3072 768" "qkv 6304 2304 768"; do
  set -- $shape; l=$1; M=$2; N=$3; K=$4
  args="--in-shape f32:$M,$K --in-shape f32:$N,$K --in-shape f32:$N"
  run $l -- $args
  for s in 2 3 4; do run $l WGNN_GEMM_SPLIT=$s -- $args; done
  run $l WGNN_GEMM_TILE=16x16x8x8x8 -- $args
  run $l WGNN_GEMM_TILE=16x16x8x8x16 -- $args
  run $l WGNN_GEMM_TILE=16x16x8x4x16 -- $args
  run $l WGNN_GEMM_TILE=16x16x4x8x16 -- $args
  run $l WGNN_GEMM_TILE=16x16x4x4x16 -- $args
  run $l WGNN_GEMM_TILE=16x16x8x8x8 WGNN_GEMM_SPLIT=1 -- $args
  run $l WGNN_GEMM_TILE=16x16x8x4x16 WGNN_GEMM_SPLIT=2 -- $args
done
