#!/usr/bin/env bash
# session 6 call 10: ViT-B/16 and SigLIP-B/16 at batch 1, the M = 197
# products' tile and split-K slices varied for the whole model (now that
# the split-K reduce takes quads): wall and pipelined medians, twice each
. bench/h200_env.sh
W=./build/wgnn
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 1 --iters 20 2>&1 | grep '^{' | sed -E 's/, "torch": "[^"]*"//; s/"side": "torch", //'
for pass in 1 2; do
for m in vit_b16 siglip_b16; do
  for v in default WGNN_GEMM_SPLIT=1 WGNN_GEMM_SPLIT=2 WGNN_GEMM_SPLIT=4 WGNN_GEMM_SPLIT=8 \
           "WGNN_GEMM_TILE=8x8x4x4x8 WGNN_GEMM_SPLIT=1" "WGNN_GEMM_TILE=8x8x4x4x8 WGNN_GEMM_SPLIT=2" \
           "WGNN_GEMM_TILE=16x8x4x4x16" "WGNN_GEMM_TILE=16x8x4x4x16 WGNN_GEMM_SPLIT=2"; do
    printf "%-10s %-44s " $m "$v"
    e=(); [ "$v" != default ] && e=($v)
    env "${e[@]}" $W run --model $work/$m --input $work/${m}_x1.npy --weights f32 --iters 30 --ref $work/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E "median|pipelined|vs /" | grep -v pooler | sed -E 's/.*runs: median ([0-9.]+) ms.*waiting ([0-9.]+) ms/median \1 wait \2/; s/pipelined: [0-9]+ runs in [0-9.]+ ms, ([0-9.]+) ms a run.*(equal|DIFFER).*/pipelined \1 \2/; s/.*max \|diff\| ([^,]*),.*/diff \1/' | tr "\n" " "; echo
  done
done
done
