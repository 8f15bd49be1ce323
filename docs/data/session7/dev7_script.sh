#!/usr/bin/env bash
# session 7 call 7: the 8x8x2x1 attention tile (S_q, S_kv <= 256 on GPUs) checked against the CPU reference on
# the H200: causal, GQA, D = 128, masks; and wave-planned products with odd shapes.
. bench/h200_env.sh
. bench/op_median.sh
for c in "sdpa --in-shape f32:2,16,197,128 --in-shape f32:2,8,197,128 --in-shape f32:2,8,197,128 --arg causal=top_left --arg enable_gqa=true" \
         "sdpa --in-shape f32:1,16,150,128 --in-shape f32:1,8,250,128 --in-shape f32:1,8,250,128 --arg causal=bottom_right --arg enable_gqa=true" \
         "sdpa --in-shape f32:4,12,197,64 --in-shape f32:4,12,197,64 --in-shape f32:4,12,197,64 --in-shape f32:4,12,197,197" \
         "sdpa_qkvpacked --in-shape f32:3,197,3,12,64" \
         "sdpa_qkvpacked --in-shape f32:2,101,3,4,80"; do
  op_env chk -- $c --check --iters 2
done
for c in "addmm --in-shape f32:1001 --in-shape f32:3001,256 --in-shape f32:256,1001 --arg activation=gelu_tanh" \
         "linear --in-shape f32:2999,512 --in-shape f32:1500,512 --in-shape f32:1500 --in-shape f32:2999,1500 --arg residual=true" \
         "addmm --in-shape f32:1576,1 --in-shape f32:1576,3072 --in-shape f32:3072,768"; do
  op_env chk -- $c --check --iters 2
done
./build/wgnn bench sdpa --shape 1,12,197,197,64 --check --iters 20 2>&1 | tail -1
