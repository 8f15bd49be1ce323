#!/usr/bin/env bash
# The op benchmarks (bench/ops_cases.txt) on the NVIDIA H200 through the
# device tool: wgnn and PyTorch side by side in one call. Run from the repo
# root on the device machine with the build carried (docs/PERFORMANCE.md):
#   bash bench/h200_ops.sh [LABEL ...]
# Prints one JSON line per case and side; raw lines also go to $OUT. WGNN:
# another wgnn binary (e.g. an earlier commit's build).
set -u
cd "$(dirname "$0")/.."
. bench/h200_env.sh
out=${OUT:-/tmp/wgnn-bench}
mkdir -p "$out"
W=${WGNN:-./build/wgnn}
: > "$out/wgnn_ops.jsonl"
grep -v '^#' bench/ops_cases.txt | while IFS='|' read -r label cmd flops expr; do
  label=$(echo $label)
  [ -z "$label" ] && continue
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$label"; then continue; fi
  fl=$(echo $flops)
  extra=""
  [ "$fl" != 0 ] && extra="--flops $fl"
  # shellcheck disable=SC2086
  $W bench op $cmd --iters ${ITERS:-20} --warmup 3 --json $extra 2>>"$out/errors.txt" |
    sed "s/^{/{\"label\":\"$label\",/" | tee -a "$out/wgnn_ops.jsonl"
done
python3 bench/torch_ops.py "$@" | tee "$out/torch_ops.jsonl"
