#!/usr/bin/env bash
# session 11 call 7: the bias (and GELU) in the 128 x 128 tile's
# accumulators and epilogue (WGNN_GEMM_BIAS_INIT=1: one dispatch, no wave
# plan) against the plain product and a bias pass (the default), now that
# the tile has two staging buffers: ViT-B/16's batch-32 and batch-8
# products, registers of both, and the encoder whole at batch 32.
. bench/h200_env.sh
. bench/op_median.sh
WGNN_GEMM_BIAS_INIT=1 ./build/test_ops addmm linear 2>&1 | tail -1
{
for e in default WGNN_GEMM_BIAS_INIT=1; do
  E=(); [ $e != default ] && E=($e)
  for M in 6304 1576; do
    op_env "fc1-$M" "${E[@]}" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
    op_env "qkv-$M" "${E[@]}" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
    op_env "fc2-$M" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 --arg residual=true
  done
  op_env "mm4096b" "${E[@]}" -- addmm --in-shape f32:4096 --in-shape f32:4096,4096 --in-shape f32:4096,4096
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
for e in default WGNN_GEMM_BIAS_INIT=1; do
  E=(); [ $e != default ] && E=($e)
  echo "== kstat $e"
  env "${E[@]}" bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu --iters 1 2>&1 | grep "| gemm"
done
python3 bench/torch_models.py /tmp/wgnn-models --batches 32 --iters 5 > /dev/null 2>&1
W=/tmp/wgnn-models
for i in 1 2; do
  for e in default WGNN_GEMM_BIAS_INIT=1; do
    E=(); [ $e != default ] && E=($e)
    printf "vit b32 %-24s " $e
    env "${E[@]}" ./build/wgnn run --model $W/vit_b16 --input $W/vit_b16_x32.npy --iters 20 --ref $W/vit_b16_last32.npy --atol 2e-3 --rtol 2e-3 2>&1 \
      | sed -nE 's/^pipelined: .* ([0-9.]+) ms a run.*/pipelined \1/p; s/^resident: .* median ([0-9.]+) ms.*/resident \1/p; s/^last_hidden_state vs.*-> (.*)/\1/p' | tr "\n" " "; echo
  done
done
