#!/usr/bin/env bash
# session 11 call 3: this session's GEMM changes (the 32 x 64 small-M tile,
# its K slices aiming at 768 of its own workgroups) against aa8b8c7 (the
# start of the session; build/old2/wgnn built from it), encoders at batch
# 1, 8, 32, f32, with PyTorch in the same call (device-resident and host to
# host).
. bench/h200_env.sh
. bench/models_summary.sh
./build/test_ops mm addmm linear 2>&1 | tail -1
./build/test_models 2>&1 | tail -1
OUT=$OUT/m OLD=build/old2/wgnn WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,8,32 > $OUT/models.txt 2>&1
models_summary $OUT/m | tee $OUT/summary.txt
cp $OUT/m/wgnn_vit_b16_b1_f32.txt $OUT/m/old_vit_b16_b1_f32.txt $OUT/ 2>/dev/null
rm -rf $OUT/m
