#!/usr/bin/env bash
# session 6 call 8 (final build): the split-K reduce in quads (gemm_reduce V=4)
# and BIAS_INIT against 351ade0 (build/old/wgnn) per product; encoders at
# batch 1/8/32 against it (latency, and pipelined runs for this build);
# Qwen3 f32 decode (the graph's read-back slots changed) with greedy ids
. bench/h200_env.sh
. bench/op_median.sh
op_bin chk ./build/wgnn -- addmm --in-shape f32:768 --in-shape f32:197,3072 --in-shape f32:3072,768 --in-shape f32:197,768 --arg residual=true --check --iters 2
op_bin chkg ./build/wgnn -- addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --check --iters 2
for s in "qkv 6304 2304 768 none" "fc1 6304 3072 768 gelu" "out 6304 768 768 none" "qkv1 197 2304 768 none" "fc1_1 197 3072 768 gelu" "out1 197 768 768 none"; do
  set -- $s; l=$1; M=$2; N=$3; K=$4; A=$5
  for b in ./build/wgnn build/old/wgnn; do op_bin $l $b -- addmm --in-shape f32:$N --in-shape f32:$M,$K --in-shape f32:$K,$N --arg activation=$A; done
done
for s in "fc2 6304 768 3072" "fc2_1 197 768 3072"; do
  set -- $s
  for b in ./build/wgnn build/old/wgnn; do op_bin $1r $b -- addmm --in-shape f32:$3 --in-shape f32:$2,$4 --in-shape f32:$4,$3 --in-shape f32:$2,$3 --arg residual=true; done
done
OUT=/tmp/m8 OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > /tmp/m8.txt 2>&1
grep -E '^\{' /tmp/m8.txt | sed -E 's/, "torch": "[^"]*"//; s/"side": "torch", //'
for f in /tmp/m8/wgnn_*.txt /tmp/m8/old_*.txt; do
  printf "%-28s " $(basename $f .txt)
  grep -E "median|pipelined|GPU time|vs /" $f | grep -v pooler | sed -E 's/.*runs: median ([0-9.]+) ms.*upload ([0-9.]+) ms.*waiting ([0-9.]+) ms/median \1 upload \2 wait \3/; s/pipelined: [0-9]+ runs in [0-9.]+ ms, ([0-9.]+) ms a run.*(equal|DIFFER).*/pipelined \1 \2/; s/GPU time: ([0-9.]+) ms summed.*/gpu_sum \1/; s/.*max \|diff\| ([^,]*),.*/diff \1/' | tr "\n" " "; echo
done
OUT=/tmp/l8 WEIGHTS="f32" ITERS=3 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -v "Writing\|Loading\|warn" | cut -c1-220
