#!/usr/bin/env bash
# session 6 call 2: the bias in the GEMM accumulators (gemm.wgsl BIAS_INIT) on
# the 128 x 128 tile (default now) against the bias pass (WGNN_GEMM_BIAS_INIT=0)
# and on every tile (=1); ViT-B/16 and SigLIP-B/16 batch 32 and 8
. bench/h200_env.sh
W=./build/wgnn
. bench/op_median.sh
op_env chk -- addmm --in-shape f32:2304 --in-shape f32:1100,768 --in-shape f32:768,2304 --check --iters 2
op_env chkg -- addmm --in-shape f32:3072 --in-shape f32:1100,768 --in-shape f32:768,3072 --arg activation=gelu --check --iters 2
op_env chkl -- linear --in-shape f32:1100,768 --in-shape f32:2304,768 --in-shape f32:2304 --check --iters 2
op_env add4096 -- addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096
op_env add4096 WGNN_GEMM_BIAS_INIT=0 -- addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096
for shape in "qkv 6304 2304 768 none" "fc1 6304 3072 768 gelu" "fc2 6304 768 3072 none" "out 6304 768 768 none" \
             "qkv8 1576 2304 768 none" "fc1_8 1576 3072 768 gelu"; do
  set -- $shape; l=$1; M=$2; N=$3; K=$4; A=$5
  args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
  op_env $l -- addmm $args
  op_env $l WGNN_GEMM_BIAS_INIT=0 -- addmm $args
  op_env $l WGNN_GEMM_BIAS_INIT=1 -- addmm $args
done
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 8,32 --iters 20 2>&1 | grep '^{'
for m in vit_b16 siglip_b16; do for b in 8 32; do for bi in auto 0; do
  printf "%-10s b%-3s BIAS_INIT=%-4s " $m $b $bi
  e=(); [ $bi = 0 ] && e=(WGNN_GEMM_BIAS_INIT=0)
  env "${e[@]}" $W run --model $work/$m --input $work/${m}_x$b.npy --weights f32 --iters 20 --ref $work/${m}_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E "median|vs /" | sed -E "s/.*runs: median ([0-9.]+) ms.*upload ([0-9.]+) ms.*waiting ([0-9.]+) ms/median \1 upload \2 wait \3/; s/.*max \|diff\| ([^,]*),.*/diff \1/" | tr "\n" " "; echo
done; done; done
