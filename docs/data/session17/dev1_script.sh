#!/usr/bin/env bash
# Session 17, call 1: K slices of the small-M GEMM tile as groups inside its
# workgroups (gemm.wgsl's KW, WGNN_GEMM_KW; default at most 4) against the
# slices as batch entries with a reduce pass (WGNN_GEMM_KW=1, the plan
# before): ViT-B/16's four block products at batch 1 (bench op medians),
# then ViT-B/16 and SigLIP-B/16 at batch 1 whole (GPU span, synchronous
# call with blocking and polling waits, pipelined), two rounds, outputs
# checked against PyTorch's. Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
w=/tmp/wgnn-models
python3 bench/torch_models.py $w --batches 1 --iters 10 2>&1 | grep -v "Writing model" | tail -3
for kw in 1 2 3 4; do echo "== WGNN_GEMM_KW=$kw"; vit_products 197 WGNN_GEMM_KW=$kw; done
echo "== default, --check"
op_env fc1chk -- addmm --in-shape f32:3072 --in-shape f32:197,768 --in-shape f32:768,3072 --arg activation=gelu --check
op_env outchk -- addmm --in-shape f32:768 --in-shape f32:197,768 --in-shape f32:768,768 --in-shape f32:197,768 \
  --in-shape f32:768 --in-shape f32:768 --arg residual=true --arg layer_norm=true --check
for round in 1 2; do
  for c in kw1 default kw1_poll poll kw2; do
    e=(); p=()
    case $c in kw1) e=(WGNN_GEMM_KW=1) ;; kw2) e=(WGNN_GEMM_KW=2) ;; kw1_poll) e=(WGNN_GEMM_KW=1); p=(--poll-us 2000) ;;
      poll) p=(--poll-us 2000) ;; esac
    for m in vit_b16 siglip_b16; do
      echo "round $round $c $m b1: $(env "${e[@]}" ./build/wgnn run --model $w/$m --input $w/${m}_x1.npy --iters 50 --profile "${p[@]}" \
        --ref $w/${m}_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 | \
        grep -E '^input|^graph|^GPU span|^pipelined|vs /' | sed 's/(its one compute pass.*timestamps)://; s/(upload, submit.*flight);//; s/outputs equal.*single run.s;//; s/first run (graph build + run) [0-9.]* ms;//; s/per run (upload, one submit, wait)//; s/last_hidden_state vs .*: max/max/; s/, 0 of .*-> ok/ ok/; s/activations.*//' | tr '\n' ' ')"
    done
  done
done
