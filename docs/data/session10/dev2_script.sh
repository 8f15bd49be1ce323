#!/usr/bin/env bash
# session 10 call 2: gemm.wgsl with two staging buffers and one barrier a K
# tile (WGNN_GEMM_DB=1; build/old2/wgnn is a wrapper that sets it) against
# one buffer and two barriers: the GEMM tests with it on the H200, registers,
# the encoders' products alone, the encoders at batch 1 and 32; and
# gemm_reduce_ln's lanes a row (WGNN_LN_LANES) on the out projection + norm.
. bench/h200_env.sh
. bench/op_median.sh
. bench/models_summary.sh
WGNN_GEMM_DB=1 ./build/test_ops mm addmm linear matmul bmm 2>&1 | tail -1
WGNN_GEMM_DB=1 ./build/test_gemm 2>&1 | tail -1
for db in 0 1; do
  echo "== kstat DB=$db"
  WGNN_GEMM_DB=$db bash bench/kernel_stats/kstat.sh -- bench op mm --in-shape f32:4096,4096 --in-shape f32:4096,4096 --iters 1 2>&1 | tail -4
  WGNN_GEMM_DB=$db bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --iters 1 2>&1 | tail -4
done
{
for db in 0 1; do
  E=(WGNN_GEMM_DB=$db)
  for M in 197 6304; do
    op_env "fc1-$M" "${E[@]}" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
    op_env "fc2-$M" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 --arg residual=true
    op_env "qkv-$M" "${E[@]}" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
    op_env "out-$M" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 --arg residual=true
  done
  op_env "qkvmm-6304" "${E[@]}" -- mm --in-shape f32:6304,768 --in-shape f32:768,2304
  op_env "mm-4096" "${E[@]}" -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
  op_env "mm-1576" "${E[@]}" -- mm --in-shape f32:1576,768 --in-shape f32:768,3072
done
for M in 6304 197; do
  for l in default 32 96 128 192; do
    E=(); [ $l != default ] && E=(WGNN_LN_LANES=$l)
    op_env "outln-$M" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  done
done
op_env "chk192" WGNN_LN_LANES=192 -- addmm --in-shape f32:768 --in-shape f32:197,768 --in-shape f32:768,768 --in-shape f32:197,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true --check --iters 2
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
OUT=$OUT/m OLD=build/old2/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
for f in wgnn_vit_b16_b1_f32 old_vit_b16_b1_f32 wgnn_vit_b16_b32_f32 old_vit_b16_b32_f32; do
  echo "== $f"; grep -h -A3 "^by op" $OUT/m/$f.txt
done
rm -rf $OUT/m
