#!/usr/bin/env bash
# Session 23 call 3: decode steps in flight (WGNN_DECODE_DEPTH, new): 1 (no
# pipelining), 2 (the default so far: one step recorded while one runs), 3
# (two queued while the host records the next). A Qwen3-0.6B-shaped model
# (bench/torch_llm.py), 512-token prompt, 32 tokens generated, context
# 512-544, --iters 5; f32, f16, q8; three rounds, the order of the depths
# rotated each round; greedy ids compared across depths.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" 2>&1 | grep -v "Writing model" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
D=(1 2 3)
for round in 1 2 3; do
  for w in f32 f16 q8; do
    for k in 0 1 2; do
      d=${D[$(( (k + round - 1) % 3 ))]}
      echo "round $round $w depth $d: $(WGNN_DECODE_DEPTH=$d ./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" \
        --max-new-tokens 32 --ignore-eos --weights $w --max-context 640 --iters 5 --ids-out /tmp/ids_${w}_$d.npy 2>&1 | grep -E '^wgnn|rror' | sed 's/wgnn: qwen3, //; s/(medians of --iters runs); graphs built in.*//')"
    done
  done
done
for w in f32 f16 q8; do cmp /tmp/ids_${w}_1.npy /tmp/ids_${w}_2.npy && cmp /tmp/ids_${w}_2.npy /tmp/ids_${w}_3.npy && echo "$w: ids equal at depths 1, 2, 3"; done
