// linear_q8: y = (x W^T) * scale + bias with W int8 [N, K] stored four to a
// u32 word (little-endian, k % 4 == 0 within a word), one float32 scale per
// output column j (row of W): weight-only int8 quantization
// (src/ops/quant.c, row "linear_q8"). Arithmetic in f32.
//
// A workgroup of WG threads computes NJ * NC outputs j for MR rows of x
// (row block wid.z): LANES consecutive threads walk W's rows j = jb + c * NJ
// (c < NC) four words (16 k's) a step, consecutive lanes on consecutive
// 16-byte pieces (whole lines per warp); the MR partial sums of each column
// are reduced through workgroup memory. W is read once per row block: for
// decoding (a few rows) this is the weight-bound product.
//
// The four words come as one 16-byte load (fn ldq) when K % 16 == 0 (W
// bound as array<vec4<u32>>, every row 16-byte aligned), else as four u32
// loads (array<u32>), with single words for the K % 16 tail. A byte b is
// made a float without an int conversion: b ^ 0x80 is b + 128 unsigned,
// bitcast<f32>(0x4B000000 | (b + 128)) is 2^23 + b + 128 exactly, and
// subtracting 2^23 + 128 leaves b exactly (fn dequant).
//
// NC columns a thread: the 16 k's of x (64 bytes, four vec4 loads a row of
// x) are loaded once and used against NC rows of W, so x's loads and the
// RMS sums of squares are paid once per NC * 16 bytes of W; the price is
// NC times the accumulators and words in flight (MR * NC + U * NC * 4
// registers) and NC times fewer threads a product, so the host takes NC > 1
// only when N leaves workgroups to spare. Columns past N read row N - 1 and
// drop the result.
//
// PRE (linear's prologue, on x as it is read; see gemv4.wgsl): 1 RMS, the
// row's sum of squares kept beside the dot product; 3 RMS_W, the same with
// x times the norm's weight (fn norm_w, binding 6) in the product; 2
// SWIGLU, x's rows hold 2k values and the product takes silu(x[:k]) * x[k:].
//
// Prelude (src/ops/quant.c): struct Params (x_rs: x's row stride in vec4s;
// bias_rs: 0 for a bias [n], n for one of the output's shape), consts WG,
// LANES, MR, NC, U (16-byte steps a lane in flight), HAS_BIAS, ACT (0 none,
// 1 relu, 2 gelu, 3 gelu tanh, 4 silu: after the bias), PRE, alias WQ (W's
// element: vec4<u32> or u32), fn ldq(word) -> vec4<u32> (four words from a
// word index, a multiple of 4 with vec4<u32>), fn ld1(word) -> u32, fn
// norm_w(u32) -> vec4<f32>.
// Dispatch: (ceil(n / (NJ * NC)) folded into x*y, row blocks); see common/grid.
#include "common/act"
#include "common/grid"
#include "common/lanes_sum"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>; // [m, x_rs]
@group(0) @binding(2) var<storage, read> W: array<WQ>;        // [n, k4] words
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

// the word's four signed bytes, low byte first, as exact floats
fn dequant(q: u32) -> vec4<f32> {
    let u = q ^ 0x80808080u;
    let e = (vec4<u32>(u, u >> 8u, u >> 16u, u >> 24u) & vec4<u32>(0xFFu)) | vec4<u32>(0x4B000000u);
    return bitcast<vec4<f32>>(e) - 8388736.0; // 2^23 + 128
}

// 16 k's from word w: each column's four words qw[c] against each row of x
fn step4(acc: ptr<function, array<f32, MR * NC>>, ss: ptr<function, array<f32, MR>>, r0: u32, w: u32,
         qw: array<vec4<u32>, NC>) {
    var q: array<array<vec4<f32>, 4>, NC>;
    for (var c = 0u; c < NC; c++) {
        q[c] = array<vec4<f32>, 4>(dequant(qw[c].x), dequant(qw[c].y), dequant(qw[c].z), dequant(qw[c].w));
    }
    for (var r = 0u; r < MR; r++) {
        if (r0 + r < P.m) {
            let xb = (r0 + r) * P.x_rs + w;
            var x = array<vec4<f32>, 4>(xin(xb), xin(xb + 1u), xin(xb + 2u), xin(xb + 3u));
            if (RMS) { (*ss)[r] += dot(x[0], x[0]) + dot(x[1], x[1]) + dot(x[2], x[2]) + dot(x[3], x[3]); }
            if (PRE == 3u) {
                for (var i = 0u; i < 4u; i++) { x[i] *= norm_w(w + i); }
            }
            for (var c = 0u; c < NC; c++) {
                (*acc)[c * MR + r] += dot(x[0], q[c][0]) + dot(x[1], q[c][1]) + dot(x[2], q[c][2]) + dot(x[3], q[c][3]);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let lane = tid % LANES;
    let jl = tid / LANES;
    let jb = wg_flat(vec3(wid.x, wid.y, 0u), nwg) * NJ * NC + jl;
    let r0 = wid.z * MR;
    var acc: array<f32, MR * NC>; // column c, row r at c * MR + r
    var ss: array<f32, MR>;
    for (var i = 0u; i < MR * NC; i++) { acc[i] = 0.0; }
    for (var r = 0u; r < MR; r++) { ss[r] = 0.0; }
    if (jb < P.n) {
        var row: array<u32, NC>;
        for (var c = 0u; c < NC; c++) { row[c] = min(jb + c * NJ, P.n - 1u) * P.k4; }
        // four words (16 k's) a lane per step, U steps' words read before
        // any is used (U * NC * 16 bytes a lane in flight): a warp reads 512
        // contiguous bytes of a row a step; then single steps, then single
        // words
        let whole = P.k4 & ~3u;
        var w = lane * 4u;
        for (; w + (U - 1u) * LANES * 4u < whole; w += U * LANES * 4u) {
            var qw: array<array<vec4<u32>, NC>, U>;
            for (var u = 0u; u < U; u++) {
                for (var c = 0u; c < NC; c++) { qw[u][c] = ldq(row[c] + w + u * LANES * 4u); }
            }
            for (var u = 0u; u < U; u++) { step4(&acc, &ss, r0, w + u * LANES * 4u, qw[u]); }
        }
        for (; w < whole; w += LANES * 4u) {
            var qw: array<vec4<u32>, NC>;
            for (var c = 0u; c < NC; c++) { qw[c] = ldq(row[c] + w); }
            step4(&acc, &ss, r0, w, qw);
        }
        for (var w = whole + lane; w < P.k4; w += LANES) {
            var wv: array<vec4<f32>, NC>;
            for (var c = 0u; c < NC; c++) { wv[c] = dequant(ld1(row[c] + w)); }
            for (var r = 0u; r < MR; r++) {
                if (r0 + r < P.m) {
                    let x = xin((r0 + r) * P.x_rs + w);
                    if (RMS) { ss[r] += dot(x, x); }
                    let xw = select(x, x * norm_w(w), PRE == 3u);
                    for (var c = 0u; c < NC; c++) { acc[c * MR + r] += dot(xw, wv[c]); }
                }
            }
        }
    }
    for (var c = 0u; c < NC; c++) {
        // lane 0 reads its own slots of RED before the next lanes_sum
        // writes them: no barrier between columns
        var a: array<f32, MR>;
        for (var r = 0u; r < MR; r++) { a[r] = acc[c * MR + r]; }
        lanes_sum(&a, &ss, tid, lane, c == 0u); // the sums of squares once
        let j = jb + c * NJ;
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
}
