#!/usr/bin/env bash
# session 5 call 7: ViT-B/16 batch-32 products (addmm form, as the model runs them) on other tiles / without the bias pass
. bench/h200_env.sh
W=./build/wgnn
op() { # label env... -- args
  local label=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  printf "%-8s %-48s " "$label" "${envs[*]:-default}"
  env "${envs[@]}" $W bench op addmm "$@" --iters 20 --warmup 3 --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  try: d=json.loads(l); print("%.4f ms" % d["median_ms"])
  except Exception: print(l.strip()[:200])'
}
for shape in "qkv 6304 2304 768 none" "fc1 6304 3072 768 gelu" "fc2 6304 768 3072 none" "out 6304 768 768 none"; do
  set -- $shape; l=$1; M=$2; N=$3; K=$4; A=$5
  args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
  op $l -- $args
  op $l WGNN_GEMM_SPLIT=1 -- $args
  for t in 16x16x8x4x16 16x16x4x8x16 16x16x8x8x8 16x16x8x8x16 16x16x4x4x16; do
    op $l WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=1 -- $args
  done
  op $l WGNN_GEMM_TILE=16x16x8x8x8 WGNN_GEMM_SPLIT=2 -- $args
done
# Qwen3 with the final build (the fused kernel's strided rows run its prefill)
OUT=/tmp/l7 WEIGHTS="f32 f16 q8" ITERS=5 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -v "Writing model\|Loading"
