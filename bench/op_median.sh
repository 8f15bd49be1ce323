# bench/op_median.sh - sourced by device scripts (docs/data/session*/dev*_script.sh):
# one line per `wgnn bench op` case, its median (and --check's verdict).
#   op_env LABEL [VAR=value ...] -- OP ARGS...     ./build/wgnn with those variables set
#   op_bin LABEL BINARY -- OP ARGS...              another binary (e.g. build/old/wgnn)
#   vit_products M [VAR=value ...]                 ViT-B/16's four block products at M rows
#   sdpa_env LABEL [VAR=value ...] -- SHAPE         one bench sdpa line (auto route)
#   enc_run LABEL MODEL BATCH [VAR=value ...] [-- OPTS]  one `wgnn run` line (an encoder from bench/torch_models.py;
#                                                  BIN=another binary)
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
# enc_run LABEL MODEL BATCH [VAR=value ...] [-- wgnn options]: one line
# for `wgnn run` on MODELS' (default /tmp/wgnn-models) MODEL (vit_b16,
# siglip_b16) at BATCH (bench/torch_models.py's inputs and PyTorch outputs
# there: MODEL_xB.npy, MODEL_lastB.npy) through BIN (default ./build/wgnn;
# e.g. BIN=build/old/wgnn for an older build): the synchronous call's
# median and parts, the pipelined run, the resident run (PyTorch's
# protocol), the GPU span and the check against PyTorch's
# last_hidden_state at ATOL (default 2e-3; ITERS runs, default 50).
# Options after "--" go after `run` (e.g. --weights f16).
enc_run() {
  local l=$1 m=$2 b=$3; shift 3; local e=() g=(); local w=${MODELS:-/tmp/wgnn-models} tol=${ATOL:-2e-3}
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do e+=("$1"); shift; done
  [ "${1:-}" = "--" ] && { shift; g=("$@"); }
  echo "$l $m b$b: $(env "${e[@]}" ${BIN:-./build/wgnn} run --model $w/$m --input $w/${m}_x$b.npy --iters ${ITERS:-50} \
    "${g[@]}" --profile --ref $w/${m}_last$b.npy --atol $tol --rtol $tol 2>&1 |
    grep -E '^input|^GPU span|^pipelined|^resident|vs /|rror' |
    sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//;
      s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/medians of its parts: //;
      s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/host .* in fetch (waiting, read-back)//;
      s/(input left on the GPU.*protocol)//; s/resident: [0-9]* runs of the graph alone,/resident/' | tr '\n' ' ')"
}
