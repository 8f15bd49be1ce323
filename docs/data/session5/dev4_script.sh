#!/usr/bin/env bash
# session 5 call 4: encoders and Qwen3 against 7d7616b (build/old/wgnn), f32 and f16 weights; chunk variants at batch 1
set -u
. bench/h200_env.sh
OUT=/tmp/m4 OLD=build/old/wgnn WEIGHTS="f32 f16" ITERS=20 bash bench/h200_models.sh 1,32 2>&1 | grep -v "Writing model"
work=/tmp/wgnn-models
for v in g8 g4 16 80; do
  for m in vit_b16; do
    echo "== $m b1 WGNN_GRAPH_CHUNK=$v"
    WGNN_GRAPH_CHUNK=$v ./build/wgnn run --model $work/$m --input $work/${m}_x1.npy --weights f32 --iters 20 2>&1 | grep -E "^input"
  done
done
echo "== profile by op, new build, vit b32 f32"
sed -n '/^by op/,/^GPU time/p' /tmp/m4/wgnn_vit_b16_b32_f32.txt
echo "== profile by op, new build, vit b1 f32"
sed -n '/^by op/,/^GPU time/p' /tmp/m4/wgnn_vit_b16_b1_f32.txt
OUT=/tmp/l4 OLD=build/old/wgnn WEIGHTS="f32 f16" ITERS=5 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -v "Writing model\|Loading"
echo "== sdpa ViT-B/16 b32 / b1 shape, fused tiles"
for sh in 32,12,197,197,64 1,12,197,197,64; do
  for t in "" 8x16x2x1 16x8x4x1 8x8x4x1 16x16x2x1 8x16x4x1 4x16x4x1; do
    printf "%s tile=%-10s " $sh "${t:-auto}"
    WGNN_FUSED_TILE=$t ./build/wgnn bench sdpa --shape $sh --iters 20 --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  try: d=json.loads(l); print("%.4f ms" % d["median_ms"])
  except Exception: print(l.strip()[:200])'
  done
done
