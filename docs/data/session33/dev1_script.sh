#!/usr/bin/env bash
# Session 33 call 1 (device tool: carry [".gl", "deps/dawn/lib", "build"]).
# On any card: the depthwise conv2d cases of bench/ops_cases.txt on
# conv2d_dw.wgsl (auto) and on the direct kernel conv2d.wgsl
# (WGNN_CONV_ROUTE=direct), interleaved, two rounds, and PyTorch's
# (bench/torch_ops.py) in the same call. On an H200 it then runs session
# 32's call 6 (issue 9's encoders and issue 11's SDPA shapes).
cd "$(dirname "$0")/../../.."
log=$OUT/dev1_log.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  . bench/h200_env.sh
  L="conv2d_dw7x7_96_56_b8 conv2d_dw7x7_96_56_b1 conv2d_dw7x7_768_7_b8 conv2d_dw3x3_s2_144_112_b8"
  for r in 1 2; do
    for c in $L; do
      cmd=$(grep "^$c " bench/ops_cases.txt | cut -d'|' -f2)
      for route in auto direct; do
        # shellcheck disable=SC2086
        ms=$(WGNN_CONV_ROUTE=$route timeout 60 ./build/wgnn bench op $cmd --iters 50 --warmup 5 --json |
             python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["median_ms"])')
        echo "r$r $c $route $ms"
      done
    done
  done
  timeout 120 python3 bench/torch_ops.py --iters=50 $L
} > $log 2>&1
case $(head -1 $log) in *H200*) bash docs/data/session32/dev6_script.sh; cat $OUT/dev6_log.txt >> $log ;; esac
