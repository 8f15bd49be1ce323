#!/usr/bin/env bash
# session 6 call 6 (and 7, with the epilogue in the A/B tiles' memory): the 128 x 128 tile's epilogue through workgroup memory
# (EPI_SMEM: bias, activation and residual in the tile) against the bias
# pass (WGNN_GEMM_EPI=0) and, for plain products, against the loop epilogue
# (WGNN_GEMM_EPI=1 forces it); registers; encoders at batch 8 and 32
. bench/h200_env.sh
W=./build/wgnn
. bench/op_median.sh
for e in "" WGNN_GEMM_EPI=1; do
  printf "kstat %-16s " "${e:-default}"; env $e bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:3072 --in-shape f32:4096,768 --in-shape f32:768,3072 --arg activation=gelu --iters 1 2>&1 | grep -i "| gemm " | cut -d'|' -f4-8,9 | cut -c1-150 | tr '\n' ' '; echo
done
printf "kstat plain          "; bash bench/kernel_stats/kstat.sh -- bench op mm --in-shape f32:4096,768 --in-shape f32:768,3072 --iters 1 2>&1 | grep -i "| gemm " | cut -d'|' -f4-8 | tr '\n' ' '; echo
op_env chk -- addmm --in-shape f32:2304 --in-shape f32:3000,768 --in-shape f32:768,2304 --check --iters 2
op_env chkg -- addmm --in-shape f32:3072 --in-shape f32:3000,768 --in-shape f32:768,3072 --arg activation=gelu --check --iters 2
op_env chkr -- linear --in-shape f32:3000,768 --in-shape f32:2304,768 --in-shape f32:2304 --in-shape f32:3000,2304 --arg residual=true --check --iters 2
for s in "qkv 6304 2304 768 none" "fc1 6304 3072 768 gelu" "fc1t 6304 3072 768 gelu_tanh" "fc2 6304 768 3072 none" "qkv8 1576 2304 768 none" "fc1_8 1576 3072 768 gelu" "a4096 4096 4096 4096 none"; do
  set -- $s; l=$1; M=$2; N=$3; K=$4; A=$5
  args="--in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A"
  op_env $l -- addmm $args
  op_env $l WGNN_GEMM_EPI=0 -- addmm $args
done
op_env mm4096 -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
op_env mm4096 WGNN_GEMM_EPI=1 -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
op_env mmfc1 -- mm --in-shape f32:6304,768 --in-shape f32:768,3072
op_env mmfc1 WGNN_GEMM_EPI=1 -- mm --in-shape f32:6304,768 --in-shape f32:768,3072
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 8,32 --iters 20 2>&1 | grep '^{' | sed -E 's/, "torch": "[^"]*"//'
for m in vit_b16 siglip_b16; do for b in 8 32; do for e in auto 0; do
  printf "%-10s b%-3s EPI=%-4s " $m $b $e
  x=(); [ $e = 0 ] && x=(WGNN_GEMM_EPI=0)
  env "${x[@]}" $W run --model $work/$m --input $work/${m}_x$b.npy --weights f32 --iters 20 --ref $work/${m}_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E "median|pipelined|vs /" | sed -E "s/.*runs: median ([0-9.]+) ms.*upload ([0-9.]+) ms.*waiting ([0-9.]+) ms/median \1 upload \2 wait \3/; s/pipelined: [0-9]+ runs in [0-9.]+ ms, ([0-9.]+) ms a run.*(equal|DIFFER).*/pipelined \1 \2/; s/.*max \|diff\| ([^,]*),.*/diff \1/" | tr "\n" " "; echo
done; done; done
