#!/usr/bin/env bash
# Session 16, call 8: linear_q8 at four columns a thread for lm_head-sized
# products (a few rows), against bf2df84's build (build/old/wgnn): Qwen3-0.6B
# q8 decode, ms a token at context 512-544, three rounds; the profiled step's
# lm_head. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
work=/tmp/wgnn-llm
mkdir -p $work
[ -f $work/qwen3/prompt_ids.npy ] || python3 bench/torch_llm.py --prompt 512 --iters 3 --decode 32 --save "$work/qwen3" > $OUT/torch_llm.jsonl 2>&1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
for r in 1 2 3; do
  for bin in build/old/wgnn ./build/wgnn; do
    echo "r$r $bin q8: $($bin generate --model $work/qwen3 --prompt-ids "$ids" --max-new-tokens 32 --ignore-eos --weights q8 \
      --max-context 640 --iters 3 --profile --ids-out $OUT/ids_${r}_$(basename $(dirname $bin)).npy 2>&1 | grep -E -o 'decode [0-9.]* tokens/s \([0-9.]* ms/token|^  lm_head.*' | tr '\n' ' ')"
  done
done
python3 -c "
import numpy as np, glob
f = sorted(glob.glob('$OUT/ids_*.npy')); a = [np.load(x) for x in f]
print('ids:', [x.split('/')[-1] for x in f], 'all equal' if all(np.array_equal(a[0], b) for b in a) else 'DIFFER')"
rm -f $OUT/ids_*.npy
