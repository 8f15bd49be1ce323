#!/usr/bin/env bash
# SDPA on the NVIDIA H200 through the device tool, wgnn and PyTorch side by
# side in one call. Run from the repo root on the device machine, with the
# build and its dependencies carried (docs/PERFORMANCE.md has the exact call):
#   bash bench/h200_sdpa.sh
# Prints a markdown table; raw JSON lines go to $OUT (or /tmp/wgnn-bench).
set -u
cd "$(dirname "$0")/.."
. bench/h200_env.sh
out=${OUT:-/tmp/wgnn-bench}
mkdir -p "$out"
W=./build/wgnn
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
$W info > "$out/info.txt" 2>&1 || { cat "$out/info.txt"; exit 1; }
grep -iE 'chosen|H200|features' "$out/info.txt" | head -5

shapes=${SHAPES:-"1,12,197,197,64 1,16,1024,1024,64 1,12,4096,4096,64 4,16,4096,4096,128 1,8,4096,256,64 1,8,1,4096,64 1,16,16384,16384,64"}
impls=${IMPLS:-"fused three-pass channel auto"}
: > "$out/wgnn.jsonl"
for s in $shapes; do
  for impl in $impls; do
    iters=20
    case $s in 4,16,4096*|*16384*) iters=5 ;; esac
    [ "$impl" != fused ] && [ "$impl" != auto ] && case $s in *16384*) iters=2 ;; esac
    $W bench sdpa --shape "$s" --impl "$impl" --iters $iters --warmup 2 --json >> "$out/wgnn.jsonl" 2>>"$out/errors.txt"
  done
done
python3 bench/torch_sdpa.py $shapes > "$out/torch.jsonl"
python3 bench/table.py "$out/wgnn.jsonl" "$out/torch.jsonl" | tee "$out/table.md"
