OUT=$OUT/m WEIGHTS=f32 ITERS=20 bash bench/h200_models.sh 1,32
