#!/usr/bin/env bash
# session 4, device call 6: GEMM routing variants. a: vec4 A and B loads, 128 x 64 tile with K tiles of 16;
# b: a without vec4 loads of a transposed B (= build/wgnn); old: 6ba72de
set -u
. bench/h200_env.sh
L="mm_4096 addmm_4096 linear_6304x2304x768 linear_6304x768x3072 mm_1576x3072x768 linear_1576x3072x768 linear_197x768x768 mm_197x3072x768 conv2d_3x3_64_224_b8 conv2d_3x3_64_56_b8 bmm_96x197x197x64 linear_f16w_1576x3072x768"
for b in build/var/wgnn_a build/var/wgnn_b build/old/wgnn; do
  echo "=== $b"
  grep -v '^#' bench/ops_cases.txt | while IFS='|' read -r label cmd flops expr; do
    label=$(echo $label)
    echo " $L " | grep -q " $label " || continue
    echo "$label $($b bench op $cmd --iters 20 --warmup 3 --json | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j.get("median_ms"), j.get("error",""))')"
  done
done
OUT=$OUT/models OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 8,32 2>&1 | grep -E '^===|wall|median'
for m in vit_b16 siglip_b16; do for bt in 8 32; do
  echo "=== wgnn_a $m $bt: $(build/var/wgnn_a run --model /tmp/wgnn-models/$m --input /tmp/wgnn-models/${m}_x$bt.npy --weights f32 --iters 20 --ref /tmp/wgnn-models/${m}_last$bt.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E 'median|vs' | tr '\n' ' ')"
done; done
