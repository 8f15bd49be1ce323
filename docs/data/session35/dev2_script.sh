#!/usr/bin/env bash
# Session 35 call 2 (device tool: carry [".gl", "deps/dawn/lib", "build"]),
# after call 1 (session 34's dev1_script.sh, log dev1_log.txt here) set the
# new defaults: gemvn.wgsl's quads from one workgroup a compute unit (was
# four) and conv2d's gathered product on no smaller than the 64 x 64 tile
# (was the small-M tile). Logs to $OUT/dev2_log.txt as it runs:
# 1. the GPU's own results against the CPU reference for the kernels of
#    sessions 33-35 (test_ops conv2d / mm, test_spatial, test_gemm);
# 2. the new defaults (auto) against the routes before, PyTorch in the
#    same call; grouped conv2d at 32 and 64 channels a group on each
#    route and tile; sweeps for the cases call 1 left open (stride-2
#    conv2d's tiles, the stride-2 depthwise tile, 1 x 3072 x 768's quads).
cd "$(dirname "$0")/../../.."
log=$OUT/dev2_log.txt
t0=$(date +%s)
left() { [ $(($(date +%s) - t0)) -lt "$1" ]; } # less than $1 s gone
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
{ echo "== tests on the GPU"
  for t in "test_ops conv2d" "test_ops mm" "test_ops matmul" "test_spatial" "test_gemm"; do
    echo "$t: $(cd build && timeout 100 ./$t 2>&1 | tail -1)"
  done
  echo "$(cd build && WGNN_CONV_ROUTE=gemm timeout 100 ./test_ops conv2d 2>&1 | tail -1) (WGNN_CONV_ROUTE=gemm)"
  echo "== at $(($(date +%s) - t0)) s"
} >> "$log" 2>&1
VL="conv2d_3x3_64_224_b8 conv2d_3x3_64_56_b8 conv2d_3x3_s2_128to256_b8 conv2d_vit_patch16"
GRL="conv2d_g4_128_28_b8 conv2d_g4_256_28_b8"
GL="gemv_1x4096x4096 gemv_4x4096x4096 gemv_1x3072x768"
DL="conv2d_dw7x7_96_56_b8 conv2d_dw3x3_s2_144_112_b8"
round() {
  for c in $VL; do for r in auto im2col; do echo "r$1 $c $r $(WGNN_CONV_ROUTE=$r bo ./build/wgnn $c)"; done; done
  for c in $GRL; do for r in auto direct gemm; do echo "r$1 $c $r $(WGNN_CONV_ROUTE=$r bo ./build/wgnn $c)"; done; done
  for c in $GL; do echo "r$1 $c auto $(bo ./build/wgnn $c)"; done
  for c in $DL; do echo "r$1 $c auto $(bo ./build/wgnn $c)"; done
}
{ round 1
  timeout 100 python3 bench/torch_ops.py --iters=50 $VL $GRL $GL $DL
  for t in 16x4x8x4x16 16x16x4x4x16 16x16x8x4x16 32x8x8x4x16 8x8x4x4x8; do
    echo "conv2d_3x3_s2_128to256_b8 implicit tile$t $(WGNN_CONV_ROUTE=implicit WGNN_GEMM_TILE=$t bo ./build/wgnn conv2d_3x3_s2_128to256_b8)"
    echo "conv2d_3x3_s2_128to256_b8 im2col tile$t $(WGNN_CONV_ROUTE=im2col WGNN_GEMM_TILE=$t bo ./build/wgnn conv2d_3x3_s2_128to256_b8)"
  done
  for c in $GRL; do for t in 16x4x8x4x16 16x16x4x4x16 8x8x4x4x8; do
    echo "$c gemm tile$t $(WGNN_CONV_ROUTE=gemm WGNN_GEMM_TILE=$t bo ./build/wgnn $c)"
  done; done
  for q in 1 2 4 8; do echo "gemv_1x3072x768 q$q $(WGNN_GEMVN_QUADS=$q bo ./build/wgnn gemv_1x3072x768)"; done
  for t in 32,4,4 32,8,2 32,4,2 32,8,1 32,4,1 16,16,2 32,16,1; do
    for c in $DL; do echo "$c dw$t $(WGNN_CONV_DW=$t bo ./build/wgnn $c)"; done
  done
  echo "== at $(($(date +%s) - t0)) s"
  left 300 && round 2
  echo "== done at $(($(date +%s) - t0)) s"
} >> "$log" 2>&1
