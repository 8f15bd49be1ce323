#!/usr/bin/env bash
# Session 23 call 7: the decode GEMVs' shape knobs in a whole decode step
# (earlier sweeps timed the products alone with `bench op`, whose floor
# hides ~1 us): WGNN_GEMV_LANES (lanes a column), WGNN_GEMV_WG (threads a
# workgroup), WGNN_GEMV_UNROLL (16-byte loads a lane in flight), Qwen3-0.6B
# shape, 512-token prompt, 32 new tokens, --iters 5, f16 and f32, two
# rounds. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 1 --decode 8 --save "$work/qwen3" 2>&1 | grep -v "Writing model" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
V=("base:" "l64:WGNN_GEMV_LANES=64" "l128:WGNN_GEMV_LANES=128" "wg128:WGNN_GEMV_WG=128" "wg512:WGNN_GEMV_WG=512"
   "u2:WGNN_GEMV_UNROLL=2" "u8:WGNN_GEMV_UNROLL=8" "l64u2:WGNN_GEMV_LANES=64 WGNN_GEMV_UNROLL=2" "l128u1:WGNN_GEMV_LANES=128 WGNN_GEMV_UNROLL=1")
for round in 1 2; do
  for w in f16 f32; do
    for v in "${V[@]}"; do
      echo "r$round $w ${v%%:*}: $(env ${v#*:} ./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens 32 --ignore-eos \
        --weights $w --max-context 640 --iters 5 2>&1 | grep -E '^wgnn|rror' | grep -oE 'decode [0-9.]+ tokens/s \([0-9.]+ ms/token|rror.*')"
    done
  done
done
