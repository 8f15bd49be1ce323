#!/usr/bin/env bash
# session 6 call 9: fused attention tiles and variants at the encoders'
# batch-32 shape (32,12,197,197,64), as sdpa_qkvpacked runs it (bench op)
# and as sdpa (bench sdpa); PyTorch's fmha took 0.201 ms a layer in call 3
. bench/h200_env.sh
W=./build/wgnn
pk() { printf "%-12s %-10s " "$1" "$2"; env WGNN_FUSED_TILE=$1 WGNN_FUSED_FLAGS=$2 $W bench op sdpa_qkvpacked --in-shape f32:32,197,3,12,64 --iters 30 --warmup 3 --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  try: d=json.loads(l); print("%.4f ms" % d["median_ms"])
  except Exception: print(l.strip()[:160])'; }
pk "" ""
for t in 8x16x2x1 16x16x2x1 8x16x2x2 8x8x2x1 16x8x2x1 8x16x1x1 8x32x1x1 4x16x2x2; do
  for f in "" g l lu8 s; do pk $t "$f"; done
done
$W bench sdpa --shape 32,12,197,197,64 --iters 30 --check 2>&1 | tail -2
