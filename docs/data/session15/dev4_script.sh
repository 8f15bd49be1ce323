#!/usr/bin/env bash
# Session 15, call 4: where a Qwen3-0.6B-shaped decode step's unprofiled
# time goes. bench/h200_llm.sh (f32, f16, q8, PyTorch in the same call),
# then build/skip/wgnn: this build with one local change (not committed):
# graph runs leave out the dispatches of the nodes whose op is named in
# WGNN_HACK_SKIP (lm_head kept), so the outputs are wrong and only the
# times mean something. Decode ms a token at context 512-544, two rounds.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
OUT0=$OUT
OUT=$OUT0/llm WEIGHTS="f32 f16 q8" ITERS=3 NEW=32 bash bench/h200_llm.sh 2>&1 | grep -E 'wgnn:|===|side|greedy|first' | cut -c1-330
work=/tmp/wgnn-llm
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
for round in 1 2; do
  for w in f32 f16 q8; do
    for sk in none qkv_sdpa_kvcache linear linear,qkv_sdpa_kvcache; do
      e=(); [ $sk != none ] && e=(WGNN_HACK_SKIP=$sk)
      echo "round $round $w skip $sk: $(env "${e[@]}" build/skip/wgnn generate --model $work/qwen3 --prompt-ids "$ids" --max-new-tokens 32 \
        --ignore-eos --weights $w --max-context 640 --iters 3 2>&1 | grep -o 'decode [0-9.]* tokens/s ([0-9.]* ms/token')"
    done
  done
done
