#!/usr/bin/env bash
# Session 30 call 2: the tail plan in two dispatches (this tree: gemm.wgsl's
# SK with sk_u0, the tail's K slices into scratch, then the whole tiles
# into C with their epilogue, then gemm_tail.wgsl) against HEAD~'s build
# (build/old/wgnn, 6d4a068: the whole tiles alone). Registers of the new
# pipelines (kstat); --check at a small shape that takes the plan
# (WGNN_COMPUTE_UNITS=270); fc1 (6304 x 3072 x 768, bias, GELU), the plain
# product of that shape and one of one wave's worth (512 x 1024 x 6144,
# 192 tiles), new and old alternating (fc1 twice); then ViT-B/16 and
# SigLIP-B/16 at batch 32, new and old, PyTorch eager in the same call
# (batch 1 has no product on the 128 x 128 tile). Cut to one round: the
# device time was nearly spent on machines that did not start.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
fc1="addmm --in-shape f32:3072 --in-shape f32:6304,768 --in-shape f32:768,3072 --arg activation=gelu"
mm="mm --in-shape f32:6304,768 --in-shape f32:768,3072"
mw="mm --in-shape f32:512,1024 --in-shape f32:1024,6144"
bash bench/kernel_stats/kstat.sh -- bench op $fc1 --iters 1 --warmup 0 2>&1 | tail -6
op_env "chk gelu" WGNN_COMPUTE_UNITS=270 -- addmm --in-shape f32:2944 --in-shape f32:2945,64 --in-shape f32:64,2944 --arg activation=gelu --check
op_env "chk relu" WGNN_COMPUTE_UNITS=280 -- addmm --in-shape f32:2945 --in-shape f32:2945,32 --in-shape f32:32,2945 --arg activation=relu --arg alpha=2 --arg beta=0.5 --check
op_env "fc1.1 new" -- $fc1; op_bin "fc1.1 old" build/old/wgnn -- $fc1
op_env "mm new" -- $mm; op_bin "mm old" build/old/wgnn -- $mm
op_env "mw new" -- $mw; op_bin "mw old" build/old/wgnn -- $mw
op_env "fc1.2 new" -- $fc1; op_bin "fc1.2 old" build/old/wgnn -- $fc1
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 32 --iters 10 2>&1 | grep side
ITERS=10 enc_run "new" vit_b16 32
ITERS=10 BIN=build/old/wgnn enc_run "old" vit_b16 32
ITERS=10 enc_run "new" siglip_b16 32
ITERS=10 BIN=build/old/wgnn enc_run "old" siglip_b16 32
true
