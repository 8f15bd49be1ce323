#!/usr/bin/env bash
# Session 19 call 2: (1) the tests that run the data-error kernels
# (test_core, test_ops: its data cases run without a filter; test_lm) on the
# H200 with 49e1e73's shared data_err include; (2) q8 decode with
# docs/data/session17/q8_xs.patch (build/q8xs/wgnn, built as call 1's
# header says) against WGNN_Q8_XS=0 in the same binary and against main's
# binary: call 1's two rounds were too noisy to decide (1.40 / 1.98 ms with
# it), so three rounds, the order rotated each round, --iters 5.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
# the tests find their data under the build's source dir, /work/main
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
for t in test_core test_ops test_lm; do
  start=$(date +%s.%N)
  timeout 240 ./build/$t > /tmp/$t.log 2>&1; rc=$?
  echo "$t rc=$rc ($(echo "$(date +%s.%N) - $start" | bc) s): $(tail -1 /tmp/$t.log)"
done
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" 2>&1 | grep -v "Writing model" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
V=("main:./build/wgnn:1" "xs:./build/q8xs/wgnn:1" "xs_off:./build/q8xs/wgnn:0")
for round in 1 2 3; do
  for k in 0 1 2; do
    v=${V[$(( (k + round - 1) % 3 ))]}
    IFS=: read -r label bin xs <<<"$v"
    echo "round $round q8 $label: $(WGNN_Q8_XS=$xs $bin generate --model "$work/qwen3" --prompt-ids "$ids" \
      --max-new-tokens 32 --ignore-eos --weights q8 --max-context 640 --iters 5 2>&1 | grep -E '^wgnn|rror')"
  done
done
for w in f32 f16; do
  echo "$w main: $(./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" \
    --max-new-tokens 32 --ignore-eos --weights $w --max-context 640 --iters 5 2>&1 | grep -E '^wgnn|rror')"
done
# where q8's step goes, with and without the patch's staging: the profiled
# decode step's top nodes and its by-op sums
for xs in 1 0; do
  echo "== q8 profile, WGNN_Q8_XS=$xs"
  WGNN_Q8_XS=$xs ./build/q8xs/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens 8 --ignore-eos \
    --weights q8 --max-context 640 --profile 2>&1 | sed -n '/a decode step/,$p' | grep -E "decode step|lm_head|by op|^  [a-z_0-9]+ +[0-9]+ nodes|GPU time" | head -16
done
# layer_norm's deviations as (x - x0) - mean(x - x0) (703d86b): one more
# subtraction an element in reduce_rows.wgsl; build/q8xs/wgnn (built from
# 6a727ce) has the old kernel. Two rounds.
for r in 1 2; do
  for bin in ./build/wgnn ./build/q8xs/wgnn; do
    for sh in 197,768 6304,768 32,4096; do
      echo "round $r $bin: $($bin bench op layer_norm --in-shape f32:$sh --in-shape f32:${sh#*,} --in-shape f32:${sh#*,} \
        --arg normalized_shape=${sh#*,} --iters 50 --warmup 5 2>&1 | grep -o 'float32 \[[0-9,]*\].*median [0-9.]* ms')"
    done
  done
done
