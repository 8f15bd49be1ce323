#!/usr/bin/env bash
# Session 32 call 2: on an H200 (none lent since session 23), first the
# state table as call 1 does; on any card, ViT-B/16 at batch 1 with the
# first piece of a run recorded ahead at 2, 4, 8 and 16 dispatches
# (WGNN_GRAPH_CHUNK=gN: pieces of N, 2N, 4N, ...; the default is g16)
# against the default, three rounds interleaved (enc_run: synchronous,
# pipelined, resident, GPU span), then SigLIP-B/16 once each.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
{ name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$name"
  w=/tmp/wgnn-models
  case $name in
  *H200*) LLM=0 BATCHES=1,32 timeout 400 bash bench/h200_state.sh 2>&1 | tail -45 ;;
  *) . bench/h200_env.sh; mkdir -p $w
     timeout 120 python3 bench/torch_models.py $w --batches 1 --iters 20 2>&1 | grep side ;;
  esac
  . bench/h200_env.sh; . bench/op_median.sh
  echo "== first piece"
  for r in 1 2 3; do
    ITERS=100 enc_run "r$r default" vit_b16 1
    for c in g2 g4 g8 g16; do ITERS=100 enc_run "r$r $c" vit_b16 1 WGNN_GRAPH_CHUNK=$c; done
  done
  for c in default g4 g8; do ITERS=100 enc_run "$c" siglip_b16 1 WGNN_GRAPH_CHUNK=${c/default/g16}; done
} > $OUT/dev2_log.txt 2>&1
