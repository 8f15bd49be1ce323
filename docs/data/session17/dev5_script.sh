#!/usr/bin/env bash
# Session 17, call 5: small-M tiles of 40 rows (197 rows in 5 tiles, 200
# rows computed, against 7 tiles, 224 rows, at 32): WGNN_GEMM_TILE=WXxWYxTMxTNxBK
# (tiles whose vec4s do not divide among the threads now load with the
# last ones skipped), K slices WGNN_GEMM_SPLIT=S and groups by the rule;
# ViT-B/16's block products at batch 1, then the whole encoders at batch 1
# (every product there has <= 197 rows, so the knob sets all their tiles).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 2>&1 | grep -v "Writing model" | tail -2
echo "== default"; vit_products 197
for t in 32x5x8x4x16 32x5x8x4x8 16x10x4x4x16 16x5x8x4x16 32x10x4x4x16; do
  for s in auto 2 3 4 6 8; do
    echo "== WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=$s"
    if [ $s = auto ]; then vit_products 197 WGNN_GEMM_TILE=$t; else vit_products 197 WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=$s; fi
  done
done
op_env chk WGNN_GEMM_TILE=32x5x8x4x16 -- addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --check
op_env chk WGNN_GEMM_TILE=32x5x8x4x16 -- addmm --in-shape f32:768 --in-shape f32:197,768 --in-shape f32:768,768 --in-shape f32:197,768 \
  --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true --check
for round in 1 2; do
  for t in default 32x5x8x4x16; do
    e=(); [ $t != default ] && e=(WGNN_GEMM_TILE=$t)
    for m in vit_b16 siglip_b16; do
      echo "round $round $t $m b1: $(env "${e[@]}" ./build/wgnn --poll-us 2000 run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^GPU span|^pipelined|vs /|rror' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/activations.*//; s/host .* in fetch (waiting, read-back)//; s/medians of its parts.*waiting [0-9.]* ms//' | tr '\n' ' ')"
    done
  done
done
