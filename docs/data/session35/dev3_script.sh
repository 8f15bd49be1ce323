#!/usr/bin/env bash
# Session 35 call 3 (device tool: carry [".gl", "deps/dawn/lib", "build"]):
# the defaults set from call 2 (conv2d's gathered product on 128 x 64
# where it gives a workgroup a compute unit, else 64 x 64; gemvn.wgsl at
# two quads or more; conv2d_dw.wgsl at RY <= 2 for a vertical stride over
# 1), checked on the GPU against the CPU reference, then every op-suite
# case they touch on the committed build (auto), two rounds, PyTorch in
# the same call. Logs to $OUT/dev3_log.txt.
cd "$(dirname "$0")/../../.."
log=$OUT/dev3_log.txt
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
. bench/h200_env.sh
L="conv2d_3x3_64_224_b8 conv2d_3x3_64_56_b8 conv2d_3x3_s2_128to256_b8 conv2d_vit_patch16
   conv2d_g4_128_28_b8 conv2d_g4_256_28_b8 conv2d_dw7x7_96_56_b8 conv2d_dw7x7_96_56_b1
   conv2d_dw7x7_768_7_b8 conv2d_dw3x3_s2_144_112_b8 gemv_1x4096x4096 gemv_4x4096x4096 gemv_1x3072x768"
{ echo "== tests on the GPU"
  for t in "test_ops conv2d" "test_ops mm" "test_spatial" "test_gemm"; do
    echo "$t: $(cd build && timeout 100 ./$t 2>&1 | tail -1)"
  done
  for r in 1 2; do for c in $L; do echo "r$r $c $(bo ./build/wgnn $c)"; done; done
  # shellcheck disable=SC2086
  timeout 100 python3 bench/torch_ops.py --iters=50 $L
  echo "== done at $(($(date +%s) - t0)) s"
} >> "$log" 2>&1
