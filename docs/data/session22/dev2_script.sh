#!/usr/bin/env bash
# Session 22 call 2: (1) issue 11's long-sequence tiles again, now that the
# P.V loop's unroll is 4 x the score loop's (at most 16; session 12 calls
# 10-13): the candidates that were within ~5% of the defaults when they were
# measured with CU = 4 (session 12 calls 1, 5, 7), each with c16, at the
# three target shapes, checked against the CPU reference
# (bench/h200_sdpa_sweep.sh); (2) issue 9's batch 32 with its pipelined runs
# (call 1's per-run files did not come back), f32.
# Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
OUT=${OUT:-/tmp/wgnn-bench}
echo "== sweep"
CANDS="auto:: qg16x16x4x2:16x16x4x2:glqu4c16 qgswz16x16x4x2:16x16x4x2:glqwu4c16 swz16x16x4x1:16x16x4x1:glwu8c16 \
swz8x16x4x2c8:8x16x4x2:glwu4c8 qgswz16x16x2x2:16x16x2x2:glqwu8c16 qg16x16x4x1:16x16x4x1:glqu8c16 \
qg32x16x2x1:32x16x2x1:glqu8c16 qg16x16x2x2u4:16x16x2x2:glqu4c16" \
SHAPES="1,12,4096,4096,64 1,16,16384,16384,64 4,16,4096,4096,128" \
CHECKS="2,4,333,517,128:--mask 1,4,257,300,64:--f16 2,3,1000,1030,64:--mask" BUDGET=300 \
OUT=/tmp/sweep timeout 420 bash bench/h200_sdpa_sweep.sh > /tmp/sweep.log 2>&1
tail -5 /tmp/sweep.log
cat /tmp/sweep/tables.md
cp /tmp/sweep/tables.md "$OUT/sweep_tables.md"
tar czf "$OUT/sweep_raw.tgz" -C /tmp/sweep wgnn.jsonl checks.jsonl torch.jsonl log.txt kstat 2>/dev/null
echo "== models batch 32"
OUT=/tmp/models ITERS=30 WEIGHTS=f32 timeout 170 bash bench/h200_models.sh 32
for f in /tmp/models/wgnn_*_b32_f32.txt; do echo "-- $f"; grep -E "^input|^pipelined|^resident|^GPU span" "$f"; done
