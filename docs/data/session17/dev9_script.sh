#!/usr/bin/env bash
# Session 17, call 9: the first piece of a plain run recorded ahead
# (WGNN_GRAPH_CHUNK=gN: N dispatches, then twice as many each piece; the
# default g16) for synchronous calls at batch 1 with the default wait
# (blocking until shortly before the expected end, then polling): ViT-B/16
# and SigLIP-B/16, three rounds, outputs against PyTorch's. (Set, the knob
# also cuts pipelined runs into pieces: only the synchronous numbers count
# here.) Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 2>&1 | grep -v "Writing model" | tail -2
for round in 1 2 3; do
  for c in g16 g4 g8 g2; do
    for m in vit_b16 siglip_b16; do
      echo "round $round $c $m b1: $(WGNN_GRAPH_CHUNK=$c ./build/wgnn run --model $w/$m --input $w/${m}_x1.npy --iters 50 \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|vs /|rror' | sed 's/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/medians of its parts: //' | tr '\n' ' ')"
    done
  done
done
