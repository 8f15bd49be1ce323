#!/usr/bin/env bash
# session 7 call 4: the wave plan wider (WGNN_GEMM_WAVES=2: products with a
# bias and a wave of 128 x 128 tiles through the bias pass and the plan)
# and the 8x8x2x1 attention tile, per product and for whole encoders;
# the batch-32 q|k|v and fc1 against bed8c80 (build/old/wgnn), which call 3
# printed past its output's end.
. bench/h200_env.sh
. bench/op_median.sh
{
op_env chkw WGNN_GEMM_WAVES=2 -- addmm --in-shape f32:768 --in-shape f32:1576,3072 --in-shape f32:3072,768 --check --iters 2
for shape in "qkv 2304 768 none" "fc1 3072 768 gelu" "fc2 768 3072 none" "out 768 768 none"; do
  set -- $shape; l=$1; N=$2; K=$3; A=$4
  for M in 1576 6304; do
    args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
    op_env "$l-$M" -- addmm $args
    op_env "$l-$M" WGNN_GEMM_WAVES=2 -- addmm $args
    [ $M = 6304 ] && op_bin "$l-$M" build/old/wgnn -- addmm $args
  done
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 1,8,32 --iters 20 2>/dev/null | grep '^{' > $OUT/torch.jsonl
python3 -c 'import json,sys
for l in open(sys.argv[1]): d=json.loads(l); print("torch", d["model"], d["batch"], "%.3f" % d["median_ms"])' $OUT/torch.jsonl
for m in vit_b16 siglip_b16; do for b in 1 8 32; do
  for v in default WGNN_GEMM_WAVES=2 WGNN_FUSED_TILE=8x8x2x1,WGNN_FUSED_FLAGS=g; do
    e=(); [ $v != default ] && IFS=, read -ra e <<< "$v"
    env "${e[@]}" ./build/wgnn run --model $work/$m --input $work/${m}_x$b.npy --weights f32 --iters 20 \
      --ref $work/${m}_last$b.npy --atol 2e-3 --rtol 2e-3 > $OUT/run.txt 2>&1
    printf "%-10s b%-3s %-44s " $m $b "$v"
    sed -nE 's/.*runs: median ([0-9.]+) ms.*/single \1/p; s/^pipelined: .* ([0-9.]+) ms a run.*/pipelined \1/p; s/.*max \|diff\| ([^,]*),.*-> (.*)/diff \1 \2/p' $OUT/run.txt | tr "\n" " "; echo
  done
done; done
