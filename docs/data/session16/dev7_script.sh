#!/usr/bin/env bash
# Session 16, call 7: linear_q8's columns a thread (WGNN_Q8_NC: x and the
# norm's weight loaded once for NC rows of W) at the decode products with
# the graph's prologues (rms_norm_weight: q|k|v, gate|up, lm_head;
# swiglu: down; none: o), `bench op` medians, two rounds; then Qwen3
# decode q8 with the best. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
q8() { # label env -- K N prologue
  local label=$1; shift; local e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
  local k=$1 n=$2 pre=$3 x=$1; extra=()
  [ $pre = rms_norm_weight ] && extra=(--in-shape "f32:$k")
  [ $pre = swiglu ] && x=$((2 * k))
  op_env "$label ${k}x$n $pre" "${e[@]}" -- linear_q8 --in-shape "f32:1,$x" --in-shape "i32:$n,$((k / 4)){-2147483647,2147483647}" \
    --in-shape "f32:$n" "${extra[@]}" --arg prologue=$pre --iters 50
}
for r in 1 2; do
  for c in 0 1 2 4 8; do
    e=(); [ $c != 0 ] && e=(WGNN_Q8_NC=$c)
    q8 "nc$c" "${e[@]}" -- 1024 4096 rms_norm_weight
    q8 "nc$c" "${e[@]}" -- 1024 6144 rms_norm_weight
    q8 "nc$c" "${e[@]}" -- 1024 151936 rms_norm_weight
    q8 "nc$c" "${e[@]}" -- 2048 1024 none
    q8 "nc$c" "${e[@]}" -- 3072 1024 swiglu
  done
done
