#!/usr/bin/env bash
# Session 32 call 4: the state table (bench/h200_state.sh, LLM=0
# BATCHES=1,32) if the card is an H200; on another card only its name
# (calls 2-3 and session 31 measured the H100). Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
{ name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$name"
  case $name in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
  LLM=0 BATCHES=1,32 timeout 420 bash bench/h200_state.sh 2>&1 | tail -45
} > $OUT/dev4_log.txt 2>&1
