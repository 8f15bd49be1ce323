#!/usr/bin/env bash
# Session 17, call 6: ViT-B/16's batch-1 block products on a fixed tile, K
# slices and K groups (WGNN_GEMM_TILE, WGNN_GEMM_SPLIT=S, WGNN_GEMM_KW=kw
# with WGNN_COMPUTE_UNITS=0, so that the groups are the largest divisor of
# S up to kw: S / kw slices stay batch entries with a reduce): the 32 x 64
# tile (16x4x8x4x16, the default) against 40 x 128 (32x5x8x4x16: 5 row
# tiles of 197 rows, one workgroup of kw x 160 threads an SM where tiles x
# S / kw is about the 132 SMs). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
M=197
one() { # label tile S kw -- product args
  local l=$1 t=$2 s=$3 k=$4; shift 5
  op_env "$l $t S=$s kw=$k" WGNN_COMPUTE_UNITS=0 WGNN_GEMM_TILE=$t WGNN_GEMM_SPLIT=$s WGNN_GEMM_KW=$k -- "$@"
}
fc1=(addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu)
fc2=(addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true)
qkv=(addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304)
out=(addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true)
echo "== default plan"; vit_products $M
for t in 16x4x8x4x16 32x5x8x4x16; do
  for c in 4,4 8,4 2,2 3,3 6,3; do one fc1 $t ${c%,*} ${c#*,} -- "${fc1[@]}"; done
  for c in 4,4 8,4 3,3 2,2 6,3 12,4; do one qkv $t ${c%,*} ${c#*,} -- "${qkv[@]}"; done
  for c in 16,4 12,4 8,4 6,3 6,2 24,4; do one fc2 $t ${c%,*} ${c#*,} -- "${fc2[@]}"; done
  for c in 16,4 12,4 8,4 6,2 4,4; do one out $t ${c%,*} ${c#*,} -- "${out[@]}"; done
done
one fc1chk 32x5x8x4x16 4 4 -- "${fc1[@]}" --check
one fc2chk 32x5x8x4x16 16 4 -- "${fc2[@]}" --check
