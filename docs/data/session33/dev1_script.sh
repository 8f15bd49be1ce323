#!/usr/bin/env bash
# Session 33 call 1 (device tool: carry [".gl", "deps/dawn/lib", "build"];
# build/old/wgnn is the build of 1c9489c, before this session's kernels).
# On any card, interleaved, two rounds, PyTorch (bench/torch_ops.py) in the
# same call:
# - the depthwise conv2d cases of bench/ops_cases.txt on conv2d_dw.wgsl
#   (auto) and on the direct kernel conv2d.wgsl (WGNN_CONV_ROUTE=direct),
#   and conv2d_dw.wgsl's tile swept (WGNN_CONV_DW=TW,TYT,RY);
# - the GEMV cases with an untransposed B on gemvn.wgsl (auto, and
#   WGNN_GEMVN_QUADS=1,2,4,8,16) and on the old build (small-M tile, K slices).
# On an H200 it first runs session 32's call 6 (issue 9's encoders and
# issue 11's SDPA shapes), its log appended after this part's. The tile
# sweeps run in round 1 only. Last, the new kernels' register counts
# (bench/kernel_stats/kstat.sh).
cd "$(dirname "$0")/../../.."
log=$OUT/dev1_log.txt
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) bash docs/data/session32/dev6_script.sh ;; esac
med() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["median_ms"])'; }
cmd_of() { grep "^$1 " bench/ops_cases.txt | cut -d'|' -f2; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  . bench/h200_env.sh
  CL="conv2d_dw7x7_96_56_b8 conv2d_dw7x7_96_56_b1 conv2d_dw7x7_768_7_b8 conv2d_dw3x3_s2_144_112_b8"
  GL="gemv_1x4096x4096 gemv_4x4096x4096 gemv_1x3072x768"
  for r in 1 2; do
    for c in $CL; do
      for route in auto direct; do
        # shellcheck disable=SC2046
        echo "r$r $c $route $(WGNN_CONV_ROUTE=$route timeout 60 ./build/wgnn bench op $(cmd_of $c) --iters 50 --warmup 5 --json | med)"
      done
    done
    [ $r = 1 ] && for c in conv2d_dw7x7_96_56_b8 conv2d_dw7x7_768_7_b8 conv2d_dw3x3_s2_144_112_b8; do
      for t in 32,8,2 32,8,4 16,8,4 32,2,4 64,2,4 64,4,2 8,8,4 8,16,1 8,4,2 4,8,2; do
        # shellcheck disable=SC2046
        echo "r$r $c dw$t $(WGNN_CONV_DW=$t timeout 60 ./build/wgnn bench op $(cmd_of $c) --iters 50 --warmup 5 --json | med)"
      done
    done
    for c in $GL; do
      # shellcheck disable=SC2046
      echo "r$r $c old $(timeout 60 ./build/old/wgnn bench op $(cmd_of $c) --iters 50 --warmup 5 --json | med)"
      qs="0 1 2 4 8 16"; [ $r = 2 ] && qs=0
      for q in $qs; do
        # shellcheck disable=SC2046
        echo "r$r $c q$q $(WGNN_GEMVN_QUADS=$q timeout 60 ./build/wgnn bench op $(cmd_of $c) --iters 50 --warmup 5 --json | med)"
      done
    done
  done
  timeout 120 python3 bench/torch_ops.py --iters=50 $CL $GL
  for c in conv2d_dw7x7_96_56_b8 conv2d_dw3x3_s2_144_112_b8 gemv_1x4096x4096 gemv_4x4096x4096; do
    echo "== kernel stats: $c"
    # shellcheck disable=SC2046
    timeout 60 bash bench/kernel_stats/kstat.sh -- bench op $(cmd_of $c) --iters 1 2>&1 | tail -4
  done
} > $log 2>&1
