#!/usr/bin/env bash
# session 5 call 6: model load time with staged uploads (new) against 7d7616b (old)
. bench/h200_env.sh
w=/tmp/w6; mkdir -p $w
python3 bench/torch_models.py $w --batches 1 --iters 2 > /dev/null 2>&1
python3 bench/torch_llm.py --prompt 16 --iters 1 --decode 2 --save $w/qwen3 > /dev/null 2>&1
for rep in 1 2; do
for b in ./build/wgnn build/old/wgnn; do
  for wt in f32 f16; do
    printf "%-16s vit %s: " $b $wt; $b run --model $w/vit_b16 --input $w/vit_b16_x1.npy --weights $wt 2>&1 | grep -o "loaded in [0-9]* ms"
    s=$(date +%s.%N); $b generate --model $w/qwen3 --prompt-ids 1,2,3 --max-new-tokens 1 --weights $wt --ignore-eos > /dev/null 2>&1; e=$(date +%s.%N)
    printf "%-16s qwen3 %s: whole generate process %.0f ms\n" $b $wt $(echo "($e - $s) * 1000" | bc)
  done
done
done
