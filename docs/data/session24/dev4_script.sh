#!/usr/bin/env bash
# Session 24 call 4: the bias of one row in the 128 x 128 tile's
# accumulators, its activation in a loop before the store (this tree),
# against HEAD's build (build/old/wgnn: the plain product into scratch and
# a bias pass). ViT-B/16's products at M = 6304, 1576, 197, then the
# encoders at batch 32, 8 and 1 (f32; ViT-B/16 at batch 32 with f16
# weights too), new and old alternating, two rounds; PyTorch eager in the
# same call. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
old_products() { # M: the four products through build/old/wgnn
  local M=$1
  op_bin "fc1" build/old/wgnn -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
  op_bin "fc2" build/old/wgnn -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  op_bin "qkv" build/old/wgnn -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
  op_bin "out" build/old/wgnn -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
}
for M in 6304 1576 197; do
  echo "== products M = $M: new"; vit_products $M
  echo "== products M = $M: old"; old_products $M
done
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8,32 --iters 10 2>&1 | grep side
enc() { # BIN LABEL MODEL BATCH [run options]: sync call, pipelined, resident, span, check
  local bin=$1 l=$2 m=$3 b=$4; shift 4
  echo "$l $m b$b: $($bin run --model $w/$m --input $w/${m}_x$b.npy --iters ${ITERS:-50} "$@" \
    --profile --ref $w/${m}_last$b.npy --atol 5e-3 --rtol 5e-3 2>&1 | grep -E '^input|^GPU span|^pipelined|^resident|vs /|rror' |
    sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//;
      s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/medians of its parts: //;
      s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/host .* in fetch (waiting, read-back)//;
      s/(input left on the GPU.*protocol)//; s/resident: [0-9]* runs of the graph alone,/resident/' | tr '\n' ' ')"
}
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    for b in 32 8 1; do
      it=50; [ $b = 32 ] && it=10; [ $b = 8 ] && it=20
      ITERS=$it enc ./build/wgnn "r$round new" $m $b
      ITERS=$it enc ./build/old/wgnn "r$round old" $m $b
    done
  done
done
echo "== f16 weights, ViT-B/16 batch 32"
ITERS=10 enc ./build/wgnn "new f16" vit_b16 32 --weights f16
ITERS=10 enc ./build/old/wgnn "old f16" vit_b16 32 --weights f16
