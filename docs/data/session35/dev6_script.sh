#!/usr/bin/env bash
# Session 35 call 6 (device tool: carry [".gl", "deps/dawn/lib", "build"]):
# 1. every op-suite case (bench/ops_cases.txt) on the committed build with
#    PyTorch in the same call (bench/h200_ops.sh, ITERS=50), twice for
#    wgnn: the op-suite table on an H100;
# 2. gemvn.wgsl's workgroup size (WGNN_GEMV_WG) x column quads for the
#    three untransposed GEMVs;
# 3. gemm.wgsl tiles for the gathered conv2d at 224^2 (64 output channels).
# Logs to $OUT/dev6_log.txt (and h200_ops.sh's jsonl under $OUT/ops*).
cd "$(dirname "$0")/../../.."
log=$OUT/dev6_log.txt
t0=$(date +%s)
med() { python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read()); print(d.get("median_ms", d.get("error")))
except ValueError:
    print("no result")'; }
cmd_of() { grep "^$1 " bench/ops_cases.txt | cut -d'|' -f2; }
# shellcheck disable=SC2046
bo() { timeout 60 "$1" bench op $(cmd_of "$2") --iters 50 --warmup 5 --json | med; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$log"
{ OUT=$OUT/ops1 ITERS=50 timeout 200 bash bench/h200_ops.sh > /dev/null 2>&1
  echo "== ops round 1 at $(($(date +%s) - t0)) s"
  . bench/h200_env.sh
  grep -v '^#' bench/ops_cases.txt | cut -d'|' -f1 | while read -r c; do
    [ -n "$c" ] && echo "r2 $c $(bo ./build/wgnn "$c")"
  done
  echo "== ops round 2 at $(($(date +%s) - t0)) s"
  for c in gemv_1x4096x4096 gemv_4x4096x4096 gemv_1x3072x768; do
    for wg in 64 128 256 512 1024; do for q in 2 4 8; do
      echo "$c wg$wg q$q $(WGNN_GEMV_WG=$wg WGNN_GEMVN_QUADS=$q bo ./build/wgnn $c)"
    done; done
  done
  for t in 16x16x4x4x16 16x16x4x4x8 32x8x8x4x16 32x8x8x4x8 16x16x4x8x8 8x16x8x4x16; do
    echo "conv2d_3x3_64_224_b8 tile$t $(WGNN_GEMM_TILE=$t bo ./build/wgnn conv2d_3x3_64_224_b8)"
  done
  echo "== done at $(($(date +%s) - t0)) s"
} >> "$log" 2>&1
