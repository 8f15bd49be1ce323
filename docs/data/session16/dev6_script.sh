#!/usr/bin/env bash
# Session 16, call 6: why q8 decode is slower than f16 (1.417 against 1.210
# ms a token; its profiled lm_head 124.6 us against 100.5): the decode
# products alone (bench/h200_gemv.sh, M = 1), then the products with the
# prologue the graph gives them (q8: rms_norm_weight with the norm's
# weight; f16: rms_norm, the weight folded), `bench op` medians.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
ITERS=50 bash bench/h200_gemv.sh
for s in 1024:4096 1024:6144 1024:151936; do
  k=${s%%:*} n=${s#*:}
  op_env "f16rms $s" -- linear --in-shape "f32:1,$k" --in-shape "f16:$n,$k" --arg prologue=rms_norm --iters 50
  op_env "q8rmsw $s" -- linear_q8 --in-shape "f32:1,$k" --in-shape "i32:$n,$((k / 4)){-2147483647,2147483647}" --in-shape "f32:$n" --in-shape "f32:$k" --arg prologue=rms_norm_weight --iters 50
  op_env "q8rms $s" -- linear_q8 --in-shape "f32:1,$k" --in-shape "i32:$n,$((k / 4)){-2147483647,2147483647}" --in-shape "f32:$n" --arg prologue=rms_norm --iters 50
  op_env "q8rmsw u2 $s" WGNN_GEMV_UNROLL=2 -- linear_q8 --in-shape "f32:1,$k" --in-shape "i32:$n,$((k / 4)){-2147483647,2147483647}" --in-shape "f32:$n" --in-shape "f32:$k" --arg prologue=rms_norm_weight --iters 50
done
