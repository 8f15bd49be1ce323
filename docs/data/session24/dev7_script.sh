#!/usr/bin/env bash
# Session 24 call 7: the encoders' float16 weights kept [k, n] and run
# through addmm / mm with a float16 B (this tree) against 8007de2's build
# (build/old/wgnn: f16 weights [n, k] through linear, B transposed). The
# products alone at 6304 and 197 rows, then ViT-B/16 and SigLIP-B/16 with
# --weights f16 at batch 32, 8 and 1, new and old alternating, two rounds;
# f32 at batch 32 once each (unchanged route). Checked against PyTorch's
# fp32 outputs at 5e-3. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for M in 6304 197; do
  echo "== products at $M rows: addmm f16 [k,n] (new) / linear f16 [n,k] (old route)"
  op_env "fc1 new" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f16:768,3072 --arg activation=gelu
  op_env "fc1 old" -- linear --in-shape f32:$M,768 --in-shape f16:3072,768 --in-shape f32:3072 --arg activation=gelu
  op_env "fc2 new" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f16:3072,768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  op_env "fc2 old" -- linear --in-shape f32:$M,3072 --in-shape f16:768,3072 --in-shape f32:768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  op_env "qkv new" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f16:768,2304
  op_env "qkv old" -- linear --in-shape f32:$M,768 --in-shape f16:2304,768 --in-shape f32:2304
done
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8,32 --iters 3 2>&1 | grep side
enc() { # BIN LABEL MODEL BATCH [run options]: sync call, pipelined, resident, span, check
  local bin=$1 l=$2 m=$3 b=$4; shift 4
  echo "$l $m b$b: $($bin run --model $w/$m --input $w/${m}_x$b.npy --iters ${ITERS:-50} "$@" \
    --profile --ref $w/${m}_last$b.npy --atol 5e-3 --rtol 5e-3 2>&1 | grep -E '^input|^GPU span|^pipelined|^resident|vs /|rror' |
    sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//;
      s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/medians of its parts: //;
      s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/host .* in fetch (waiting, read-back)//;
      s/(input left on the GPU.*protocol)//; s/resident: [0-9]* runs of the graph alone,/resident/;
      s/upload.*waiting [0-9.]* ms//' | tr '\n' ' ')"
}
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    for b in 32 8 1; do
      it=50; [ $b = 32 ] && it=10; [ $b = 8 ] && it=20
      ITERS=$it enc ./build/wgnn "r$round new f16" $m $b --weights f16
      ITERS=$it enc ./build/old/wgnn "r$round old f16" $m $b --weights f16
    done
  done
done
for m in vit_b16 siglip_b16; do
  ITERS=10 enc ./build/wgnn "new f32" $m 32
  ITERS=10 enc ./build/old/wgnn "old f32" $m 32
done
