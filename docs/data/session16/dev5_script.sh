#!/usr/bin/env bash
# Session 16, call 5 (a scratch build: the PF variant was measured, then
# reverted; the script needs that build): sdpa_decode reading the next pass's K/V rows before
# it computes this one's (WGNN_DECODE_PF=1) and a 512-workgroup split target
# (WGNN_DECODE_WGS=512: one pass a split up to context 2048 at 8 KV heads),
# against the defaults, in one binary: Qwen3-0.6B-shaped decode, ms a token
# at context 512-544 (--max-context 640 and 4096) and 2048-2080 (4096), f32
# and f16, two rounds. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
work=/tmp/wgnn-llm
mkdir -p $work
[ -f $work/qwen3/prompt_ids.npy ] || python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" > $OUT/torch_llm.jsonl 2>&1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
ids4="$ids,$ids,$ids,$ids"
gen() { # label ctx weights ids env...
  local label=$1 ctx=$2 w=$3 p=$4; shift 4
  echo "$label $w ctx$ctx: $(env "$@" ./build/wgnn generate --model $work/qwen3 --prompt-ids "$p" --max-new-tokens 32 \
    --ignore-eos --weights $w --max-context $ctx --iters 3 --ids-out $OUT/ids_${w}_${label%% *}.npy 2>&1 | grep -o 'decode [0-9.]* tokens/s ([0-9.]* ms/token')"
}
for round in 1 2; do
  for w in f32 f16; do
    for v in base pf wgs512 pfwgs512; do
      e=(); case $v in pf) e=(WGNN_DECODE_PF=1) ;; wgs512) e=(WGNN_DECODE_WGS=512) ;; pfwgs512) e=(WGNN_DECODE_PF=1 WGNN_DECODE_WGS=512) ;; esac
      gen "$v r$round" 640 $w "$ids" "${e[@]}"
      gen "${v}_4096 r$round" 4096 $w "$ids" "${e[@]}"
      gen "${v}_2k r$round" 4096 $w "$ids4" "${e[@]}"
    done
  done
done
python3 - $OUT <<'PY'
import sys, glob, numpy as np
for f in sorted(glob.glob(sys.argv[1] + '/ids_*.npy')):
    w = f.split('ids_')[1].split('_')[0]
    ref = sys.argv[1] + '/ids_%s_%s.npy' % (w, 'base_2k' if '2k' in f else 'base')
    print(f.split('/')[-1], 'equal to the default\'s' if np.array_equal(np.load(f), np.load(ref)) else 'DIFFERS from the default\'s')
PY
rm -f $OUT/ids_*.npy
