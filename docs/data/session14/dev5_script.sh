#!/usr/bin/env bash
# Session 14, call 5: ViT-B/16 at batch 1, the resident run (upload, submit,
# wait, read back: one synchronous call) against WGNN_GRAPH_CHUNK (the
# dispatches a run records between submits; 0 = one submit, gN = N then
# doubling) and Dawn's skip_validation toggle: wall, host recording and
# waiting medians (30 runs), two rounds. Device tool: carry [".gl",
# "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 3 > $OUT/torch.txt 2>&1
for round in 1 2; do
  for c in default 0 10 20 64 g8 g16 g32 skipval; do
    e=(); case $c in default) ;; skipval) e=(WGNN_DAWN_TOGGLES=skip_validation) ;; *) e=(WGNN_GRAPH_CHUNK=$c) ;; esac
    for m in vit_b16; do
      echo "round $round $c $m: $(env "${e[@]}" ./build/wgnn run --model $w/$m --input $w/${m}_x1.npy --iters 30 --profile 2>&1 | \
        grep -E '^input|^GPU span|^pipelined' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//' | tr '\n' ' ')"
    done
  done
done
