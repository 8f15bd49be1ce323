#!/usr/bin/env bash
# Session 35 call 7 (device tool: carry [".gl", "deps/dawn/lib", "build"]):
# gemvn.wgsl at its new default of 512 threads (halved to fit), checked
# against the CPU reference on the GPU and timed with PyTorch in the same
# call, three rounds. Logs to $OUT/dev7_log.txt.
cd "$(dirname "$0")/../../.."
log=$OUT/dev7_log.txt
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
. bench/h200_env.sh
L="gemv_1x4096x4096 gemv_4x4096x4096 gemv_1x3072x768"
{ for t in "test_ops mm" "test_ops matmul" "test_ops addmm" "test_gemm"; do
    echo "$t: $(cd build && timeout 100 ./$t 2>&1 | tail -1)"
  done
  for r in 1 2 3; do
    for c in $L; do echo "r$r $c $(bo ./build/wgnn $c) (256 threads: $(WGNN_GEMV_WG=256 bo ./build/wgnn $c))"; done
  done
  # shellcheck disable=SC2086
  timeout 60 python3 bench/torch_ops.py --iters=50 $L
} >> "$log" 2>&1
