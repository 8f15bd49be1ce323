#!/usr/bin/env bash
# Session 25 call 2. Call 1 found that the H100 runs no wave plans and
# picks K groups as for unknown compute units: the compute-units table
# (src/gpu/context.c) knew only the H200 (0x2335). This build adds the H100
# SXM5 (0x2330, 132 SMs, like the H200). Here: the card's id, then the
# encoders' products and the whole encoders at batches 1, 8 and 32 with
# no compute units (WGNN_COMPUTE_UNITS=0, what the H100 ran until now),
# with 132 and the tail margin (this build's default), and with 132 and
# the old tail rule (WGNN_GEMM_WAVES=1); two rounds; PyTorch eager in the
# same call. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
./build/wgnn info 2>&1 | grep -m2 -i 'device 0x'
V=("units0:WGNN_COMPUTE_UNITS=0" "units132:WGNN_COMPUTE_UNITS=132" "units132_waves1:WGNN_COMPUTE_UNITS=132:WGNN_GEMM_WAVES=1")
echo "== products"
for M in 197 1576 6304; do
  for v in "${V[@]}"; do
    IFS=: read -r -a a <<<"$v"
    echo "-- M=$M ${a[0]}"; vit_products $M "${a[@]:1}"
  done
done
echo "== encoders"
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,8,32 --iters 10 2>&1 | grep -v "Writing model" | tail -6
for round in 1 2; do
  for m in vit_b16 siglip_b16; do
    for b in 1 8 32; do
      it=50; [ $b = 8 ] && it=20; [ $b = 32 ] && it=10
      for v in "${V[@]}"; do
        IFS=: read -r -a a <<<"$v"
        ITERS=$it enc_run "r$round ${a[0]}" $m $b "${a[@]:1}"
      done
    done
  done
done
