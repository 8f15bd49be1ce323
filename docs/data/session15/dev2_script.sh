#!/usr/bin/env bash
# Session 15, call 2: the session's build (04dfe45+) at ViT-B/16 and
# SigLIP-B/16 batch 1, 8 and 32 with PyTorch in the same call
# (bench/h200_models.sh), then batch 1 with waits that poll (--poll-us)
# and with two staging buffers in the GEMM (WGNN_GEMM_DB=1), two rounds.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
w=/tmp/wgnn-models
OUT0=$OUT
OUT=$OUT0/models WEIGHTS="f32" ITERS=30 bash bench/h200_models.sh 1,8,32 2>&1 | grep -v "Writing model"
for round in 1 2; do
  for c in default poll5000 poll2000 db1 poll_db1; do
    e=(); g=()
    case $c in poll5000) g=(--poll-us 5000) ;; poll2000) g=(--poll-us 2000) ;; db1) e=(WGNN_GEMM_DB=1) ;;
      poll_db1) g=(--poll-us 5000); e=(WGNN_GEMM_DB=1) ;; esac
    for m in vit_b16 siglip_b16; do
      echo "round $round $c $m b1: $(env "${e[@]}" ./build/wgnn "${g[@]}" run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^GPU span|^pipelined|vs /' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/' | tr '\n' ' ')"
    done
  done
done
