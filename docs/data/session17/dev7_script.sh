#!/usr/bin/env bash
# Session 17, call 7: the 40 x 128 small-M tile in 4 K groups where its
# tiles fill 7/8 of the SMs (wgnn__gemm_tile40_plan: fc1 in 1 slice, fc2
# and the out projection in 4 and the reduce; q|k|v keeps 32 x 64) against
# the plan before it (WGNN_GEMM_KW=3: the 40-row plan needs 4 groups, and
# at these shapes the 32 x 64 tile's rule picks at most 3: ea95677's plan),
# ViT-B/16's products, then ViT-B/16 and SigLIP-B/16 at batch 1 and 8 with
# blocking and polling waits, two rounds,
# outputs against PyTorch's; f16 weights at batch 1. Device tool: carry
# [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8 --iters 3 2>&1 | grep -v "Writing model" | tail -4
for c in kw3 default; do
  echo "== $c"; if [ $c = kw3 ]; then vit_products 197 WGNN_GEMM_KW=3; else vit_products 197; fi
done
op_env fc1chk -- addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --check
op_env fc2chk -- addmm --in-shape f32:768 --in-shape f32:197,3072 --in-shape f32:3072,768 --in-shape f32:197,768 \
  --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true --check
op_env lin16chk -- linear --in-shape f32:197,768 --in-shape f16:3072,768 --in-shape f32:3072 --arg activation=gelu_tanh --check
for round in 1 2; do
  for c in kw3 default kw3_poll poll; do
    e=(); p=()
    case $c in kw3) e=(WGNN_GEMM_KW=3) ;; kw3_poll) e=(WGNN_GEMM_KW=3); p=(--poll-us 2000) ;; poll) p=(--poll-us 2000) ;; esac
    for m in vit_b16 siglip_b16; do
      echo "round $round $c $m b1: $(env "${e[@]}" ./build/wgnn "${p[@]}" run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --pooled-ref $w/${m}_pool1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^graph|^GPU span|^pipelined|vs /|rror' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/pooler_output vs .*: max/pool max/; s/, 0 of [0-9]* outside[^>]*-> ok/ ok/g; s/activations.*//; s/host .* in fetch (waiting, read-back)//' | tr '\n' ' ')"
    done
  done
done
for c in kw3 default; do
  e=(); [ $c = kw3 ] && e=(WGNN_GEMM_KW=3)
  for m in vit_b16 siglip_b16; do
    echo "$c $m b8: $(env "${e[@]}" ./build/wgnn run --model $w/$m --input $w/${m}_x8.npy --iters 20 --profile \
      --ref $w/${m}_last8.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E '^GPU span|^pipelined|vs /|rror' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/' | tr '\n' ' ')"
    echo "$c $m b1 f16: $(env "${e[@]}" ./build/wgnn run --model $w/$m --input $w/${m}_x1.npy --weights f16 --iters 30 --profile \
      --ref $w/${m}_last1.npy --atol 5e-3 --rtol 5e-3 2>&1 | grep -E '^GPU span|^pipelined|vs /|rror' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/' | tr '\n' ' ')"
  done
done
