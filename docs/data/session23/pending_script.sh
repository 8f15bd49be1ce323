#!/usr/bin/env bash
# Pending (session 23 had no device time left): does a decode step's
# attention go faster as ONE dispatch per layer? Since d742404 (sdpa_decode's
# ONE), a single key split writes the output itself with no split-KV reduce.
# WGNN_DECODE_WGS=8 gives Qwen3-0.6B's 8 kv heads one split each (one
# workgroup a kv head reading its 512 keys; today: 20 splits + the reduce),
# WGNN_DECODE_WG its threads (more subgroups share the keys inside the
# workgroup; WGNN_DECODE_WGS=16: two splits and the reduce, for the trend).
# Qwen3-0.6B shape, 512-token prompt, 32 new tokens, --iters 5,
# f32 / f16 / q8, three rounds, the order rotated; greedy ids compared.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 1 --decode 32 --save "$work/qwen3" 2>&1 | grep -v "Writing model" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
V=("base:" "one256:WGNN_DECODE_WGS=8" "one512:WGNN_DECODE_WGS=8 WGNN_DECODE_WG=512" "one1024:WGNN_DECODE_WGS=8 WGNN_DECODE_WG=1024"
   "two1024:WGNN_DECODE_WGS=16 WGNN_DECODE_WG=1024")
for round in 1 2 3; do
  for w in f32 f16 q8; do
    for k in 0 1 2 3 4; do
      v=${V[$(( (k + round - 1) % 5 ))]}
      l=${v%%:*}
      echo "r$round $w $l: $(env ${v#*:} ./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens 32 \
        --ignore-eos --weights $w --max-context 640 --iters 5 --ids-out /tmp/ids_${w}_$l.npy 2>&1 | grep -E '^wgnn|rror' |
        grep -oE 'decode [0-9.]+ tokens/s \([0-9.]+ ms/token|rror.*')"
    done
  done
done
for w in f32 f16 q8; do for l in one256 one512 one1024 two1024; do
  cmp -s /tmp/ids_${w}_base.npy /tmp/ids_${w}_$l.npy && echo "$w $l: ids equal the default's" || echo "$w $l: ids DIFFER"
done; done
