#!/usr/bin/env bash
# Session 23 call 5: (1) linear's prefetch=true in the decoders (each
# decode-step product's GEMV appends workgroups that read the next
# product's matrix into L2; new, on by default on GPUs) against
# WGNN_PREFETCH=0, the same build: Qwen3-0.6B shape, 512-token prompt, 32
# new tokens, --iters 5, f32 / f16 / q8, three rounds, the order rotated;
# greedy ids compared. (2) call 4's question, in a scratch build without
# the prefetch (build/skip/wgnn: WGNN_HACK_SKIP leaves the named ops'
# dispatches out, WGNN_HACK_DOUBLE records them twice, the lm_head kept
# as it is; outputs wrong, times only), f16: what the 112 layer products
# cost cold and again with their weights in L2.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" 2>&1 | grep -v "Writing model" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
gen() { # label env... -- weights
  local l=$1; shift; local e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
  echo "$l: $(env "${e[@]}" ${BIN:-./build/wgnn} generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens 32 --ignore-eos \
    --weights $1 --max-context 640 --iters 5 --ids-out /tmp/ids_$(echo $l | tr ' ' _).npy 2>&1 | grep -E '^wgnn|rror' |
    sed 's/wgnn: qwen3, //; s/(medians of --iters runs); graphs built in.*//; s/prompt 512 tokens, //; s/generated 32 tokens, stopped at --max-new-tokens; //')"
}
for round in 1 2 3; do
  for w in f32 f16 q8; do
    if [ $((round % 2)) = 1 ]; then gen "r$round $w pf" -- $w; gen "r$round $w nopf" WGNN_PREFETCH=0 -- $w
    else gen "r$round $w nopf" WGNN_PREFETCH=0 -- $w; gen "r$round $w pf" -- $w; fi
  done
done
for w in f32 f16 q8; do cmp /tmp/ids_r1_${w}_pf.npy /tmp/ids_r1_${w}_nopf.npy && echo "$w: greedy ids equal with and without prefetch"; done
python3 - "$work/qwen3/greedy_ids.npy" /tmp/ids_r1_*_pf.npy <<'PY'
import sys, numpy as np
ref = np.load(sys.argv[1])
for f in sys.argv[2:]:
    ids = np.load(f)[512:]; n = min(len(ids), len(ref)); eq = 0
    while eq < n and ids[eq] == ref[eq]: eq += 1
    print(f"{f}: first {eq} of {n} greedy ids equal PyTorch's")
PY
echo "== hot and cold products (scratch build, f16)"
for round in 1 2; do
  for v in "base:" "skip:WGNN_HACK_SKIP=linear" "double:WGNN_HACK_DOUBLE=linear"; do
    BIN=./build/skip/wgnn gen "r$round f16 ${v%%:*}" ${v#*:} -- f16
  done
done
