#!/usr/bin/env bash
# Session 32 call 1: if the card is an H200 (none lent since session 23),
# the state table (bench/h200_state.sh, LLM=0 BATCHES=1,32), then two more
# ViT-B/16 rounds at batches 1 and 32 (enc_run) and PyTorch eager again;
# on another card only its name (session 31 measured the H100's state).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
{ name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$name"
  case $name in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
  LLM=0 BATCHES=1,32 timeout 400 bash bench/h200_state.sh 2>&1 | tail -45
  . bench/h200_env.sh; . bench/op_median.sh; w=/tmp/wgnn-models
  echo "== rounds"
  for r in 2 3; do ITERS=50 enc_run "r$r" vit_b16 1; ITERS=20 enc_run "r$r" vit_b16 32; done
  timeout 60 python3 bench/torch_models.py $w --batches 1,32 --iters 20 2>&1 | grep side | grep vit
} > $OUT/dev1_log.txt 2>&1
