#!/usr/bin/env bash
# session 11 call 1: fused-attention tiles at ViT's S = 197 (WGNN_FUSED_TILE;
# 40-row tiles pad 197 rows to 200 where 32-row ones pad to 224), each
# checked against the CPU reference on the H200; the encoders at batch 1,
# 8, 32 with the new resident timing (`wgnn run`: the graph alone, input
# on the GPU, outputs not read, as PyTorch's benchmark) and PyTorch host to
# host; ViT-B/16 whole with the candidate attention tiles (batch 32, 8) and
# small-M GEMM tiles (batch 1).
. bench/h200_env.sh
. bench/models_summary.sh
med() { python3 -c 'import sys, json
for l in sys.stdin:
    try: d = json.loads(l); print("%.4f ms %s" % (d["median_ms"], d.get("check", "")))
    except Exception: print(l.strip()[:160])'; }
{
for t in default 10x16x1x1 10x16x2x1 10x8x2x1 5x16x2x2 8x16x2x1 10x8x4x1; do
  E=(); [ $t != default ] && E=(WGNN_FUSED_TILE=$t)
  printf "%-10s %-18s " $t check; env "${E[@]}" ./build/wgnn bench sdpa --shape 2,12,197,197,64 --impl fused --check --iters 1 --warmup 0 --json | med
  for sh in 32,12,197,197,64 8,12,197,197,64 1,12,197,197,64; do
    printf "%-10s %-18s " $t $sh; env "${E[@]}" ./build/wgnn bench sdpa --shape $sh --impl fused --iters 30 --warmup 5 --json | med
  done
done
} > $OUT/sdpa.txt 2>&1
cat $OUT/sdpa.txt
OUT=$OUT/m WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
cp $OUT/m/wgnn_vit_b16_b32_f32.txt $OUT/m/wgnn_vit_b16_b1_f32.txt $OUT/ 2>/dev/null
W=/tmp/wgnn-models
{
for b in 32 8; do
  for t in default 10x16x1x1 10x16x2x1 10x8x2x1 5x16x2x2; do
    E=(); [ $t != default ] && E=(WGNN_FUSED_TILE=$t)
    printf "vit b%-3s %-24s " $b "$t"
    env "${E[@]}" ./build/wgnn run --model $W/vit_b16 --input $W/vit_b16_x$b.npy --iters 20 --ref $W/vit_b16_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 \
      | sed -nE 's/^pipelined: .* ([0-9.]+) ms a run.*/pipelined \1/p; s/^resident: .* median ([0-9.]+) ms.*/resident \1/p; s/^last_hidden_state vs.*-> (.*)/\1/p' | tr "\n" " "; echo
  done
done
for t in default 16x8x4x4x16 8x8x4x8x16; do
  E=(); [ $t != default ] && E=(WGNN_GEMM_TILE=$t)
  printf "vit b1  %-24s " "$t"
  env "${E[@]}" ./build/wgnn run --model $W/vit_b16 --input $W/vit_b16_x1.npy --iters 40 --ref $W/vit_b16_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 \
    | sed -nE 's/^pipelined: .* ([0-9.]+) ms a run.*/pipelined \1/p; s/^resident: .* median ([0-9.]+) ms.*/resident \1/p; s/^last_hidden_state vs.*-> (.*)/\1/p' | tr "\n" " "; echo
done
} > $OUT/variants.txt 2>&1
cat $OUT/variants.txt
rm -rf $OUT/m
