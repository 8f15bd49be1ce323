#!/usr/bin/env bash
# session 5 call 10: encoders with float16 weights kept [K, N] for addmm (build/wgnn) against linear on [N, K] (build/old/prev = d2127ed)
. bench/h200_env.sh
w=/tmp/wgnn-models; mkdir -p $w
python3 bench/torch_models.py $w --batches 1,32 --iters 5 > /dev/null 2>&1
for m in vit_b16 siglip_b16; do for b in 1 32; do
  for bin in ./build/wgnn build/old/prev; do for wt in f16 f32; do
    [ $bin = build/old/prev ] && [ $wt = f32 ] && continue
    printf "%-10s b%-2s %-15s %s " $m $b $bin $wt
    $bin run --model $w/$m --input $w/${m}_x$b.npy --weights $wt --iters 20 --ref $w/${m}_last$b.npy --pooled-ref $w/${m}_pool$b.npy --atol 5e-3 --rtol 5e-3 2>&1 | grep -oE "median [0-9.]+ ms|loaded in [0-9]+ ms|max \|diff\| [0-9.e-]+|-> ok" | tr '\n' ' '; echo
  done; done
done; done
