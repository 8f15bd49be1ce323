#!/usr/bin/env bash
# session 7 call 8: the batch-1 products (M = 197) on the 128 x 128 tile in K slices
# (WGNN_GEMM_TILE=16x16x8x8x8, WGNN_GEMM_SPLIT=S) against the default 32 x 128 tile;
# then whole batch-1 encoders so.
. bench/h200_env.sh
. bench/op_median.sh
T=WGNN_GEMM_TILE=16x16x8x8x8
{
for shape in "qkv 2304 768 none" "out 768 768 none" "fc1 3072 768 gelu" "fc2 768 3072 none"; do
  set -- $shape; l=$1; N=$2; K=$3; A=$4
  args="--in-shape f32:$N --in-shape f32:197,$K --in-shape f32:$K,$N --arg activation=$A"
  op_env "$l" -- addmm $args
  for s in 2 3 4 6 8; do op_env "$l" $T WGNN_GEMM_SPLIT=$s -- addmm $args; done
done
op_env chk $T WGNN_GEMM_SPLIT=6 -- addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --check --iters 2
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 1 --iters 10 2>/dev/null | grep '^{' > $OUT/torch.jsonl
for pass in 1 2; do
for m in vit_b16 siglip_b16; do
  for v in default "$T,WGNN_GEMM_SPLIT=4" "$T,WGNN_GEMM_SPLIT=6" "$T,WGNN_GEMM_SPLIT=8"; do
    e=(); [ "$v" != default ] && IFS=, read -ra e <<< "$v"
    env "${e[@]}" ./build/wgnn run --model $work/$m --input $work/${m}_x1.npy --weights f32 --iters 30 \
      --ref $work/${m}_last1.npy --atol 2e-3 --rtol 2e-3 > $OUT/run.txt 2>&1
    printf "p%s %-10s %-48s " $pass $m "$v"
    sed -nE 's/.*runs: median ([0-9.]+) ms.*recording and submitting ([0-9.]+) ms.*/single \1 rec \2/p; s/^pipelined: .* ([0-9.]+) ms a run.*/pipelined \1/p; s/.*max \|diff\| ([^,]*),.*-> (.*)/diff \1 \2/p' $OUT/run.txt | tr "\n" " "; echo
  done
done; done
