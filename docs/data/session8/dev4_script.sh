#!/usr/bin/env bash
# session 8 call 4: the final code against a253c77 (build/old/wgnn: the
# session's start, EPI_RW reverted): encoders at batch 1, 8, 32 with
# PyTorch; the SDPA table (no regression from the QBIAS prelude const);
# Qwen3 f32 decode (sdpa_fused_reduce's prelude changed too).
. bench/h200_env.sh
. bench/models_summary.sh
OUT=$OUT/m OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
for f in wgnn_vit_b16_b32_f32 wgnn_vit_b16_b1_f32; do echo "== $f"; grep -A10 "^by op" $OUT/m/$f.txt; done
rm -rf $OUT/m
IMPLS=auto OUT=$OUT/sdpa bash bench/h200_sdpa.sh 2>&1 | tail -12
for s in 1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,8,1,4096,64; do
  it=20; case $s in 4,16*) it=5 ;; esac
  printf "old %-22s " $s; build/old/wgnn bench sdpa --shape $s --impl auto --iters $it --warmup 2 --json 2>&1 | python3 -c 'import sys,json; print("%.4f ms" % json.loads(sys.stdin.readline())["median_ms"])'
done
OUT=$OUT/llm WEIGHTS=f32 ITERS=3 NEW=64 bash bench/h200_llm.sh 2>&1 | grep -E "decode|prefill|greedy|ids|^wgnn" | head -12
