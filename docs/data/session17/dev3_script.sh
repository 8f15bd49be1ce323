#!/usr/bin/env bash
# Session 17, call 3 (scratch build: WGNN_STAGED_MIN, a temporary switch in
# src/gpu/tensor.c, sends uploads from that many bytes through the
# context's own staging buffer; not committed): ViT-B/16's block products
# at batch 1 with other K slice counts (WGNN_GEMM_SPLIT=S, the groups then
# wgnn__gemm_kw's for S), and the whole encoders at batch 1 with the input
# staged (synchronous calls, --poll-us 2000 and blocking). Device tool:
# carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 2>&1 | grep -v "Writing model" | tail -2
for s in default 2 3 4 6 8; do echo "== WGNN_GEMM_SPLIT=$s"; if [ $s = default ]; then vit_products 197; else vit_products 197 WGNN_GEMM_SPLIT=$s; fi; done
for round in 1 2; do
  for c in default staged poll staged_poll; do
    e=(); p=()
    case $c in staged) e=(WGNN_STAGED_MIN=65536) ;; poll) p=(--poll-us 2000) ;; staged_poll) e=(WGNN_STAGED_MIN=65536); p=(--poll-us 2000) ;; esac
    for m in vit_b16 siglip_b16; do
      echo "round $round $c $m b1: $(env "${e[@]}" ./build/wgnn "${p[@]}" run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^GPU span|^pipelined|vs /|rror' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/activations.*//; s/host .* in fetch (waiting, read-back)//' | tr '\n' ' ')"
    done
  done
done
./build/wgnn run --model $w/vit_b16 --input $w/vit_b16_x1.npy --iters 20 --profile 2>&1 | sed -n '/^profile/,/^GPU time/p' | head -80
