#!/usr/bin/env bash
# Session 17, call 2: the small-M tile's K groups (gemm.wgsl's KW) chosen by
# the busiest unit's load (wgnn__gemm_kw: q|k|v 3, fc1 2, fc2 and the out
# projection 2 with 3 batch slices and a reduce) against none
# (WGNN_GEMM_KW=1, the plan before): ViT-B/16's block products at batch 1,
# then ViT-B/16 and SigLIP-B/16 at batch 1 whole with blocking and polling
# waits (--poll-us, a global option), two rounds, outputs checked against
# PyTorch's. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -2
for c in 1 default; do echo "== WGNN_GEMM_KW=$c"; if [ $c = 1 ]; then vit_products 197 WGNN_GEMM_KW=1; else vit_products 197; fi; done
for round in 1 2; do
  for c in kw1 default kw1_poll poll; do
    e=(); p=()
    case $c in kw1) e=(WGNN_GEMM_KW=1) ;; kw1_poll) e=(WGNN_GEMM_KW=1); p=(--poll-us 2000) ;; poll) p=(--poll-us 2000) ;; esac
    for m in vit_b16 siglip_b16; do
      echo "round $round $c $m b1: $(env "${e[@]}" ./build/wgnn "${p[@]}" run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^graph|^GPU span|^pipelined|vs /|rror' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/activations.*//' | tr '\n' ' ')"
    done
  done
done
