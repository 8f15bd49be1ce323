#!/usr/bin/env bash
# Session 15, call 5: the split-KV reduce in one pass (four splits' loads
# issued together; shaders/sdpa_fused_reduce.wgsl) against 057d121's build
# (build/old/wgnn, the two-pass reduce), and the decode kernel's split
# target (WGNN_DECODE_WGS, default 256 workgroups): Qwen3-0.6B-shaped
# decode, ms a token at context 512-544, f32 / f16 / q8, two rounds; then
# ViT-B/16 batch 1 (its attention takes 4 splits) new against old.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
work=/tmp/wgnn-llm
mkdir -p $work
[ -f $work/qwen3/prompt_ids.npy ] || python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" > $OUT/torch_llm.jsonl 2>&1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
for round in 1 2; do
  for w in f32 f16 q8; do
    for v in old default wgs64 wgs128 wgs512; do
      e=(); bin=./build/wgnn
      case $v in old) bin=build/old/wgnn ;; wgs*) e=(WGNN_DECODE_WGS=${v#wgs}) ;; esac
      echo "round $round $w $v: $(env "${e[@]}" $bin generate --model $work/qwen3 --prompt-ids "$ids" --max-new-tokens 32 \
        --ignore-eos --weights $w --max-context 640 --iters 3 --ids-out $OUT/ids_${w}_$v.npy 2>&1 | grep -o 'decode [0-9.]* tokens/s ([0-9.]* ms/token')"
    done
  done
done
python3 - $OUT <<'PY'
import sys, glob, numpy as np
for f in sorted(glob.glob(sys.argv[1] + '/ids_*.npy')):
    w = f.split('ids_')[1].split('_')[0]
    old = np.load(sys.argv[1] + '/ids_%s_old.npy' % w)
    print(f.split('/')[-1], 'equal to the old build\'s' if np.array_equal(np.load(f), old) else 'DIFFERS from the old build\'s')
PY
w=/tmp/wgnn-models
[ -f $w/vit_b16_x1.npy ] || python3 bench/torch_models.py $w --batches 1 --iters 3 > $OUT/torch.txt 2>&1
for round in 1 2; do
  for bin in build/old/wgnn ./build/wgnn; do
    echo "round $round $bin vit_b16 b1: $($bin run --model $w/vit_b16 --input $w/vit_b16_x1.npy --iters 30 --profile \
      --ref $w/vit_b16_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | grep -E '^GPU span|vs /' | tr '\n' ' ' | cut -c1-300)"
  done
done
