#!/usr/bin/env bash
# session 6 call 3: encoders at batch 1, 8, 32 (f32) with this build (BIAS_INIT
# on the smaller tiles; wgnn run now also times pipelined runs) against
# 351ade0 (build/old/wgnn), PyTorch eager in the same call; PyTorch's kernels
# at batch 32 (bench/torch_profile_encoder.py)
. bench/h200_env.sh
OUT=/tmp/m3 OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > /tmp/m3.txt 2>&1
grep -E '^\{|^===|median|pipelined|vs /' /tmp/m3.txt | grep -v pooler_output | sed -E 's/first run \(graph build \+ run\) [0-9.]+ ms; //; s/per run \(upload, one submit, wait\); medians of its parts://; s/\(upload, submit and the outputs. read-back; two runs in flight\); //; s/last_hidden_state vs [^:]*: //; s/"torch": "[^"]*"//'
for m in vit_b16 siglip_b16; do python3 bench/torch_profile_encoder.py /tmp/wgnn-models/$m 32 --top 10; done 2>&1 | grep -v Warning
grep -A14 "^profile" /tmp/m3/wgnn_vit_b16_b32_f32.txt | head -16
