#!/usr/bin/env bash
# Session 15, call 1: a plain graph run's wait is the map of its own 16-byte
# data-error buffer (no staging buffer made, no extra submit: this build)
# against 057d121's build (build/old/wgnn); the wait polled before it blocks
# (WGNN_WAIT_SPIN=us); first piece sizes (WGNN_GRAPH_CHUNK=gN); ViT-B/16
# and SigLIP-B/16 at batch 1 and 8 with PyTorch in the same call; Qwen3 f32
# decode with and without polling. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
w=/tmp/wgnn-models
OUT0=$OUT
OUT=$OUT0/models OLD=build/old/wgnn WEIGHTS="f32" ITERS=30 bash bench/h200_models.sh 1,8 2>&1 | grep -v "Writing model"
for round in 1 2; do
  for c in old default spin g8 g32 spin_g8; do
    e=(); bin=./build/wgnn
    case $c in old) bin=build/old/wgnn ;; spin) e=(WGNN_WAIT_SPIN=5000) ;; g8) e=(WGNN_GRAPH_CHUNK=g8) ;;
      g32) e=(WGNN_GRAPH_CHUNK=g32) ;; spin_g8) e=(WGNN_WAIT_SPIN=5000 WGNN_GRAPH_CHUNK=g8) ;; esac
    for m in vit_b16 siglip_b16; do
      echo "round $round $c $m b1: $(env "${e[@]}" $bin run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^GPU span|^pipelined|vs /' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/' | tr '\n' ' ')"
    done
  done
done
OUT=$OUT0/llm WEIGHTS="f32" ITERS=3 NEW=32 VARIANTS="spin:WGNN_WAIT_SPIN=5000" timeout 200 bash bench/h200_llm.sh 2>&1 | grep -E 'wgnn:|===|side' | cut -c1-400
