#!/usr/bin/env bash
# Session 28 call 2: at batch 1, the out projection and fc2 with all six of
# their K slices as K groups of one workgroup (no partials, no split-K
# reduce; their LayerNorm then a pass of its own), and that with the
# LayerNorm pass left out (timing only: the ceiling of a LayerNorm folded
# into the next product). Scratch build: kwforce.patch (WGNN_HACK_KW_FORCE,
# WGNN_HACK_SKIP_LN), not applied to the tree.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -2
F="WGNN_GEMM_KW=6 WGNN_HACK_KW_FORCE=1"
vit_products 197
vit_products 197 $F
# the out projection and fc2 with the residual but no LayerNorm (plain split-K reduce)
for e in "" "$F"; do
  op_env "out-noLN" $e -- addmm --in-shape f32:768 --in-shape f32:197,768 --in-shape f32:768,768 --in-shape f32:197,768 --arg residual=true
  op_env "fc2-noLN" $e -- addmm --in-shape f32:768 --in-shape f32:197,3072 --in-shape f32:3072,768 --in-shape f32:197,768 --arg residual=true
done
for r in 1 2; do
  for m in vit_b16 siglip_b16; do
    ITERS=50 enc_run "r$r default" $m 1
    ITERS=50 enc_run "r$r kw6" $m 1 $F
    ITERS=50 enc_run "r$r kw6-noLN" $m 1 $F WGNN_HACK_SKIP_LN=1
  done
done
