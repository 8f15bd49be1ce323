#!/usr/bin/env bash
# Session 14, call 3 (issue 11, D = 128): tiles with one key a thread
# (KE = 1) or 64 query rows that fit Q in workgroup memory (SWZ, subgroup
# maxima, no sR) at 45 KB, against the default 128-row QG tile
# (16x16x2x2, Q read through L1). Each: (4,16,4096,4096,128) median,
# registers (build/kstat), and --check against the CPU reference at
# (1,2,300,333,128). Device tool: carry [".gl", "deps/dawn/lib", "build"].
cd "$(dirname "$0")/../../.."
. bench/h200_env.sh
. bench/op_median.sh
run() { # label tile flags
  local e=(); [ "$2" != - ] && e+=(WGNN_FUSED_TILE=$2); [ "$3" != - ] && e+=(WGNN_FUSED_FLAGS=$3)
  local d=$OUT/dump_$1; rm -rf $d
  env "${e[@]}" WGNN_DUMP_SHADERS=$d ./build/wgnn bench sdpa --shape 1,2,64,64,128 --impl fused --iters 1 --warmup 0 >/dev/null 2>&1
  local ks=$(build/kstat $d 2>/dev/null | grep -m1 sdpa_fused)
  local regs="$(echo "$ks" | grep -o 'Register Count=[0-9]*') $(echo "$ks" | grep -o ' TY=[0-9]* TX=[0-9]*\| KE=[0-9]*\| RG=[0-9]*\| LEAN=[a-z0-9]*\| QG=[a-z0-9]*\| SWZ=[a-z0-9]*' | tr -d '\n')"
  local chk=$(env "${e[@]}" ./build/wgnn bench sdpa --shape 1,2,300,333,128 --impl fused --iters 1 --warmup 0 --check 2>&1 | tail -1 | grep -o 'max_abs_err=[^ ]* check=[A-Z]*\|error.*' | cut -c1-80)
  echo "$1 [$2 $3] $regs check: $chk"
  sdpa_env "  $1" "${e[@]}" -- 4,16,4096,4096,128
}
run default - -
run qg128_k2 16x16x2x2 lqgu8
run qg128_k1 16x16x1x2 lqgu8
run qg64_k1 8x16x1x2 lqgu8
run sq64_k1 8x16x1x2 lwgu8
run sq64_k1_u4 8x16x1x2 lwgu4
run sq64_4r 16x16x1x1 lwgu8
run sq64_4r8k 16x8x1x1 lwgu8
run sq32_k2 8x16x2x1 lwgu8
run sq64_k2_64t 8x8x2x2 lwgu8
rm -rf $OUT/dump_*
