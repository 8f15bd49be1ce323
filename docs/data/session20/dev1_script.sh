#!/usr/bin/env bash
# Session 20 call 1: (1) every test binary on the GPU (the suite runs on
# lavapipe in CI; session 19 changed kernels: the shared data_err include,
# layer_norm's shifted deviations); (2) session 19's pending q8 A/B
# (docs/data/session19/dev2_script.sh's rounds): docs/data/session17/q8_xs.patch
# built into build/q8xs/wgnn from 9fdb026 (git worktree of HEAD, git apply,
# cmake --build --target wgnn_cli), against WGNN_Q8_XS=0 in the same binary
# and against main's binary, three rounds, the order rotated, --iters 5;
# then f32 / f16 decode and the profiled q8 step with and without staging.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in build/test_*; do
  start=$(date +%s.%N)
  timeout 200 ./$t > /tmp/$(basename $t).log 2>&1; rc=$?
  echo "$(basename $t) rc=$rc ($(python3 -c "import time; print(round(time.time() - $start, 1))") s): $(tail -1 /tmp/$(basename $t).log)"
  [ $rc -eq 0 ] || grep -iE "fail|error" /tmp/$(basename $t).log | head -5
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
for xs in 1 0; do
  echo "== q8 profile, WGNN_Q8_XS=$xs"
  WGNN_Q8_XS=$xs ./build/q8xs/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens 8 --ignore-eos \
    --weights q8 --max-context 640 --profile 2>&1 | sed -n '/a decode step/,$p' | grep -E "decode step|lm_head|by op|^  [a-z_0-9]+ +[0-9]+ nodes|GPU time" | head -16
done
