#!/usr/bin/env bash
# Qwen3-0.6B-shaped decoder (random init, real sizes) on the NVIDIA H200:
# PyTorch eager fp32 (TF32 off) and `wgnn generate` in one device call
# (docs/PERFORMANCE.md). Run from the repo root on the device machine with
# the build carried:  bash bench/h200_llm.sh
# Env: PROMPT (512), NEW (64 tokens generated), ITERS (5), WEIGHTS ("f32 f16 q8"),
# OLD (another wgnn binary, e.g. an earlier commit's build, run after each
# format: before/after in one call), VARIANTS (extra f32 runs, each
# "label:VAR=value[,VAR=value]", e.g. "fused:WGNN_SDPA_DECODE=0
# onesubmit:WGNN_GRAPH_CHUNK=0").
set -u
cd "$(dirname "$0")/.."
. bench/h200_env.sh
work=/tmp/wgnn-llm
out=${OUT:-/tmp/wgnn-bench}
mkdir -p "$work" "$out"
P=${PROMPT:-512}
N=${NEW:-64}
python3 bench/torch_llm.py --prompt "$P" --iters 10 --decode "$N" --save "$work/qwen3" | tee "$out/torch_llm.jsonl"
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
for w in ${WEIGHTS:-f32 f16 q8}; do
  echo "=== wgnn generate weights $w"
  ./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens "$N" --ignore-eos \
    --weights "$w" --max-context $((P + N + 64)) --iters "${ITERS:-5}" --profile --ids-out "$out/ids_$w.npy" \
    > "$out/wgnn_llm_$w.txt" 2>&1
  grep -E "^wgnn|GPU time" "$out/wgnn_llm_$w.txt"
done
if [ -n "${OLD:-}" ]; then
  for w in ${WEIGHTS:-f32 f16 q8}; do
    echo "=== $OLD generate weights $w"
    "$OLD" generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens "$N" --ignore-eos \
      --weights "$w" --max-context $((P + N + 64)) --iters "${ITERS:-5}" --profile --ids-out "$out/ids_old_$w.npy" \
      > "$out/old_llm_$w.txt" 2>&1
    grep -E "^wgnn|GPU time" "$out/old_llm_$w.txt"
  done
fi
for v in ${VARIANTS:-}; do
  label=${v%%:*}
  envs=${v#*:}
  echo "=== wgnn generate weights f32, $label (${envs//,/ })"
  env ${envs//,/ } ./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens "$N" \
    --ignore-eos --weights f32 --max-context $((P + N + 64)) --iters "${ITERS:-5}" --profile \
    --ids-out "$out/ids_f32_$label.npy" > "$out/wgnn_llm_f32_$label.txt" 2>&1
  grep -E "^wgnn|GPU time" "$out/wgnn_llm_f32_$label.txt"
done
# greedy agreement with PyTorch (HF init std 0.02 leaves near-ties: a late
# divergence is rounding, an early one a bug)
python3 - "$work/qwen3/greedy_ids.npy" "$P" "$out"/ids_*.npy <<'PY'
import sys, numpy as np
ref = np.load(sys.argv[1]); p = int(sys.argv[2])
for f in sys.argv[3:]:
    got = np.load(f)[p:]
    n = min(len(ref), len(got)); same = 0
    while same < n and ref[same] == got[same]: same += 1
    print(f"{f.split('/')[-1]}: first {same} of {n} greedy ids equal PyTorch's")
PY
