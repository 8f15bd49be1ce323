// gemm_reduce.wgsl - the second step of a split-K GEMM (src/ops/gemm.c):
// the S partial products of K slices, P[s][i][j] (alpha applied), summed in
// slice order, then the bias and activation epilogue of gemm.wgsl:
//   C(i, j) = act(sum_s P[s*m*n + i*n + j] + beta * bias(i, j)) + res(i, j)
// A wave-balanced product (gemm.wgsl's SK) has one slice (s = 1) and, for
// the output tiles (t_bm x t_bn, t_tx a row) from t_dp on, t_n more after
// it: P[m*n + (e*(m - t_m0) + i - t_m0)*n + j], e < t_n, added in order.
// C(i, j) = C[c_off + i*ldc + j], bias(i, j) = BIAS[bias_off + i*bias_rs + j*bias_cs],
// res(i, j) = RES[res_off + i*ldr + j]; the sum is common/split_sum's
// (shared with gemm_reduce_ln.wgsl, which also writes each row's LayerNorm).
// One thread per V output elements of a row (V = 4 where n, ldc and the
// offsets are multiples of 4: one act() per quad, quads loaded and stored
// whole; else 1). Prelude: struct Params, consts WG, V, HAS_BIAS, HAS_RES,
// ACT, alias ET (f32 or vec4<f32>), fn act_e(ET) -> ET and fn bias_e(b,
// stride) -> ET (V bias values from BIAS[b], stride apart).
// Dispatch: ceil(m*n / (V*WG)) workgroups folded into x*y.

#include "common/act"
#include "common/grid"
#include "common/split_sum"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> PART: array<ET>;
@group(0) @binding(2) var<storage, read_write> C: array<ET>;
@group(0) @binding(3) var<storage, read> BIAS: array<f32>;
@group(0) @binding(4) var<storage, read> RES: array<ET>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let q = wg_flat(wid, nwg) * WG + tid;
    if (q >= P.m * P.n / V) { return; }
    let i = q * V / P.n;
    let j = q * V % P.n;
    C[(P.c_off + i * P.ldc + j) / V] = split_sum(q, i, j);
}
