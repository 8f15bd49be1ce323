// linear_q8: y = (x W^T) * scale + bias with W int8 [N, K] stored four to a
// u32 word (little-endian, k % 4 == 0 within a word), one float32 scale per
// output column j (row of W): weight-only int8 quantization
// (src/ops/quant.c, row "linear_q8"). Arithmetic in f32.
//
// A workgroup of WG threads computes NJ = WG / LANES outputs j for MR rows
// of x (row block wid.z): LANES consecutive threads walk W's row j four
// words at a time (consecutive addresses: whole lines per warp), each word
// four signed bytes against one vec4 of x; the MR partial sums are reduced
// through workgroup memory. W is read once per row block: for decoding
// (a few rows) this is the weight-bound product.
//
// PRE (linear's prologue, on x as it is read; see gemv4.wgsl): 1 RMS, the
// row's sum of squares kept beside the dot product; 3 RMS_W, the same with
// x times the norm's weight (fn norm_w, binding 6) in the product; 2
// SWIGLU, x's rows hold 2k values and the product takes silu(x[:k]) * x[k:].
//
// Prelude (src/ops/quant.c): struct Params (x_rs: x's row stride in vec4s;
// bias_rs: 0 for a bias [n], n for one of the output's shape), consts WG,
// LANES, MR, U (16-byte steps a lane in flight), HAS_BIAS, ACT (0 none, 1
// relu, 2 gelu, 3 gelu tanh, 4 silu:
// after the bias), PRE, fn norm_w(u32) -> vec4<f32>.
// Dispatch: (ceil(n / NJ) folded into x*y, row blocks); see common/grid.
#include "common/act"
#include "common/grid"
#include "common/lanes_sum"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>; // [m, x_rs]
@group(0) @binding(2) var<storage, read> W: array<u32>;       // [n, k4]
@group(0) @binding(3) var<storage, read> SCALE: array<f32>;   // [n]
@group(0) @binding(4) var<storage, read_write> Y: array<f32>; // [m, n]
@group(0) @binding(5) var<storage, read> BIAS: array<f32>;    // [n] or [m, n] (a dummy without HAS_BIAS)

const NJ: u32 = WG / LANES;
const RMS: bool = PRE == 1u || PRE == 3u;

// x's piece i (vec4 index) after the prologue
fn xin(i: u32) -> vec4<f32> {
    if (PRE == 2u) { return act_silu(X[i]) * X[i + P.k4]; }
    return X[i];
}

fn act(x: f32) -> f32 { return act_by(ACT, vec4<f32>(x)).x; }

fn dequant(q: u32) -> vec4<f32> {
    let s = bitcast<i32>(q);
    return vec4<f32>(f32((s << 24u) >> 24u), f32((s << 16u) >> 24u), f32((s << 8u) >> 24u), f32(s >> 24u));
}

// four words (16 k's from word w) against each row of x
fn step4(acc: ptr<function, array<f32, MR>>, ss: ptr<function, array<f32, MR>>, r0: u32, w: u32, qw: vec4<u32>) {
    let q0 = dequant(qw.x);
    let q1 = dequant(qw.y);
    let q2 = dequant(qw.z);
    let q3 = dequant(qw.w);
    for (var r = 0u; r < MR; r++) {
        if (r0 + r < P.m) {
            let xb = (r0 + r) * P.x_rs + w;
            let x0 = xin(xb);
            let x1 = xin(xb + 1u);
            let x2 = xin(xb + 2u);
            let x3 = xin(xb + 3u);
            if (RMS) { (*ss)[r] += dot(x0, x0) + dot(x1, x1) + dot(x2, x2) + dot(x3, x3); }
            if (PRE == 3u) {
                (*acc)[r] += dot(x0 * norm_w(w), q0) + dot(x1 * norm_w(w + 1u), q1) + dot(x2 * norm_w(w + 2u), q2) +
                             dot(x3 * norm_w(w + 3u), q3);
            } else {
                (*acc)[r] += dot(x0, q0) + dot(x1, q1) + dot(x2, q2) + dot(x3, q3);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let lane = tid % LANES;
    let jl = tid / LANES;
    let j = wg_flat(vec3(wid.x, wid.y, 0u), nwg) * NJ + jl;
    let r0 = wid.z * MR;
    var acc: array<f32, MR>;
    var ss: array<f32, MR>;
    for (var r = 0u; r < MR; r++) {
        acc[r] = 0.0;
        ss[r] = 0.0;
    }
    if (j < P.n) {
        let row = j * P.k4;
        // four words (16 k's) a lane per step, U steps' words read before
        // any is used (U * 16 bytes a lane in flight): a warp reads 512
        // contiguous bytes a step; then single steps, then single words
        let whole = P.k4 & ~3u;
        var w = lane * 4u;
        for (; w + (U - 1u) * LANES * 4u < whole; w += U * LANES * 4u) {
            var qw: array<vec4<u32>, U>;
            for (var u = 0u; u < U; u++) {
                let b = row + w + u * LANES * 4u;
                qw[u] = vec4<u32>(W[b], W[b + 1u], W[b + 2u], W[b + 3u]);
            }
            for (var u = 0u; u < U; u++) {
                let wu = w + u * LANES * 4u;
                step4(&acc, &ss, r0, wu, qw[u]);
            }
        }
        for (; w < whole; w += LANES * 4u) {
            step4(&acc, &ss, r0, w, vec4<u32>(W[row + w], W[row + w + 1u], W[row + w + 2u], W[row + w + 3u]));
        }
        for (var w = whole + lane; w < P.k4; w += LANES) {
            let wv = dequant(W[row + w]);
            for (var r = 0u; r < MR; r++) {
                if (r0 + r < P.m) {
                    let x = xin((r0 + r) * P.x_rs + w);
                    acc[r] += dot(select(x, x * norm_w(w), PRE == 3u), wv);
                    if (RMS) { ss[r] += dot(x, x); }
                }
            }
        }
    }
    lanes_sum(&acc, &ss, tid, lane);
    if (lane == 0u && j < P.n) {
        for (var r = 0u; r < MR; r++) {
            if (r0 + r < P.m) {
                var v = RED[r * WG + tid] * SCALE[j];
                if (RMS) { v *= inverseSqrt(RED_SS[r * WG + tid] / f32(4u * P.k4) + P.eps); }
                if (HAS_BIAS) { v += BIAS[(r0 + r) * P.bias_rs + j]; }
                Y[(r0 + r) * P.n + j] = act(v);
            }
        }
    }
}
