#!/usr/bin/env bash
# Session 19 call 1 (session 18 had no device): the measurements left pending, in one
# script for the next session's first device call. Before the call, build
# the q8 prologue-staging patch into build/q8xs/wgnn:
#   git worktree add -f /tmp/q8wt HEAD && ln -s /work/main/deps /tmp/q8wt/deps &&
#   (cd /tmp/q8wt && git apply docs/data/session17/q8_xs.patch &&
#    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2 --target wgnn_cli) &&
#   mkdir -p build/q8xs && cp /tmp/q8wt/build/wgnn build/q8xs/wgnn && git worktree remove --force /tmp/q8wt
# Device tool: carry [".gl", "deps/dawn/lib", "build"]; about 6 minutes.
#  1. ViT-B/16 and SigLIP-B/16 batch 1 after 9654639 (gemm.wgsl's past()
#     guard; expected unchanged: span ~1.91 / 1.99 ms), against PyTorch.
#  2. q8 decode with the patch (WGNN_Q8_XS=1, its default) against
#     WGNN_Q8_XS=0 in the same binary, and against main's binary, two rounds.
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 2>&1 | grep -v "Writing model" | tail -2
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    enc_run "round $round" $m 1
  done
done
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
for round in 1 2; do
  for v in "main:./build/wgnn:1" "xs:./build/q8xs/wgnn:1" "xs_off:./build/q8xs/wgnn:0"; do
    IFS=: read -r label bin xs <<<"$v"
    echo "round $round q8 $label: $(WGNN_Q8_XS=$xs $bin generate --model "$work/qwen3" --prompt-ids "$ids" \
      --max-new-tokens 32 --ignore-eos --weights q8 --max-context 640 --iters 3 2>&1 | grep -E '^wgnn|rror')"
  done
done
