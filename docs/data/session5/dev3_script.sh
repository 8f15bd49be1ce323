#!/usr/bin/env bash
# warp-tile thread placement (WGNN_GEMM_WARP), f16 B four halves a load, staged uploads
. bench/h200_env.sh
W=./build/wgnn
op() { # label env -- op args
  local label=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  printf "%-16s %-22s " "$label" "${envs[*]:-default}"
  env "${envs[@]}" $W bench op "$@" --iters 20 --warmup 3 --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  try: d=json.loads(l); print("%.4f ms" % d["median_ms"])
  except Exception: print(l.strip()[:200])'
}
for w in 0 1; do
  op mm4096 WGNN_GEMM_WARP=$w -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
  op addmm4096 WGNN_GEMM_WARP=$w -- addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096
  op vit32_qkv WGNN_GEMM_WARP=$w -- addmm --in-shape f32:2304 --in-shape f32:6304,768 --in-shape f32:768,2304
  op vit32_fc2 WGNN_GEMM_WARP=$w -- addmm --in-shape f32:768 --in-shape f32:6304,3072 --in-shape f32:3072,768
  op vit32_fc1 WGNN_GEMM_WARP=$w -- addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072
  op vit32_out WGNN_GEMM_WARP=$w -- addmm --in-shape f32:768 --in-shape f32:6304,768 --in-shape f32:768,768
  op vit1_fc1 WGNN_GEMM_WARP=$w -- addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072
  op vit1_qkv WGNN_GEMM_WARP=$w -- addmm --in-shape f32:2304 --in-shape f32:197,768 --in-shape f32:768,2304
  op lin_f16w WGNN_GEMM_WARP=$w -- linear --in-shape f32:1576,768 --in-shape f16:3072,768 --in-shape f32:3072
  op lin_f32w WGNN_GEMM_WARP=$w -- linear --in-shape f32:1576,768 --in-shape f32:3072,768 --in-shape f32:3072
  op qwen_f16_gu WGNN_GEMM_WARP=$w -- linear --in-shape f32:512,1024 --in-shape f16:6144,1024
done
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 1,32 --iters 10 2>&1 | tail -4
for b in 1 32; do
  for e in WGNN_STAGED_UPLOAD=0 WGNN_STAGED_UPLOAD=1 WGNN_GEMM_WARP=1; do
    echo "== vit b$b $e"
    env $e $W run --model $work/vit_b16 --input $work/vit_b16_x$b.npy --weights f32 --iters 20 --ref $work/vit_b16_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E "^input|vs /"
  done
done
