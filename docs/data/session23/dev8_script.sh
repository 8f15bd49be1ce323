#!/usr/bin/env bash
# Session 23 call 8: call 7 (same protocol) found more lanes a column
# slower (64 and 128 for every product against the default's 32-128 by
# shape): 8, 16 and 32 lanes for every product, against the default; two
# rounds, f16 and f32. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 1 --decode 8 --save "$work/qwen3" 2>&1 | grep -v "Writing model" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
V=("base:" "l32:WGNN_GEMV_LANES=32" "l16:WGNN_GEMV_LANES=16" "l16u8:WGNN_GEMV_LANES=16 WGNN_GEMV_UNROLL=8" "l8:WGNN_GEMV_LANES=8")
for round in 1 2; do
  for w in f16 f32; do
    for v in "${V[@]}"; do
      echo "r$round $w ${v%%:*}: $(env ${v#*:} ./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens 32 --ignore-eos \
        --weights $w --max-context 640 --iters 5 2>&1 | grep -E '^wgnn|rror' | grep -oE 'decode [0-9.]+ tokens/s \([0-9.]+ ms/token|rror.*')"
    done
  done
done
