#!/usr/bin/env bash
# Session 35 call 9 (device tool: carry [".gl", "deps/dawn/lib", "build"];
# build/old35/wgnn is the build before this change): elementwise_vec.wgsl
# with every operand 32-bit reading and writing lane-contiguous vec4 (a
# warp instruction one contiguous run) against the unit-a-lane layout
# before, on 256 MiB (64 Mi floats), three rounds, bench op medians of 50;
# PyTorch in the same call; the GPU's results on the elementwise cases.
# Logs to $OUT/dev9_log.txt.
cd "$(dirname "$0")/../../.."
log=$OUT/dev9_log.txt
med() { python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read()); print(d.get("median_ms", d.get("error")))
except ValueError:
    print("no result")'; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$log"
. bench/h200_env.sh
S=f32:67108864
{ for t in add mul sub div relu gelu sigmoid silu tanh where; do
    echo "test_ops $t: $(cd build && timeout 60 ./test_ops $t 2>&1 | tail -1)"
  done
  for r in 1 2 3; do
    for o in relu gelu sigmoid; do
      # shellcheck disable=SC2086
      echo "r$r $o old $(timeout 60 ./build/old35/wgnn bench op $o --in-shape $S --iters 50 --warmup 5 --json | med) new $(timeout 60 ./build/wgnn bench op $o --in-shape $S --iters 50 --warmup 5 --json | med)"
    done
    echo "r$r add old $(timeout 60 ./build/old35/wgnn bench op add --in-shape $S --in-shape $S --iters 50 --warmup 5 --json | med) new $(timeout 60 ./build/wgnn bench op add --in-shape $S --in-shape $S --iters 50 --warmup 5 --json | med)"
    echo "r$r add f16 old $(timeout 60 ./build/old35/wgnn bench op add --in-shape f16:67108864 --in-shape f16:67108864 --iters 50 --warmup 5 --json | med) new $(timeout 60 ./build/wgnn bench op add --in-shape f16:67108864 --in-shape f16:67108864 --iters 50 --warmup 5 --json | med)"
  done
  timeout 60 python3 bench/torch_ops.py --iters=50 add_256MiB gelu_256MiB
} >> "$log" 2>&1
