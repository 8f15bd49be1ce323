# bench/op_median.sh - sourced by device scripts (docs/data/session*/dev*_script.sh):
# one line per `wgnn bench op` case, its median (and --check's verdict).
#   op_env LABEL [VAR=value ...] -- OP ARGS...     ./build/wgnn with those variables set
#   op_bin LABEL BINARY -- OP ARGS...              another binary (e.g. build/old/wgnn)
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
