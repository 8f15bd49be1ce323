#!/usr/bin/env bash
# Session 24 call 1. (a) gemm.wgsl's threads of a warp arranged LX x
# (32 / LX) instead of row-major (WGNN_GEMM_LX; default: WX, a 16-wide
# tile's warp 16 x 2): fewer distinct B quads a warp reads from workgroup
# memory per k step, more distinct A rows. The 128 x 128 tile at 4096^3,
# ViT-B/16's block products at M = 197 (the 32 x 64 small-M tile) and
# M = 6304 (batch 32), then the encoders at batch 1 and 32. (b) session
# 23's pending decode experiment (docs/data/session23/pending_script.sh,
# two rounds): the decode attention as one dispatch a layer.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== mm 4096^3"
for round in 1 2; do
  for lx in 0 8 4 2; do
    op_env "r$round" WGNN_GEMM_LX=$lx -- mm --in-shape f32:4096,4096 --in-shape f32:4096,4096
  done
done
op_env "chk" WGNN_GEMM_LX=4 -- mm --in-shape f32:1000,520 --in-shape f32:520,1300 --iters 2 --check
op_env "chk" WGNN_GEMM_LX=8 -- mm --in-shape f32:1000,520 --in-shape f32:520,1300 --iters 2 --check
echo "== ViT-B/16 block products, M = 197"
for round in 1 2; do for lx in 0 8 4; do echo "-- r$round LX=$lx"; vit_products 197 WGNN_GEMM_LX=$lx; done; done
echo "== ViT-B/16 block products, M = 6304"
for lx in 0 8 4; do echo "-- LX=$lx"; vit_products 6304 WGNN_GEMM_LX=$lx; done
echo "== encoders"
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1,32 --iters 10 2>&1 | grep -v "Writing model" | grep side
for round in 1 2; do
  for lx in 0 8 4; do ITERS=50 enc_run "r$round LX=$lx" vit_b16 1 WGNN_GEMM_LX=$lx; done
  for lx in 0 8 4; do ITERS=10 enc_run "r$round LX=$lx" vit_b16 32 WGNN_GEMM_LX=$lx; done
done
echo "== decode attention as one dispatch (session 23 pending), two rounds"
work=/tmp/wgnn-llm
python3 bench/torch_llm.py --prompt 512 --iters 1 --decode 32 --save "$work/qwen3" 2>&1 | grep -v "Writing model" | tail -1
ids=$(python3 -c "import numpy as np; print(','.join(str(int(i)) for i in np.load('$work/qwen3/prompt_ids.npy')))")
V=("base:" "one256:WGNN_DECODE_WGS=8" "one512:WGNN_DECODE_WGS=8 WGNN_DECODE_WG=512" "one1024:WGNN_DECODE_WGS=8 WGNN_DECODE_WG=1024"
   "two1024:WGNN_DECODE_WGS=16 WGNN_DECODE_WG=1024")
for round in 1 2; do
  for w in f32 f16 q8; do
    for k in 0 1 2 3 4; do
      v=${V[$(( (k + round - 1) % 5 ))]}
      l=${v%%:*}
      echo "r$round $w $l: $(env ${v#*:} ./build/wgnn generate --model "$work/qwen3" --prompt-ids "$ids" --max-new-tokens 32 \
        --ignore-eos --weights $w --max-context 640 --iters 5 --ids-out /tmp/ids_${w}_$l.npy 2>&1 | grep -E '^wgnn|rror' |
        grep -oE 'decode [0-9.]+ tokens/s \([0-9.]+ ms/token|rror.*')"
    done
  done
done
for w in f32 f16 q8; do for l in one256 one512 one1024 two1024; do
  cmp -s /tmp/ids_${w}_base.npy /tmp/ids_${w}_$l.npy && echo "$w $l: ids equal the default's" || echo "$w $l: ids DIFFER"
done; done
