#!/usr/bin/env bash
# session 11 call 5: more small-M tiles on ViT-B/16's batch-1 products (16-row
# tiles pad 197 rows to 208 where 32-row ones pad to 224; K tiles of 8),
# with the K slices split_count gives the default tile; then the encoder
# whole with the best of them (WGNN_GEMM_TILE).
. bench/h200_env.sh
. bench/op_median.sh
{
M=197
for t in default 8x4x4x8x16 16x4x4x8x16 16x4x4x4x16 8x8x4x8x8 8x8x4x4x16 16x8x4x4x16; do
  E=(); [ $t != default ] && E=(WGNN_GEMM_TILE=$t)
  op_env "fc1" "${E[@]}" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
  op_env "fc2" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  op_env "qkv" "${E[@]}" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
  op_env "out" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
for t in 8x4x4x8x16 16x4x4x8x16 16x4x4x4x16 8x8x4x8x8 8x8x4x4x16; do
  echo "== kstat $t"
  WGNN_GEMM_TILE=$t bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --iters 1 2>&1 | grep "| gemm |"
done
python3 bench/torch_models.py /tmp/wgnn-models --batches 1 --iters 5 > /dev/null 2>&1
W=/tmp/wgnn-models
for i in 1 2; do
  for t in default 8x4x4x8x16 16x4x4x8x16 16x4x4x4x16; do
    E=(); [ $t != default ] && E=(WGNN_GEMM_TILE=$t)
    printf "vit b1 %-20s " $t
    env "${E[@]}" ./build/wgnn run --model $W/vit_b16 --input $W/vit_b16_x1.npy --iters 60 --ref $W/vit_b16_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 \
      | sed -nE 's/^pipelined: .* ([0-9.]+) ms a run.*/pipelined \1/p; s/^last_hidden_state vs.*-> (.*)/\1/p' | tr "\n" " "; echo
  done
done
