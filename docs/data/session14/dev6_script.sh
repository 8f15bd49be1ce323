#!/usr/bin/env bash
# Session 14, call 6: the resident run (one synchronous call: upload,
# submit, wait) with the next run recorded ahead (graph_run.c plain_submit)
# against WGNN_GRAPH_PRERECORD=0 (recorded at the call, as before), and the
# submit pieces (WGNN_GRAPH_CHUNK) with it; ViT-B/16 and SigLIP-B/16 at
# batch 1 and 8, two rounds. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8 --iters 3 > $OUT/torch.txt 2>&1
grep side $OUT/torch.txt
for round in 1 2; do
  for c in off default c0 g16 c20; do
    e=(); case $c in off) e=(WGNN_GRAPH_PRERECORD=0) ;; default) ;; c0) e=(WGNN_GRAPH_CHUNK=0) ;; g16) e=(WGNN_GRAPH_CHUNK=g16) ;; c20) e=(WGNN_GRAPH_CHUNK=20) ;; esac
    for m in vit_b16 siglip_b16; do
      for b in 1 8; do
        [ $b = 8 ] && [ $c != off ] && [ $c != default ] && continue
        echo "round $round $c $m b$b: $(env "${e[@]}" ./build/wgnn run --model $w/$m --input $w/${m}_x$b.npy --iters 30 --profile \
          --ref $w/${m}_last$b.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
          grep -E '^input|^GPU span|^pipelined|vs /' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/' | tr '\n' ' ')"
      done
    done
  done
done
