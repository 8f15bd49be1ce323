#!/usr/bin/env bash
# Session 35 call 8 (device tool: carry [".gl", "deps/dawn/lib", "build"]):
# why gelu on 256 MiB is 0.85x PyTorch (call 6): the unary ops of the
# elementwise family on the same 64 Mi floats (bench op, medians of 50,
# three rounds), from the cheapest (relu) to gelu's exact erfc, and the
# kernel's registers (kstat). Logs to $OUT/dev8_log.txt.
cd "$(dirname "$0")/../../.."
log=$OUT/dev8_log.txt
med() { python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read()); print(d.get("median_ms", d.get("error")))
except ValueError:
    print("no result")'; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$log"
. bench/h200_env.sh
{ for r in 1 2 3; do
    for o in relu sigmoid tanh silu "gelu --arg approximate=tanh" gelu; do
      # shellcheck disable=SC2086
      echo "r$r $o $(timeout 60 ./build/wgnn bench op $o --in-shape f32:67108864 --iters 50 --warmup 5 --json | med)"
    done
  done
  for o in relu gelu; do
    echo "== kernel stats: $o"
    timeout 40 bash bench/kernel_stats/kstat.sh -- bench op $o --in-shape f32:67108864 --iters 1 2>&1 | tail -3
  done
} >> "$log" 2>&1
