#!/usr/bin/env bash
# Session 16, call 3: sdpa_decode as call 2 plus: a split past the cache
# length stops before any key load and writes nothing, and the reduce reads
# only the splits below ceil(L / block) (sdpa_fused_reduce's KVLEN mode);
# against c9220a1's build (build/old/wgnn). Qwen3-0.6B-shaped decode, ms a
# token at context 512-544 with --max-context 640 and 4096, and at context
# 2048-2080 (the prompt four times) with 4096; f32 / f16 / q8; the kernel's
# threads (WGNN_DECODE_WG) and split target (WGNN_DECODE_WGS); two rounds.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
work=/tmp/wgnn-llm
mkdir -p $work
[ -f $work/qwen3/prompt_ids.npy ] || python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" > $OUT/torch_llm.jsonl 2>&1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
ids4="$ids,$ids,$ids,$ids"
gen() { # label bin ctx weights ids env...
  local label=$1 bin=$2 ctx=$3 w=$4 p=$5; shift 5
  echo "$label $w ctx$ctx: $(env "$@" $bin generate --model $work/qwen3 --prompt-ids "$p" --max-new-tokens 32 \
    --ignore-eos --weights $w --max-context $ctx --iters 3 --ids-out $OUT/ids_${w}_${label%% *}.npy 2>&1 | grep -o 'decode [0-9.]* tokens/s ([0-9.]* ms/token')"
}
for round in 1 2; do
  for w in f32 f16 q8; do
    gen "old r$round" build/old/wgnn 640 $w "$ids"
    gen "new r$round" ./build/wgnn 640 $w "$ids"
    gen "old4096 r$round" build/old/wgnn 4096 $w "$ids"
    gen "new4096 r$round" ./build/wgnn 4096 $w "$ids"
  done
  for v in wg512 wg1024 wgs512; do
    case $v in wg*) e=(WGNN_DECODE_WG=${v#wg}) ;; esac; [ $v = wgs512 ] && e=(WGNN_DECODE_WGS=512)
    gen "$v r$round" ./build/wgnn 640 f32 "$ids" "${e[@]}"
    gen "${v}_4096 r$round" ./build/wgnn 4096 f32 "$ids" "${e[@]}"
  done
  gen "old2k r$round" build/old/wgnn 4096 f32 "$ids4"
  gen "new2k r$round" ./build/wgnn 4096 f32 "$ids4"
  gen "wg512_2k r$round" ./build/wgnn 4096 f32 "$ids4" WGNN_DECODE_WG=512
done
python3 - $OUT <<'PY'
import sys, glob, numpy as np
for f in sorted(glob.glob(sys.argv[1] + '/ids_*.npy')):
    w = f.split('ids_')[1].split('_')[0]
    ref = sys.argv[1] + '/ids_%s_%s.npy' % (w, 'old2k' if '2k' in f else 'old')
    print(f.split('/')[-1], 'equal to the old build\'s' if np.array_equal(np.load(f), np.load(ref)) else 'DIFFERS from the old build\'s')
PY
rm -f $OUT/ids_*.npy
