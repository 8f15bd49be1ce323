#!/usr/bin/env bash
# Session 31 call 4: the state table (bench/h200_state.sh, LLM=0
# BATCHES=1,32) if the card is an H200 (none lent since session 22);
# on another card it only prints the card's name (the H100's state is
# calls 1-3). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$name"
case $name in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
LLM=0 BATCHES=1,32 timeout 330 bash bench/h200_state.sh 2>&1 | tail -40
