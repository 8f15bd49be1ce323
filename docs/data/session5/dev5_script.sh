#!/usr/bin/env bash
# session 5 call 5 (final): encoders 1/8/32 f32 against 7d7616b, the changed ops against it, SDPA at ViT shapes with a CPU check
set -u
. bench/h200_env.sh
O=${OUT:-/tmp/o5}; mkdir -p $O
OUT=/tmp/m5 OLD=build/old/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $O/models.txt 2>&1
grep -E '^\{|^===|median|GPU time|outside' $O/models.txt | grep -v "pooler_output" | sed -E 's/first run \(graph build \+ run\) [0-9.]+ ms; //; s/, [0-9.]+ ms \(the profiled run\).*//; s/per run \(upload, one submit, wait\); medians of its parts://; s/last_hidden_state vs [^:]*: //'
op() { # label binary -- op args
  local label=$1 bin=$2; shift 3
  printf "%-14s %-18s " "$label" "$bin"
  $bin bench op "$@" --iters 20 --warmup 3 --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  try: d=json.loads(l); print("%.4f ms" % d["median_ms"])
  except Exception: print(l.strip()[:200])'
}
{
for b in ./build/wgnn build/old/wgnn; do
  op fc2_b32 $b -- addmm --in-shape f32:768 --in-shape f32:6304,3072 --in-shape f32:3072,768
  op out_b32 $b -- addmm --in-shape f32:768 --in-shape f32:6304,768 --in-shape f32:768,768
  op lin_f16w $b -- linear --in-shape f32:1576,768 --in-shape f16:3072,768 --in-shape f32:3072
  op merge_b32 $b -- permute --in-shape f32:32,12,197,64 --arg dims=0,2,1,3
  op qkv_b32 $b -- qkv_rope --in-shape f32:32,197,2304 --arg num_heads=12 --arg num_kv_heads=12
  op patches_b32 $b -- permute --in-shape f32:32,3,14,16,14,16 --arg dims=0,2,4,1,3,5
done
} 2>&1 | tee $O/ops.txt
for s in 2,12,197,197,64 1,12,577,577,64; do ./build/wgnn bench sdpa --shape $s --check --iters 3 --json 2>&1 | python3 -c 'import sys,json
for l in sys.stdin:
  d=json.loads(l); print(d.get("shape"), "check:", {k:v for k,v in d.items() if "check" in k or "err" in k})'; done | tee $O/sdpa_check.txt
SHAPES="1,12,197,197,64 32,12,197,197,64 1,12,577,577,64 1,8,1,4096,64 1,12,4096,4096,64" IMPLS="auto" OUT=$O/sdpa bash bench/h200_sdpa.sh 2>&1 | tail -12
