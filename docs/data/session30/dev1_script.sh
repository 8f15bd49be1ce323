#!/usr/bin/env bash
# Session 30 call 1: the tail plan for products that end in the 128 x 128
# tile (this tree: gemm.wgsl's SKE, gemm_tail.wgsl) against HEAD's build
# (build/old/wgnn, 6d4a068: the whole tiles alone, 1200 of them for
# ViT-B/16's fc1 at batch 32, 4.5 waves and 12 tiles). fc1 (6304 x 3072 x
# 768, bias, GELU) and the plain product of that shape, new and old
# alternating, two rounds, --check on the new, and a plain product of
# one wave's worth (512 x 1024 x 6144, 192 tiles: 132 whole, 60 in 2 slices); then ViT-B/16 and
# SigLIP-B/16 at batch 32 and ViT-B/16 at batch 1, new and old, two
# rounds, PyTorch eager in the same call.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
fc1="addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu"
mm="mm --in-shape f32:6304,768 --in-shape f32:768,3072"
# one wave's worth on 128 x 128 (gemm.c's one_wave: 192 tiles): 132 whole, 60 in 2 slices now
mw="mm --in-shape f32:512,1024 --in-shape f32:1024,6144"
op_env "fc1 chk" -- $fc1 --check --iters 3
op_env "mm chk" -- $mm --check --iters 3
op_env "mw chk" -- $mw --check --iters 3
for r in 1 2; do
  op_env "fc1.$r new" -- $fc1; op_bin "fc1.$r old" build/old/wgnn -- $fc1
  op_env "mm.$r new" -- $mm; op_bin "mm.$r old" build/old/wgnn -- $mm
  op_env "mw.$r new" -- $mw; op_bin "mw.$r old" build/old/wgnn -- $mw
done
op_env "fc1 nowave" WGNN_GEMM_WAVES=0 -- $fc1
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,32 --iters 10 2>&1 | grep side
for r in 1 2; do
  for mb in "vit_b16 32" "siglip_b16 32" "vit_b16 1"; do
    set -- $mb; it=30; [ $2 = 32 ] && it=10
    ITERS=$it enc_run "r$r new" $1 $2
    ITERS=$it BIN=build/old/wgnn enc_run "r$r old" $1 $2
  done
done
true
