#!/usr/bin/env bash
# Session 12, call 12: the final build's SDPA table (auto route) with
# PyTorch in the same call, and checks of the long-sequence tiles against
# the CPU reference. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
SHAPES="1,12,197,197,64 32,12,197,197,64 1,16,1024,1024,64 1,12,4096,4096,64 4,16,4096,4096,128 1,8,4096,256,64 1,8,1,4096,64 1,16,16384,16384,64" \
IMPLS=auto OUT=$OUT bash bench/h200_sdpa.sh
for D in 64 128; do
  echo "check D=$D mask: $(build/wgnn bench sdpa --shape 1,3,1030,1500,$D --mask --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
  echo "check D=$D f16: $(build/wgnn bench sdpa --shape 1,3,1500,1030,$D --f16 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
done
