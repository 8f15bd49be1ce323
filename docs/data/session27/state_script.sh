#!/usr/bin/env bash
# Session 27, the state call (run by dev2_script.sh): session 26's D = 128 kernel (sdpa_fused_vh) on the GPU
# as the default route (its ctests, then timed against WGNN_FUSED_VH=0), and
# the state of issues 9 and 11 (bench/h200_state.sh without the decoders:
# issue 10 is blocked), PyTorch in the same call.
. bench/h200_env.sh
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== ctests on the GPU"
( cd build && WGNN_FUSED_VH=8,2,4,8 timeout 120 ./test_sdpa 15 vh 2>&1 | tail -2 )
( cd build && timeout 120 ./test_sdpa 15 vh 2>&1 | tail -2 )
( cd build && WGNN_FUSED_VH=8,2,4,8 timeout 120 ./test_ops sdpa_qkvpacked 2>&1 | tail -2 )
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
echo "== D = 128: default route against the landed tile (WGNN_FUSED_VH=0)"
for r in 1 2; do
  run $B bench sdpa --shape 4,16,4096,4096,128 --impl auto --iters 10 --check
  WGNN_FUSED_VH=0 run $B bench sdpa --shape 4,16,4096,4096,128 --impl auto --iters 10
done
export OUT=/tmp/wgnn-bench
echo "== sdpa"
OUT=$OUT/sdpa SHAPES="1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,8,1,4096,64" \
  IMPLS=auto timeout 150 bash bench/h200_sdpa.sh
echo "== models"
OUT=$OUT/models ITERS=30 WEIGHTS=f32 timeout 260 bash bench/h200_models.sh 1,8,32
for f in $OUT/models/wgnn_*_f32.txt; do echo "-- $f"; grep -E "^input|^GPU span|^pipelined|^resident" "$f"; done
