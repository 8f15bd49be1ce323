#!/usr/bin/env bash
# Session 33 call 2, the short form of call 1 for a call with little device
# time left (carry [".gl", "deps/dawn/lib", "build"]; build/old/wgnn is
# 1c9489c's build). On any card, one round: the depthwise conv2d cases on
# conv2d_dw.wgsl (auto) against conv2d.wgsl (WGNN_CONV_ROUTE=direct), the
# untransposed-B GEMVs on gemvn.wgsl (auto, WGNN_GEMVN_QUADS=1,2,8) against
# the old build, PyTorch's for both. Then, on an H200 only: issue 9's
# encoders with PyTorch (ViT-B/16 batch 1 twice, batch 32 once, SigLIP-B/16
# batch 1) and issue 11's SDPA shapes. Everything goes to $OUT/dev2_log.txt
# as it runs.
cd "$(dirname "$0")/../../.."
log=$OUT/dev2_log.txt
med() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["median_ms"])'; }
cmd_of() { grep "^$1 " bench/ops_cases.txt | cut -d'|' -f2; }
name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$name" > $log
. bench/h200_env.sh
CL="conv2d_dw7x7_96_56_b8 conv2d_dw7x7_96_56_b1 conv2d_dw7x7_768_7_b8 conv2d_dw3x3_s2_144_112_b8"
GL="gemv_1x4096x4096 gemv_4x4096x4096 gemv_1x3072x768"
{ for c in $CL; do
    for route in auto direct; do
      # shellcheck disable=SC2046
      echo "$c $route $(WGNN_CONV_ROUTE=$route timeout 60 ./build/wgnn bench op $(cmd_of $c) --iters 50 --warmup 5 --json | med)"
    done
  done
  for c in $GL; do
    # shellcheck disable=SC2046
    echo "$c old $(timeout 60 ./build/old/wgnn bench op $(cmd_of $c) --iters 50 --warmup 5 --json | med)"
    for q in 0 1 2 8; do
      # shellcheck disable=SC2046
      echo "$c q$q $(WGNN_GEMVN_QUADS=$q timeout 60 ./build/wgnn bench op $(cmd_of $c) --iters 50 --warmup 5 --json | med)"
    done
  done
  timeout 90 python3 bench/torch_ops.py --iters=50 $CL $GL
} >> $log 2>&1
case $name in *H200*) ;; *) exit 0 ;; esac
{ . bench/op_median.sh; w=/tmp/wgnn-models; mkdir -p $w
  timeout 150 python3 bench/torch_models.py $w --batches 1,32 --iters 20 2>&1 | grep side
  for r in 1 2; do ITERS=100 enc_run "r$r" vit_b16 1; done
  ITERS=20 enc_run "r1" vit_b16 32
  ITERS=100 enc_run "r1" siglip_b16 1
  echo "== sdpa"
  OUT=$OUT/sdpa SHAPES="1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,12,197,197,64 1,8,1,4096,64" \
    IMPLS=auto timeout 150 bash bench/h200_sdpa.sh 2>&1 | tail -25
} >> $log 2>&1
