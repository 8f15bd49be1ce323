#!/usr/bin/env bash
# Session 26 call 5: the build with sdpa_fused_vh as D = 128's long-sequence
# route: issue 11's table with PyTorch in the same call, the D = 128 tile
# against WGNN_FUSED_VH=0 (the tile before), --check on the default route,
# test_sdpa's vh cases forced on the GPU, registers.
. bench/h200_env.sh
B=./build/wgnn
run() { echo "== $*"; "$@" 2>&1 | grep -o 'median [0-9.]* ms\|check=[A-Z]*\|max_abs_err=[0-9.e+-]*\|wgnn:.*' | tr '\n' ' '; echo; }
OUT=/tmp/s26 SHAPES="1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,8,1,4096,64" IMPLS=auto \
  timeout 200 bash bench/h200_sdpa.sh
for round in 1 2; do
  run $B bench sdpa --shape 4,16,4096,4096,128 --iters 10
  WGNN_FUSED_VH=0 run $B bench sdpa --shape 4,16,4096,4096,128 --iters 10
done
run $B bench sdpa --shape 1,4,1100,1030,128 --iters 1 --check
run $B bench sdpa --shape 1,4,1100,1030,128 --iters 1 --check --f16
run $B bench sdpa --shape 2,4,1030,1500,128 --iters 1 --check --mask
echo "== test_sdpa vh, forced"; WGNN_FUSED_VH=8,2,4,8 timeout 120 ./build/test_sdpa 15 vh 2>&1 | tail -2
echo "== test_ops sdpa_qkvpacked, forced"; WGNN_FUSED_VH=8,2,4,8 timeout 120 ./build/test_ops sdpa_qkvpacked 2>&1 | tail -1
echo "== kstat default route D=128"; bash bench/kernel_stats/kstat.sh -- bench sdpa --shape 1,4,4096,4096,128 --iters 1 2>&1 | grep "sdpa_fused"
