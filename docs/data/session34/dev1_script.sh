#!/usr/bin/env bash
# Session 34 call 1 (device tool: carry [".gl", "deps/dawn/lib", "build"];
# build/old/wgnn is the build of 1c9489c, before session 33's kernels).
# Everything is appended to $OUT/dev1_log.txt as it runs, most wanted first,
# so that a call cut short still returns what ran:
# 1. any card, PyTorch (bench/torch_ops.py) in the same call:
#    - conv2d with groups = 1, its columns gathered by the GEMM
#      (WGNN_CONV_ROUTE=implicit, session 34) against im2col into scratch
#      (=im2col, the route before) and auto;
#    - the depthwise cases on conv2d_dw.wgsl (auto) against conv2d.wgsl
#      (=direct), grouped ones (32 and 64 channels a group) on the shared
#      GEMM (auto, session 34) against conv2d.wgsl (=direct), and the untransposed-B GEMVs on gemvn.wgsl against the
#      old build (session 33's kernels, never timed on a GPU);
# 2. an H200: issue 9's encoders and issue 11's SDPA shapes with PyTorch
#    (session 32's call 6); another card: ViT-B/16 at batch 1 twice, to
#    set beside session 32's numbers there;
# 3. while the call has time left: a second round of 1, gemm.wgsl's tiles
#    for the gathered conv2d (WGNN_GEMM_TILE), the depthwise tile and GEMV
#    quad sweeps, the new kernels' register counts.
cd "$(dirname "$0")/../../.."
log=$OUT/dev1_log.txt
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
name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$name" > "$log"
. bench/h200_env.sh
VL="conv2d_3x3_64_224_b8 conv2d_3x3_64_56_b8 conv2d_3x3_s2_128to256_b8 conv2d_vit_patch16"
CL="conv2d_dw7x7_96_56_b8 conv2d_dw7x7_96_56_b1 conv2d_dw7x7_768_7_b8 conv2d_dw3x3_s2_144_112_b8"
GL="gemv_1x4096x4096 gemv_4x4096x4096 gemv_1x3072x768"
GRL="conv2d_g4_128_28_b8 conv2d_g4_256_28_b8"
round() {
  for c in $VL; do
    for r in implicit im2col auto; do echo "r$1 $c $r $(WGNN_CONV_ROUTE=$r bo ./build/wgnn $c)"; done
  done
  for c in $CL $GRL; do
    for r in auto direct; do echo "r$1 $c $r $(WGNN_CONV_ROUTE=$r bo ./build/wgnn $c)"; done
  done
  for c in $GL; do echo "r$1 $c old $(bo ./build/old/wgnn $c)"; echo "r$1 $c new $(bo ./build/wgnn $c)"; done
}
{ round 1
  timeout 120 python3 bench/torch_ops.py --iters=50 $VL $CL $GRL $GL
} >> "$log" 2>&1
case $name in
  *H200*) echo "== H200: session 32's call 6" >> "$log"; bash docs/data/session32/dev6_script.sh
    cat "$OUT/dev6_log.txt" >> "$log" ;;
  *) # another card: ViT-B/16 at batch 1 against session 32's numbers on it (gemm.wgsl's B loads changed form)
    { echo "== ViT-B/16 batch 1"; . bench/op_median.sh; w=/tmp/wgnn-models; mkdir -p $w
      timeout 100 python3 bench/torch_models.py $w --batches 1 --iters 20 2>&1 | grep side
      for r in 1 2; do ITERS=100 enc_run "r$r" vit_b16 1; done
    } >> "$log" 2>&1 ;;
esac
{ left 330 && round 2
  left 380 && for c in conv2d_3x3_64_224_b8 conv2d_3x3_64_56_b8; do
    for t in 16x4x8x4x16 16x16x4x4x16 32x8x8x4x16 16x16x4x8x16 16x8x8x8x8 16x16x8x8x8; do
      echo "$c implicit tile$t $(WGNN_CONV_ROUTE=implicit WGNN_GEMM_TILE=$t bo ./build/wgnn $c)"
    done
  done
  left 420 && for c in conv2d_dw7x7_96_56_b8 conv2d_dw3x3_s2_144_112_b8; do
    for t in 32,8,2 16,8,4 32,2,4 64,2,4 8,8,4; do echo "$c dw$t $(WGNN_CONV_DW=$t bo ./build/wgnn $c)"; done
  done
  left 470 && for c in gemv_1x4096x4096 gemv_4x4096x4096; do
    for q in 1 2 4 8 16; do echo "$c q$q $(WGNN_GEMVN_QUADS=$q bo ./build/wgnn $c)"; done
  done
  left 510 && for c in conv2d_3x3_64_56_b8 conv2d_dw7x7_96_56_b8 gemv_1x4096x4096; do
    echo "== kernel stats: $c"
    # shellcheck disable=SC2046
    WGNN_CONV_ROUTE=implicit timeout 40 bash bench/kernel_stats/kstat.sh -- bench op $(cmd_of $c) --iters 1 2>&1 | tail -4
  done
  echo "== done at $(($(date +%s) - t0)) s"
} >> "$log" 2>&1
