#!/usr/bin/env bash
# Session 28 call 3: ViT-B/16's four block products at batch 1 (M = 197)
# in more K slices with more K groups a workgroup (more warps on each SM
# for the same workgroups), `bench op` alone. WGNN_GEMM_SPLIT=S forces S
# slices; WGNN_GEMM_KW=k with WGNN_HACK_KW_FORCE=1 (kwforce.patch's
# scratch build) takes the largest divisor of S up to k as K groups, the
# rest batch entries with a reduce.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
M=197
fc1() { op_env "fc1" "$@" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu; }
fc2() { op_env "fc2" "$@" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true; }
qkv() { op_env "qkv" "$@" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304; }
out() { op_env "out" "$@" -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true; }
H=WGNN_HACK_KW_FORCE=1
for r in 1 2; do
  echo "round $r"
  fc2; fc2 WGNN_GEMM_SPLIT=6 WGNN_GEMM_KW=3 $H
  for kw in 3 4 6; do fc2 WGNN_GEMM_SPLIT=12 WGNN_GEMM_KW=$kw $H; done
  for kw in 4 6 8; do fc2 WGNN_GEMM_SPLIT=24 WGNN_GEMM_KW=$kw $H; done
  out; out WGNN_GEMM_SPLIT=6 WGNN_GEMM_KW=3 $H
  for kw in 3 4; do out WGNN_GEMM_SPLIT=12 WGNN_GEMM_KW=$kw $H; done
  fc1; for s in 3 4 6; do fc1 WGNN_GEMM_SPLIT=$s WGNN_GEMM_KW=8 $H; done
  fc1 WGNN_GEMM_SPLIT=4 WGNN_GEMM_KW=2 $H; fc1 WGNN_GEMM_SPLIT=6 WGNN_GEMM_KW=3 $H
  qkv; for s in 4 6; do qkv WGNN_GEMM_SPLIT=$s WGNN_GEMM_KW=8 $H; done
  qkv WGNN_GEMM_SPLIT=6 WGNN_GEMM_KW=3 $H
done
