#!/usr/bin/env bash
# `make bench`: SDPA benchmarks on the default adapter (lavapipe on a machine
# without a GPU), every implementation at a few shapes, one JSON line each.
set -eu
cd "$(dirname "$0")/.."
W=./build/wgnn
for s in ${SHAPES:-"1,4,1024,1024,64 1,12,197,197,64 1,8,32,256,64 1,8,1,4096,64"}; do
  for impl in fused three-pass channel auto; do
    $W bench sdpa --shape "$s" --impl "$impl" --iters ${ITERS:-5} --warmup 1 --json
  done
done
