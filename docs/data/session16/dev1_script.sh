#!/usr/bin/env bash
# Session 16, call 1: sdpa_decode with the loads that do not wait for the
# cache length issued first (the first pass's K/V rows, the rows to stage,
# the norms; the new k/v rows taken from workgroup memory by the split
# that holds them) against c9220a1's build (build/old/wgnn), and the
# kernel's threads (WGNN_DECODE_WG) and keys a subgroup (WGNN_DECODE_U):
# Qwen3-0.6B-shaped decode, ms a token at context 512-544, two rounds; the
# default --max-context (4096) too; then `bench op sdpa_kvcache` at the
# decode shape. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
work=/tmp/wgnn-llm
mkdir -p $work
[ -f $work/qwen3/prompt_ids.npy ] || python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" > $OUT/torch_llm.jsonl 2>&1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
gen() { # label bin ctx weights env...
  local label=$1 bin=$2 ctx=$3 w=$4; shift 4
  echo "$label $w ctx$ctx: $(env "$@" $bin generate --model $work/qwen3 --prompt-ids "$ids" --max-new-tokens 32 \
    --ignore-eos --weights $w --max-context $ctx --iters 3 --ids-out $OUT/ids_${w}_${label%% *}.npy 2>&1 | grep -o 'decode [0-9.]* tokens/s ([0-9.]* ms/token')"
}
for round in 1 2; do
  for w in f32 f16 q8; do
    gen "old r$round" build/old/wgnn 640 $w
    gen "new r$round" ./build/wgnn 640 $w
    gen "wg256 r$round" ./build/wgnn 640 $w WGNN_DECODE_WG=256
  done
  gen "u8 r$round" ./build/wgnn 640 f32 WGNN_DECODE_U=8
  gen "u2 r$round" ./build/wgnn 640 f32 WGNN_DECODE_U=2
  gen "wg256u2 r$round" ./build/wgnn 640 f32 WGNN_DECODE_WG=256 WGNN_DECODE_U=2
  gen "wg512 r$round" ./build/wgnn 640 f32 WGNN_DECODE_WG=512
  gen "old4096 r$round" build/old/wgnn 4096 f32
  gen "new4096 r$round" ./build/wgnn 4096 f32
done
python3 - $OUT <<'PY'
import sys, glob, numpy as np
for f in sorted(glob.glob(sys.argv[1] + '/ids_*.npy')):
    w = f.split('ids_')[1].split('_')[0]
    old = np.load(sys.argv[1] + '/ids_%s_old.npy' % w)
    print(f.split('/')[-1], 'equal to the old build\'s' if np.array_equal(np.load(f), old) else 'DIFFERS from the old build\'s')
PY
rm -f $OUT/ids_*.npy
for r in 1 2; do
  op_bin "old" build/old/wgnn -- sdpa_kvcache --in-shape f32:1,16,1,128 --in-shape f32:1,8,640,128 --in-shape f32:1,8,640,128 --in-shape "i32:1{530,531}" --check
  op_env "new" -- sdpa_kvcache --in-shape f32:1,16,1,128 --in-shape f32:1,8,640,128 --in-shape f32:1,8,640,128 --in-shape "i32:1{530,531}" --check
  op_env "new" WGNN_DECODE_WG=256 -- sdpa_kvcache --in-shape f32:1,16,1,128 --in-shape f32:1,8,640,128 --in-shape f32:1,8,640,128 --in-shape "i32:1{530,531}"
  op_env "relu" -- relu --in-shape f32:1024
done
