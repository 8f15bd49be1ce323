#!/usr/bin/env bash
# session 5 call 6: residual epilogue + sdpa_qkvpacked (build/wgnn) against 002607e (build/old/mid) and 7d7616b (build/old/wgnn)
set -u
. bench/h200_env.sh
O=${OUT:-/tmp/o6}; mkdir -p $O
w=/tmp/wgnn-models; mkdir -p $w
python3 bench/torch_models.py $w --batches 1,8,32 --iters 20 2>/dev/null | tee $O/torch_models.jsonl
for m in vit_b16 siglip_b16; do for b in 1 8 32; do
  for bin in ./build/wgnn build/old/mid build/old/wgnn; do
    printf "%-10s b%-2s %-15s " $m $b $bin
    $bin run --model $w/$m --input $w/${m}_x$b.npy --weights f32 --iters 20 --ref $w/${m}_last$b.npy --pooled-ref $w/${m}_pool$b.npy --atol 2e-3 --rtol 2e-3 > $O/run.txt 2>&1
    echo "$(grep -o 'median [0-9.]* ms' $O/run.txt | head -1) $(grep -o 'upload [0-9.]* ms' $O/run.txt) $(grep -o '[0-9]* dispatches per run' $O/run.txt) $(grep -c -- '-> ok' $O/run.txt)/2 ok"
  done
done; done 2>&1 | tee $O/models.txt
./build/wgnn run --model $w/vit_b16 --input $w/vit_b16_x32.npy --weights f32 --iters 5 --profile > $O/profile_vit_b32.txt 2>&1
sed -n '/^by op/,/^GPU time/p' $O/profile_vit_b32.txt
./build/wgnn run --model $w/vit_b16 --input $w/vit_b16_x1.npy --weights f32 --iters 5 --profile > $O/profile_vit_b1.txt 2>&1
sed -n '/^by op/,/^GPU time/p' $O/profile_vit_b1.txt
IMPLS=auto OUT=$O/sdpa bash bench/h200_sdpa.sh 2>&1 | tail -9
for sh in 1,12,197,197,64 32,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,8,1,4096,64; do
  for bin in ./build/wgnn build/old/mid; do
    it=20; case $sh in 4,16*) it=5 ;; esac
    printf "sdpa %-20s %-14s " $sh $bin; $bin bench sdpa --shape $sh --iters $it --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  try: d=json.loads(l); print("%.4f ms" % d["median_ms"])
  except Exception: print(l.strip()[:200])'
  done
done
