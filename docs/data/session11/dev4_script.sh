#!/usr/bin/env bash
# session 11 call 4: the q|k|v projection's K slices summed by the attention
# (mm k_slices into sdpa_qkvpacked; WGNN_QKV_SLICES=0 keeps the product's
# own reduce) on the H200: the op tests, the encoders at batch 1 (both ways,
# same binary), 8 and 32 (no change expected: no slices there).
. bench/h200_env.sh
. bench/models_summary.sh
./build/test_ops mm sdpa_qkvpacked 2>&1 | tail -1
./build/test_models 2>&1 | tail -1
WGNN_GEMM_SPLIT=2 ./build/test_models 2>&1 | tail -1
mkdir -p build/old2 && printf '#!/usr/bin/env bash\nWGNN_QKV_SLICES=0 exec "$(dirname "$0")/../wgnn" "$@"\n' > build/old2/wgnn && chmod +x build/old2/wgnn
OUT=$OUT/m OLD=build/old2/wgnn WEIGHTS=f32 ITERS=40 bash bench/h200_models.sh 1 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
cp $OUT/m/wgnn_vit_b16_b1_f32.txt $OUT/m/old_vit_b16_b1_f32.txt $OUT/ 2>/dev/null
rm -rf $OUT/m
W=/tmp/wgnn-models
for i in 1 2; do
  for e in default WGNN_QKV_SLICES=0; do
    printf "vit b1 %-20s " $e
    E=(); [ $e != default ] && E=($e)
    env "${E[@]}" ./build/wgnn run --model $W/vit_b16 --input $W/vit_b16_x1.npy --iters 60 --ref $W/vit_b16_last1.npy --atol 2e-3 --rtol 2e-3 2>&1 \
      | sed -nE 's/^pipelined: .* ([0-9.]+) ms a run.*/pipelined \1/p; s/^resident: .* median ([0-9.]+) ms.*/resident \1/p; s/^last_hidden_state vs.*-> (.*)/\1/p' | tr "\n" " "; echo
  done
done
