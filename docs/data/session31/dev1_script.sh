#!/usr/bin/env bash
# Session 31 call 1. (1) Issue 11: the D = 64 long-sequence tile
# (8x16x4x2 SWZ LEAN u4), and D = 128's sdpa_fused_vh, with sQ's d4 index and sP's key index flipped in
# bit 0 on odd thread rows (SWP, WGNN_FUSED_SWP=1: a warp's two thread
# rows then read different banks; the unrolled steps fold the flip into
# their offsets, unlike session 25's SWR, which XORed three bits a load)
# against the default, two rounds, registers (kstat, with the driver's
# internal representations: --ir; a binary one tried with Triton's
# nvdisasm), checks against the CPU reference. (2) The SDPA part of the
# state table. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=${OUT:-/tmp/out}; mkdir -p $O/ir
echo "== sdpa: SWP at the default tile"
for round in 1 2; do
  for sh in 1,12,4096,4096,64 1,16,16384,16384,64; do
    sdpa_env "r$round default" -- $sh
    sdpa_env "r$round swp" WGNN_FUSED_SWP=1 -- $sh
  done
done
echo "== sdpa: SWP in sdpa_fused_vh (D = 128)"
for round in 1 2; do
  sdpa_env "r$round default" -- 4,16,4096,4096,128
  sdpa_env "r$round swp" WGNN_FUSED_SWP=1 -- 4,16,4096,4096,128
done
echo "== sdpa: SWP at other unrolls"
for fl in glwu4c8 glwu8 glwu2; do
  for s in 0 1; do
    sdpa_env "8x16x4x2 $fl swp=$s" WGNN_FUSED_TILE=8x16x4x2 WGNN_FUSED_FLAGS=$fl WGNN_FUSED_SWP=$s -- 1,12,4096,4096,64
  done
done
echo "== checks (SWP)"
echo "mask: $(WGNN_FUSED_SWP=1 build/wgnn bench sdpa --shape 1,3,1030,1500,64 --mask --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'impl.*\|max_abs.*')"
echo "f16: $(WGNN_FUSED_SWP=1 build/wgnn bench sdpa --shape 1,3,1500,1030,64 --f16 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
echo "vh: $(WGNN_FUSED_SWP=1 build/wgnn bench sdpa --shape 1,4,1030,1100,128 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'impl.*\|max_abs.*')"
echo "vh f16: $(WGNN_FUSED_SWP=1 build/wgnn bench sdpa --shape 1,4,1030,1100,128 --f16 --impl auto --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs.*')"
echo "== registers (and internal representations)"
for s in 0 1; do
  WGNN_FUSED_SWP=$s bash bench/kernel_stats/kstat.sh --ir -o /tmp/ks_$s -- bench sdpa --shape 1,12,4096,4096,64 --iters 1 --warmup 0 2>&1 | grep -i 'sdpa_fused\|kstat' | head -8
  WGNN_FUSED_SWP=$s bash bench/kernel_stats/kstat.sh -o /tmp/ksv_$s -- bench sdpa --shape 1,16,1024,1024,128 --iters 1 --warmup 0 2>&1 | grep -i 'sdpa_fused' | head -3
  for f in /tmp/ks_$s/ir/*; do [ -e "$f" ] && cp "$f" $O/ir/swp$s.$(basename $f); done
done
ls -la $O/ir | head
nvd=$(python3 -c 'import triton, os; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin"))' 2>/dev/null)
echo "triton bin: $nvd"; ls $nvd 2>/dev/null | head
for f in $O/ir/*.bin; do
  [ -e "$f" ] || continue
  echo "== $f"; head -c 64 "$f" | od -A x -t x1z | head -4
  [ -x "$nvd/nvdisasm" ] && timeout 60 "$nvd/nvdisasm" -c "$f" > "${f%.bin}.sass" 2>&1
  [ -x "$nvd/cuobjdump" ] && timeout 60 "$nvd/cuobjdump" -sass "$f" > "${f%.bin}.cuobj.sass" 2>&1
  wc -l "${f%.bin}"*.sass 2>/dev/null; head -3 "${f%.bin}.sass" 2>/dev/null
done
echo "== state: sdpa ($SECONDS s in)"
[ $SECONDS -lt 300 ] && OUT=$O/sdpa SHAPES="1,12,197,197,64 1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,8,1,4096,64" \
  IMPLS=auto timeout 150 bash bench/h200_sdpa.sh 2>&1 | tail -12
# On an H200 (none lent since session 22), the encoders too, as far as the
# call's 600 s allow.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  left=$((560 - SECONDS)); echo "== state: models ($left s left)"
  [ $left -gt 120 ] && OUT=$O/models ITERS=30 WEIGHTS=f32 timeout $left bash bench/h200_models.sh 1,32 2>&1 | tail -20
  for f in $O/models/wgnn_*_f32.txt; do echo "-- $f"; grep -E "^input|^GPU span|^pipelined|^resident" "$f"; done
fi
