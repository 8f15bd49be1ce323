#!/usr/bin/env bash
# Session 15, call 3: key splits of the attention at ViT-B/16 batch 1
# (S = 197: 84 query tiles of 32 rows; the planner takes 4 splits of 64
# keys, the last of 5, plus the reduce): WGNN_FUSED_SPLIT and 16-row tiles
# (WGNN_FUSED_TILE), whole-encoder GPU spans and the synchronous run with
# --poll-us 2000, two rounds; bench sdpa at (1,12,197,197,64) with each.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 > $OUT/torch.txt 2>&1
V="default s1:WGNN_FUSED_SPLIT=1 s2:WGNN_FUSED_SPLIT=2 s3:WGNN_FUSED_SPLIT=3 s6:WGNN_FUSED_SPLIT=6 t4x16_s1:WGNN_FUSED_TILE=4x16x2x1,WGNN_FUSED_SPLIT=1 t4x16:WGNN_FUSED_TILE=4x16x2x1 t4x8_s2:WGNN_FUSED_TILE=4x8x2x1,WGNN_FUSED_SPLIT=2"
for v in $V; do
  e=(); [ $v != default ] && { x=${v#*:}; e=(${x//,/ }); }
  echo "sdpa $v: $(env "${e[@]}" ./build/wgnn bench sdpa --shape 1,12,197,197,64 --impl auto --iters 50 --check 2>&1 | tail -2 | tr '\n' ' ')"
done
for round in 1 2; do
  for v in $V; do
    e=(); [ $v != default ] && { x=${v#*:}; e=(${x//,/ }); }
    for m in vit_b16 siglip_b16; do
      echo "round $round ${v%%:*} $m b1: $(env "${e[@]}" ./build/wgnn --poll-us 2000 run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^GPU span|^pipelined|vs /' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/' | tr '\n' ' ')"
    done
  done
done
