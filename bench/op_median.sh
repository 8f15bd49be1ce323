# bench/op_median.sh - sourced by device scripts (docs/data/session*/dev*_script.sh):
# one line per `wgnn bench op` case, its median (and --check's verdict).
#   op_env LABEL [VAR=value ...] -- OP ARGS...     ./build/wgnn with those variables set
#   op_bin LABEL BINARY -- OP ARGS...              another binary (e.g. build/old/wgnn)
#   vit_products M [VAR=value ...]                 ViT-B/16's four block products at M rows
#   sdpa_env LABEL [VAR=value ...] -- SHAPE         one bench sdpa line (auto route)
# --iters 20 --warmup 3 unless ARGS repeat them (the last wins).
op_median_run() { # binary env-assignments... -- op args
  local bin=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" "$bin" bench op "$@" --iters 20 --warmup 3 --json 2>&1 | python3 -c 'import sys, json
for l in sys.stdin:
    try:
        d = json.loads(l); print("%.4f ms %s" % (d["median_ms"], d.get("check", "")))
    except Exception:
        print(l.strip()[:200])'
}
op_env() {
  local label=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  printf "%-8s %-44s " "$label" "${envs[*]:-default}"
  op_median_run ./build/wgnn "${envs[@]}" "$@"
}
op_bin() {
  local label=$1 bin=$2; shift 2
  printf "%-8s %-16s " "$label" "$bin"
  op_median_run "$bin" "$@"
}
# vit_products M [VAR=value ...]: ViT-B/16's four block products at M rows
# (197 = batch 1, 6304 = batch 32) as the graph runs them (fc1 with bias and
# GELU; fc2 and the out projection with the residual and the LayerNorm in
# the reduce; q|k|v with its bias), one op_env line each.
vit_products() {
  local M=$1; shift
  op_env "fc1" "$@" -- addmm --in-shape f32:3072 --in-shape f32:$M,768 --in-shape f32:768,3072 --arg activation=gelu
  op_env "fc2" "$@" -- addmm --in-shape f32:768 --in-shape f32:$M,3072 --in-shape f32:3072,768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
  op_env "qkv" "$@" -- addmm --in-shape f32:2304 --in-shape f32:$M,768 --in-shape f32:768,2304
  op_env "out" "$@" -- addmm --in-shape f32:768 --in-shape f32:$M,768 --in-shape f32:768,768 --in-shape f32:$M,768 \
    --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true
}
# sdpa_env LABEL [VAR=value ...] -- SHAPE: one `wgnn bench sdpa --impl auto`
# line at B,H,S_q,S_kv,D with those variables set (20 runs; 5 for the
# long shapes), prefixed "LABEL SHAPE:".
sdpa_env() {
  local l=$1; shift; local e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
  local it=20; case $1 in 4,16*|*16384*) it=5 ;; esac
  echo "$l $1: $(env "${e[@]}" ./build/wgnn bench sdpa --shape $1 --impl auto --iters $it --warmup 2 2>&1 | tail -1 |
    sed 's/ timer=.*//; s/ (min.*iters)//')"
}
