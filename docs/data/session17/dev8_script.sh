#!/usr/bin/env bash
# Session 17, call 8: a plain graph run's wait blocks until 0.25 ms + 1/16
# of the last run's submit-to-end time before that run's end, then polls
# (the default now; WGNN_WAIT_HYBRID=0: blocking all the way, as before;
# --poll-us 2000: polling from the start): ViT-B/16 and SigLIP-B/16 at
# batch 1 and 8, synchronous calls (`wgnn run`'s "N runs"), three rounds,
# outputs against PyTorch's; then Qwen3-0.6B f32 with and without it.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8 --iters 3 2>&1 | grep -v "Writing model" | tail -4
for round in 1 2 3; do
  for c in block hybrid poll; do
    e=(); p=()
    case $c in block) e=(WGNN_WAIT_HYBRID=0) ;; poll) p=(--poll-us 2000) ;; esac
    for m in vit_b16 siglip_b16; do
      for b in 1 8; do
        [ $b = 8 ] && [ $round = 3 ] && continue
        echo "round $round $c $m b$b: $(env "${e[@]}" ./build/wgnn "${p[@]}" run --model $w/$m --input $w/${m}_x$b.npy --iters 50 \
          --ref $w/${m}_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
          grep -E '^input|vs /|rror' | sed 's/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/' | tr '\n' ' ')"
      done
    done
  done
done
OUT0=$OUT
OUT=/tmp/dev8_llm WEIGHTS="f32" ITERS=3 NEW=32 VARIANTS="block:WGNN_WAIT_HYBRID=0" timeout 240 bash bench/h200_llm.sh 2>&1 | grep -E 'wgnn:|===|side' | cut -c1-400
