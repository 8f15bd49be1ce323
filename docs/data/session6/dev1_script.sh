#!/usr/bin/env bash
# session 6 call 1: double-buffered GEMM tiles (WGNN_GEMM_DB=1, one barrier a
# K tile) against the single-buffered kernel, per product and per model
. bench/h200_env.sh
W=./build/wgnn
. bench/op_median.sh
# correctness of the double-buffered kernel on this GPU, every tile
for t in 16x16x8x8x8 16x16x8x8x16 16x16x8x4x16 16x16x4x4x16 16x8x4x8x16 8x8x4x4x8; do
  op_env chk WGNN_GEMM_DB=1 WGNN_GEMM_TILE=$t -- addmm --in-shape f32:333 --in-shape f32:301,517 --in-shape f32:517,333 --check --iters 2
  op_env chkT WGNN_GEMM_DB=1 WGNN_GEMM_TILE=$t -- linear --in-shape f32:300,516 --in-shape f32:332,516 --check --iters 2
done
op_env mm4096 -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
op_env mm4096 WGNN_GEMM_DB=1 -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
op_env mm4096 WGNN_GEMM_DB=1 WGNN_GEMM_TILE=16x16x8x8x16 -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
for shape in "qkv 6304 2304 768 none" "fc1 6304 3072 768 gelu" "fc2 6304 768 3072 none" "out 6304 768 768 none" \
             "qkv1 197 2304 768 none" "fc1_1 197 3072 768 gelu" "fc2_1 197 768 3072 none" "out1 197 768 768 none"; do
  set -- $shape; l=$1; M=$2; N=$3; K=$4; A=$5
  args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
  op_env $l -- addmm $args
  op_env $l WGNN_GEMM_DB=1 -- addmm $args
done
op_env qkv WGNN_GEMM_DB=1 WGNN_GEMM_TILE=16x16x8x8x16 -- addmm --in-shape f32:2304 --in-shape f32:6304,768 --in-shape f32:768,2304
op_env fc1 WGNN_GEMM_DB=1 WGNN_GEMM_TILE=16x16x8x8x16 -- addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu
# models: ViT-B/16 batch 1 and 32, f32
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 1,32 --iters 20 2>&1 | tail -4
for b in 1 32; do for db in 0 1; do
  printf "vit b%-3s DB=%s " $b $db
  WGNN_GEMM_DB=$db $W run --model $work/vit_b16 --input $work/vit_b16_x$b.npy --weights f32 --iters 20 --ref $work/vit_b16_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E "median|vs /" | sed -E "s/.*runs: median ([0-9.]+) ms.*waiting ([0-9.]+) ms/median \1 wait \2/; s/.*max \|diff\| ([^,]*),.*/diff \1/" | tr "\n" " "; echo
done; done
