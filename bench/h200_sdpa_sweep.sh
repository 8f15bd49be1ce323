#!/usr/bin/env bash
# Fused SDPA tile candidates on the NVIDIA H200 in one device call (issue 11):
# for each candidate (a WGNN_FUSED_TILE / WGNN_FUSED_FLAGS setting, or the
# default route) at the target shapes plus the ViT and decode shapes, `wgnn
# bench sdpa --json` timings and, from the same runs' shader dumps
# (WGNN_DUMP_SHADERS), the driver's register count and code size of the
# sdpa_fused pipeline (build/kstat); PyTorch's times (bench/torch_sdpa.py);
# a --check against the CPU reference of each candidate at three odd shapes
# (float32 with a mask, float16 storage). Run from the repo root on the
# device, build carried:
#   bash bench/h200_sdpa_sweep.sh
#   # device tool: carry [".gl", "deps/dawn/lib", "build/wgnn", "build/kstat"]
# Everything goes to $OUT (or /tmp/wgnn-sweep): wgnn.jsonl, torch.jsonl,
# checks.jsonl, kstat/<run>.tsv, dumps/<run>/, log.txt; tables at the end
# (bench/sdpa_sweep_table.py, also in $OUT/tables.md). About 4 minutes;
# candidates not started by BUDGET seconds (default 270) are skipped, so the
# tables always come out. CANDS / SHAPES / CHECKS / BUDGET override the
# defaults.
set -u
cd "$(dirname "$0")/.."
. bench/h200_env.sh
out=${OUT:-/tmp/wgnn-sweep}
mkdir -p "$out/kstat" "$out/dumps"
W=./build/wgnn
K=./build/kstat
budget=${BUDGET:-270}
t0=$SECONDS
log() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$out/log.txt" >&2; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee "$out/gpu.txt"
$W info > "$out/info.txt" 2>&1 || { cat "$out/info.txt"; exit 1; }
[ -x "$K" ] || log "no build/kstat: timings only"

# label:WGNN_FUSED_TILE:WGNN_FUSED_FLAGS (empty: unset). 'l' = the kernel's
# LEAN variant, 'uN' its unroll, 'g' subgroup maxima (on by default; a
# FLAGS value lists every flag that is on). A tile that does not fit the
# 48 KiB of workgroup memory at a D falls back to the first default tile
# that does (the kstat columns show what ran).
cands=${CANDS:-"auto:: \
l8x16x2x2:8x16x2x2:gl \
l16x16x1x1:16x16x1x1:gl \
l12x16x2x1:12x16x2x1:gl \
l16x16x2x1:16x16x2x1:gl \
l8x16x2x1:8x16x2x1:gl \
l8x16x2x2u2:8x16x2x2:glu2 \
l8x16x2x2u8:8x16x2x2:glu8 \
l12x16x2x2:12x16x2x2:gl \
c8x16x2x2:8x16x2x2:g \
l8x16x1x2:8x16x1x2:gl"}
shapes=${SHAPES:-"1,12,4096,4096,64 4,16,4096,4096,128 1,16,16384,16384,64 1,12,197,197,64 1,8,1,4096,64"}
checks=${CHECKS:-"2,4,333,517,128:--mask 2,3,1000,77,64:--mask 1,4,257,300,64:--f16"}

log "PyTorch"
python3 bench/torch_sdpa.py $shapes > "$out/torch.jsonl" 2> "$out/torch.err" || log "torch_sdpa.py failed (see torch.err)"

# run TILE FLAGS DUMPDIR SECONDS ARGS...: one wgnn command with a candidate's
# knobs (empty: unset), its shaders dumped to DUMPDIR (empty: none)
run() {
  local tile=$1 flags=$2 dump=$3 secs=$4
  shift 4
  env ${tile:+WGNN_FUSED_TILE=$tile} ${flags:+WGNN_FUSED_FLAGS=$flags} ${dump:+WGNN_DUMP_SHADERS=$dump} \
    timeout "$secs" "$W" "$@"
}
# adds "label" (and "run") to a --json line; a run that printed nothing
# (killed, crashed) still gets a line
tag_json() {
  local line=$1 extra=$2
  [ -n "$line" ] || line='{"error":"no output (timeout or crash: see errors.txt)"}'
  echo "{${extra},${line#\{}"
}

# Candidates in order of interest, each whole: its checks (correctness where
# lavapipe cannot go: TX=16 with subgroup shuffles, 48 KiB tiles; odd sizes,
# a mask, float16 storage), then its timing runs. The budget cuts the last
# candidates, never a candidate's shapes.
: > "$out/wgnn.jsonl"
: > "$out/checks.jsonl"
for c in $cands; do
  IFS=: read -r label tile flags <<< "$c"
  if [ $((SECONDS - t0)) -gt "$budget" ]; then
    log "past the budget of $budget s: skipping $label"
    continue
  fi
  for chk in $checks; do
    line=$(run "$tile" "$flags" "" 40 bench sdpa --shape "${chk%%:*}" ${chk#*:} --impl fused --iters 1 --warmup 0 --check \
           --json 2>>"$out/errors.txt")
    tag_json "$line" "\"label\":\"$label\"" >> "$out/checks.jsonl"
  done
  for s in $shapes; do
    iters=20
    case $s in 4,16,4096*|*16384*) iters=5 ;; esac
    impl=fused
    [ "$label" = auto ] && impl=auto
    tag="${label}_${s//,/x}"
    rm -rf "$out/dumps/$tag"
    line=$(run "$tile" "$flags" "$out/dumps/$tag" 60 bench sdpa --shape "$s" --impl $impl --iters $iters --warmup 2 \
           --json 2>>"$out/errors.txt")
    tag_json "$line" "\"label\":\"$label\",\"run\":\"$tag\"" >> "$out/wgnn.jsonl"
    [ -x "$K" ] && "$K" "$out/dumps/$tag" > "$out/kstat/$tag.tsv" 2>> "$out/errors.txt"
  done
  log "$label done"
done
# Robust buffer access on (in case Dawn's VkDevice has it on despite
# disable_robustness): the same modules, to see whether it changes the count.
first="auto_$(echo "${shapes%% *}" | tr , x)"
[ -x "$K" ] && [ -d "$out/dumps/$first" ] && "$K" --robust "$out/dumps/$first" > "$out/kstat/robust_$first.tsv" 2>> "$out/errors.txt"

python3 bench/sdpa_sweep_table.py "$out" | tee "$out/tables.md"
log "done"
