// gemv4.wgsl - gemv.wgsl with 16-byte loads (src/ops/gemm.c picks it when K,
// the row strides and the offsets are multiples of 4): linear's
// y = act(alpha * x W^T + beta * bias) for M <= 4 rows of x, the decode-time
// product, bound by reading W once. Same Params and bindings as gemm.wgsl
// (TRANS_B only), indices in elements (divided by 4 here).
//
// A workgroup of WG threads computes NJ = WG / LANES output columns: LANES
// consecutive threads walk one row of W, each reading U pieces (LANES
// apart) before it adds any, so U loads a lane are in flight; MR partial
// sums a thread, reduced through workgroup memory at the end.
// B_F16: W holds halves, a piece is a vec2<u32> (four halves).
// PRE (linear's prologue, on x as it is read): 1 RMS: sum of squares of
// each row of x kept beside the dot product (a column's lanes walk the whole
// row), the result divided by sqrt(mean + eps); 3 RMS_W: the same with x
// times the norm's weight (fn norm_w(piece), binding 6) in the product;
// 2 SWIGLU: x's rows hold 2k values (lda), and the product takes
// silu(x[:k]) * x[k:].
//
// Prelude (src/ops/gemm.c): struct Params, consts WG, LANES, MR, U, alias BT4,
// fn ldw(BT4) -> vec4<f32>, HAS_BIAS, HAS_RES, ACT, PRE, fn norm_w(u32) -> vec4<f32> (binding 6).
// Dispatch: (ceil(n / NJ) folded into x*y, 1, batches); see common/grid.

#include "common/act"
#include "common/grid"
#include "common/lanes_sum"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> B: array<BT4>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<storage, read> BIAS: array<f32>;
@group(0) @binding(5) var<storage, read> RES: array<f32>; // HAS_RES: added after the activation

const NJ: u32 = WG / LANES;
const RMS: bool = PRE == 1u || PRE == 3u;

fn act(x: vec4<f32>) -> vec4<f32> { return act_by(ACT, x); }

// x's piece i (vec4 index) after the prologue
fn xin(i: u32) -> vec4<f32> {
    if (PRE == 2u) { return act_silu(A[i]) * A[i + P.k / 4u]; }
    return A[i];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let lane = tid % LANES;
    let jl = tid / LANES;
    let j = wg_flat(vec3(wid.x, wid.y, 0u), nwg) * NJ + jl;
    let a_base = (P.a_off + wid.z * P.a_bs) / 4u;
    let lda = P.lda / 4u;
    let k4 = P.k / 4u;
    var acc: array<f32, MR>;
    var ss: array<f32, MR>;
    for (var r = 0u; r < MR; r++) {
        acc[r] = 0.0;
        ss[r] = 0.0;
    }
    if (j < P.n) {
        let row = (P.b_off + wid.z * P.b_bs + j * P.ldb) / 4u;
        var k = lane;
        for (; k + (U - 1u) * LANES < k4; k += U * LANES) {
            var wv: array<vec4<f32>, U>;
            for (var u = 0u; u < U; u++) { wv[u] = ldw(B[row + k + u * LANES]); }
            for (var r = 0u; r < MR; r++) {
                if (r < P.m) {
                    let ab = a_base + r * lda + k;
                    for (var u = 0u; u < U; u++) {
                        let x = xin(ab + u * LANES);
                        if (RMS) { ss[r] += dot(x, x); }
                        acc[r] += dot(select(x, x * norm_w(k + u * LANES), PRE == 3u), wv[u]);
                    }
                }
            }
        }
        for (; k < k4; k += LANES) {
            let w = ldw(B[row + k]);
            for (var r = 0u; r < MR; r++) {
                if (r < P.m) {
                    let x = xin(a_base + r * lda + k);
                    acc[r] += dot(select(x, x * norm_w(k), PRE == 3u), w);
                    if (RMS) { ss[r] += dot(x, x); }
                }
            }
        }
    }
    lanes_sum(&acc, &ss, tid, lane, true);
    if (lane == 0u && j < P.n) {
        let c_base = P.c_off + wid.z * P.c_bs;
        let bias_base = P.bias_off + wid.z * P.bias_bs;
        for (var r = 0u; r < MR; r++) {
            if (r < P.m) {
                var v = P.alpha * RED[r * WG + tid];
                if (RMS) { v *= inverseSqrt(RED_SS[r * WG + tid] / f32(P.k) + P.eps); }
                if (HAS_BIAS) { v += P.beta * BIAS[bias_base + r * P.bias_rs + j * P.bias_cs]; }
                v = act(vec4(v)).x;
                if (HAS_RES) { v += RES[P.res_off + wid.z * P.res_bs + r * P.ldr + j]; }
                C[c_base + r * P.ldc + j] = v;
            }
        }
    }
}
