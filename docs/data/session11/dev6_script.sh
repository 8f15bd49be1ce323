#!/usr/bin/env bash
# session 11 call 6: ViT's pooler as one linear with activation=tanh, the
# position embeddings added in the patch product's epilogue, SigLIP's first
# norm from the patch product (c0cf7c0, and the commit after it) against
# eab1804 (build/old2/wgnn, built from it): op tests on the H200, encoders at
# batch 1, 8, 32 (f32) and 1 (f16), PyTorch in the same call.
. bench/h200_env.sh
. bench/models_summary.sh
./build/test_ops linear addmm linear_q8 tanh 2>&1 | tail -1
./build/test_models 2>&1 | tail -1
OUT=$OUT/m OLD=build/old2/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
cp $OUT/m/wgnn_vit_b16_b1_f32.txt $OUT/m/wgnn_siglip_b16_b1_f32.txt $OUT/m/wgnn_vit_b16_b32_f32.txt $OUT/ 2>/dev/null
rm -rf $OUT/m
OUT=$OUT/m16 WEIGHTS=f16 ITERS=20 bash bench/h200_models.sh 1 > $OUT/models16.txt 2>&1
models_summary $OUT/m16 | tee $OUT/summary16.txt
rm -rf $OUT/m16
