#!/usr/bin/env bash
# session 5 call 8: ViT-B/16 / SigLIP batch 1 and 8 with the attention's split-KV off (WGNN_FUSED_SPLIT=1) or its tile changed
. bench/h200_env.sh
w=/tmp/wgnn-models; mkdir -p $w
python3 bench/torch_models.py $w --batches 1,8 --iters 5 > /dev/null 2>&1
for rep in 1 2; do
for m in vit_b16 siglip_b16; do for b in 1 8; do
  for e in WGNN_NONE=1 WGNN_FUSED_SPLIT=1 WGNN_FUSED_SPLIT=2 WGNN_FUSED_TILE=16x16x2x1; do
    printf "%-10s b%-2s %-24s " $m $b $e
    env $e ./build/wgnn run --model $w/$m --input $w/${m}_x$b.npy --weights f32 --iters 30 --ref $w/${m}_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -oE "median [0-9.]+ ms|[0-9]+ dispatches per run|-> ok" | tr '\n' ' '; echo
  done
done; done; done
for s in 1,12,197,197,64 8,12,197,197,64; do for e in WGNN_NONE=1 WGNN_FUSED_SPLIT=1; do
  printf "sdpa %-18s %-20s " $s $e; env $e ./build/wgnn bench sdpa --shape $s --iters 30 --json | grep -oE '"median_ms":[0-9.]+'
done; done
