#!/usr/bin/env bash
# Session 29 call 1: the state of issues 9 and 11 (bench/h200_state.sh
# without the decoders, encoders at batch 1 and 32), then PyTorch's best
# case at batch 1: each encoder's forward in a CUDA graph (no launch cost)
# and ViT-B/16's four block products alone at M = 197 with the cuBLAS
# kernel each runs (bench/torch_graph_encoder.py), beside wgnn's same
# products (vit_products 197) and eager PyTorch's kernels
# (bench/torch_profile_encoder.py).
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
LLM=0 BATCHES=1,32 bash bench/h200_state.sh
w=/tmp/wgnn-models
ls $w
echo "== torch graphs"
for m in vit_b16 siglip_b16; do python3 bench/torch_graph_encoder.py $w/$m 1 2>&1 | grep -v Warning; done
python3 bench/torch_graph_encoder.py $w/vit_b16 32 --iters 20 2>&1 | grep -v Warning | head -1
python3 bench/torch_profile_encoder.py $w/vit_b16 1 --top 12 2>&1 | grep -v Warning
echo "== wgnn products at M = 197"
vit_products 197
[ -n "${OUT_KEEP:-}" ] && { mkdir -p $OUT_KEEP && cp -r /tmp/wgnn-bench/sdpa /tmp/wgnn-bench/models/*.txt /tmp/wgnn-bench/models/*.jsonl $OUT_KEEP/ 2>/dev/null; }
true
