#!/usr/bin/env bash
# session 7 call 9: where the encoders' GPU time goes now (--profile, by op and the largest nodes), final code.
. bench/h200_env.sh
work=/tmp/wgnn-models; mkdir -p $work
python3 bench/torch_models.py $work --batches 1,8,32 --iters 3 2>/dev/null | grep '^{' > /dev/null
for m in vit_b16 siglip_b16; do for b in 1 8 32; do
  ./build/wgnn run --model $work/$m --input $work/${m}_x$b.npy --weights f32 --iters 10 --profile > $OUT/${m}_b$b.txt 2>&1
  echo "== $m batch $b"
  sed -n '/^by op:/,/^GPU time/p' $OUT/${m}_b$b.txt | sed -E 's/(GPU time: [0-9.]+ ms summed over nodes, [0-9.]+ ms first start to last end).*/\1/'
done; done
echo "== vit_b16 batch 32: the largest nodes of layer 5"
grep -E "encoder.layer.5\.|^  layernorm " $OUT/vit_b16_b32.txt | head -12
