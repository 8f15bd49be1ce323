#!/usr/bin/env bash
# Decode-time products (M = 1) of the Qwen3-0.6B shape, one kernel each,
# in f32, f16 and q8 weights, under knob variants: `wgnn bench op` medians
# (GPU timestamps) and the weight bandwidth they reach (docs/PERFORMANCE.md).
# Run from the repo root on the device machine with the build carried:
#   bash bench/h200_gemv.sh
# Env: ITERS (50), FORMATS ("f32 f16 q8"), SHAPES ("K:N ..."), VARIANTS
# (labels "label:VAR=value[,VAR=value]"; "base" always runs first), WGNN
# (the binary, default ./build/wgnn).
set -u
cd "$(dirname "$0")/.."
[ -e /usr/local/nvidia/share/vulkan ] && . bench/h200_env.sh
bin=${WGNN:-./build/wgnn}
shapes=${SHAPES:-"1024:4096 2048:1024 1024:6144 3072:1024 1024:151936"}
printf '%-10s %-4s %-12s %10s %8s\n' variant fmt KxN median_us GB/s
for v in base: ${VARIANTS:-}; do
  label=${v%%:*}
  envs=${v#*:}
  for f in ${FORMATS:-f32 f16 q8}; do
    for s in $shapes; do
      k=${s%%:*}
      n=${s#*:}
      case $f in
        f32) args=(linear --in-shape "f32:1,$k" --in-shape "f32:$n,$k") ;;
        f16) args=(linear --in-shape "f32:1,$k" --in-shape "f16:$n,$k") ;;
        q8) args=(linear_q8 --in-shape "f32:1,$k" --in-shape "i32:$n,$((k / 4)){-2147483647,2147483647}" --in-shape "f32:$n") ;;
      esac
      line=$(env ${envs//,/ } "$bin" bench op "${args[@]}" --iters "${ITERS:-50}" --warmup 5 --json 2>&1 | tail -1)
      python3 - "$label" "$f" "${k}x$n" "$line" <<'PY'
import json, sys
label, f, s, line = sys.argv[1:5]
try:
    j = json.loads(line)
    k, n = map(int, s.split("x"))
    wbytes = n * k * {"f32": 4, "f16": 2, "q8": 1}[f]
    print(f"{label:<10} {f:<4} {s:<12} {j['median_ms'] * 1e3:10.1f} {wbytes / (j['median_ms'] * 1e-3) / 1e9:8.0f}")
except Exception:
    print(f"{label:<10} {f:<4} {s:<12} error: {line[:200]}")
PY
    done
  done
done
