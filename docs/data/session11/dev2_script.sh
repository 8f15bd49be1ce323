#!/usr/bin/env bash
# session 11 call 2: K slices of the batch-1 products on the new 32 x 64
# small-M tile (WGNN_GEMM_SPLIT=S against the default choice), registers of
# that tile and of the 32 x 128 one (how many workgroups an SM holds, so
# how many waves a slice count makes), and the attention's key splits at
# batch 1 (WGNN_FUSED_SPLIT).
. bench/h200_env.sh
. bench/op_median.sh
for t in default 16x8x4x8x16; do
  E=(); [ $t != default ] && E=(WGNN_GEMM_TILE=$t)
  echo "== kstat $t"
  env "${E[@]}" bash bench/kernel_stats/kstat.sh -- bench op addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --iters 1 2>&1 | tail -5
done
{
M=197
for s in default 1 2 3 4 6 8 12; do
  E=(); [ $s != default ] && E=(WGNN_GEMM_SPLIT=$s)
  op_env "fc1" "${E[@]}" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
  op_env "fc2" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  op_env "qkv" "${E[@]}" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
  op_env "out" "${E[@]}" -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
done
for s in default 1 2 3 6 8; do
  E=(); [ $s != default ] && E=(WGNN_FUSED_SPLIT=$s)
  printf "%-8s %-44s " sdpa1 "${E[*]:-default}"
  env "${E[@]}" ./build/wgnn bench sdpa --shape 1,12,197,197,64 --impl fused --iters 30 --warmup 5 --json | python3 -c 'import sys, json
for l in sys.stdin:
    try: d = json.loads(l); print("%.4f ms" % d["median_ms"])
    except Exception: print(l.strip()[:160])'
done
} > $OUT/ops.txt 2>&1
cat $OUT/ops.txt
