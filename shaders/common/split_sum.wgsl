// common/split_sum.wgsl - one output value (V of a row: f32, or a quad) of
// a split-K GEMM's second step (`#include "common/split_sum"`; gemm_reduce,
// gemm_reduce_ln): the S partial products of K slices summed in slice
// order, a wave-balanced product's tail slices after them, then the bias,
// the activation and the residual (see gemm_reduce.wgsl). q is the value's
// index in units of V (q * V = i * n + j). Needs P (the reduce's Params),
// PART, BIAS, RES, consts V, HAS_BIAS, HAS_RES, ACT, alias ET and fns act_e,
// bias_e (the host's prelude).

fn split_sum(q: u32, i: u32, j: u32) -> ET {
    let mnv = P.m * P.n / V;
    var v = ET(0.0);
    for (var s = 0u; s < P.s; s++) { v += PART[s * mnv + q]; }
    if (P.t_n > 0u && i >= P.t_m0) { // a wave-balanced product's tail tiles: their K slices after the first
        if ((i / P.t_bm) * P.t_tx + j / P.t_bn >= P.t_dp) {
            let rows = P.m - P.t_m0;
            for (var e = 0u; e < P.t_n; e++) { v += PART[P.s * mnv + ((e * rows + i - P.t_m0) * P.n + j) / V]; }
        }
    }
    if (HAS_BIAS) { v += P.beta * bias_e(P.bias_off + i * P.bias_rs + j * P.bias_cs, P.bias_cs); }
    v = act_e(v);
    if (HAS_RES) { v += RES[(P.res_off + i * P.ldr + j) / V]; }
    return v;
}
