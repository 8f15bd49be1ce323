// gemvn.wgsl - the GEMM for a few rows against an untransposed B
// (src/ops/gemm.c): y = act(alpha * x B + beta * bias) (+ res) with M <= 4
// rows of x and B [K, N] row-major (mm, matmul, addmm of a vector or a few
// rows by a matrix), bound by reading B once. Same Params and bindings as
// gemm.wgsl (TRANS_A and TRANS_B false); n, ldb, B's offset and batch
// stride are multiples of 4 (gemm.h, wgnn__gemm_gemvn_ok).
//
// A workgroup of WG threads computes CQ quads of output columns: thread tid
// takes quad tid % CQ and k-lane tid / CQ, so consecutive threads read
// consecutive 16 bytes of a row of B. The KL = WG / CQ k-lanes split K,
// four rows a step (four loads in flight), each keeping MR partial sums of
// its quad; a tree through workgroup memory adds the k-lanes' sums.
// A and B are read through the prelude's loaders, as in gemm.wgsl: B a
// quad at a time (f32 or f16 halves), A four k's at a time (one 16-byte
// load where its rows and offsets are multiples of 4).
//
// Prelude (src/ops/gemm.c): struct Params, consts WG, CQ, MR, HAS_BIAS,
// HAS_RES, ACT, bindings 1 (A) and 2 (B) with fn a_at(i) -> f32,
// a4(i) -> vec4<f32> and b4(i) -> vec4<f32> (elements i .. i + 3).
// Dispatch: (ceil(n / (4 CQ)) folded into x*y, 1, batches); see common/grid.

#include "common/act"
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
// bindings 1 (A) and 2 (B): the prelude's
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<storage, read> BIAS: array<f32>;
@group(0) @binding(5) var<storage, read> RES: array<f32>; // HAS_RES: added after the activation

const KL: u32 = WG / CQ;

var<workgroup> RED: array<vec4<f32>, WG * MR>;

fn act(x: vec4<f32>) -> vec4<f32> { return act_by(ACT, x); }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let cq = tid % CQ;
    let kl = tid / CQ;
    let jq = wg_flat(vec3(wid.x, wid.y, 0u), nwg) * CQ + cq;
    let j = jq * 4u;
    let a_base = P.a_off + wid.z * P.a_bs;
    var acc: array<vec4<f32>, MR>;
    for (var r = 0u; r < MR; r++) { acc[r] = vec4<f32>(0.0); }
    if (j < P.n) {
        let ldb = P.ldb;
        let b_base = P.b_off + wid.z * P.b_bs + j;
        let k4 = P.k & ~3u;
        for (var k = kl * 4u; k < k4; k += KL * 4u) {
            let b = b_base + k * ldb;
            let w0 = b4(b);
            let w1 = b4(b + ldb);
            let w2 = b4(b + 2u * ldb);
            let w3 = b4(b + 3u * ldb);
            for (var r = 0u; r < MR; r++) {
                if (r < P.m) {
                    let x = a4(a_base + r * P.lda + k);
                    acc[r] += x.x * w0 + x.y * w1 + x.z * w2 + x.w * w3;
                }
            }
        }
        for (var k = k4 + kl; k < P.k; k += KL) {
            let w = b4(b_base + k * ldb);
            for (var r = 0u; r < MR; r++) {
                if (r < P.m) { acc[r] += a_at(a_base + r * P.lda + k) * w; }
            }
        }
    }
    for (var r = 0u; r < MR; r++) { RED[r * WG + tid] = acc[r]; }
    workgroupBarrier();
    for (var s = KL / 2u; s > 0u; s >>= 1u) {
        if (kl < s) {
            for (var r = 0u; r < MR; r++) { RED[r * WG + tid] += RED[r * WG + tid + s * CQ]; }
        }
        workgroupBarrier();
    }
    if (kl == 0u && j < P.n) {
        let c_base = P.c_off + wid.z * P.c_bs;
        let bias_base = P.bias_off + wid.z * P.bias_bs;
        for (var r = 0u; r < MR; r++) {
            if (r < P.m) {
                var v = P.alpha * RED[r * WG + tid];
                if (HAS_BIAS) {
                    let bb = bias_base + r * P.bias_rs + j * P.bias_cs;
                    let cs = P.bias_cs;
                    v += P.beta * vec4<f32>(BIAS[bb], BIAS[bb + cs], BIAS[bb + 2u * cs], BIAS[bb + 3u * cs]);
                }
                v = act(v);
                if (HAS_RES) {
                    let rb = P.res_off + wid.z * P.res_bs + r * P.ldr + j;
                    v += vec4<f32>(RES[rb], RES[rb + 1u], RES[rb + 2u], RES[rb + 3u]);
                }
                let cb = c_base + r * P.ldc + j;
                C[cb] = v.x;
                C[cb + 1u] = v.y;
                C[cb + 2u] = v.z;
                C[cb + 3u] = v.w;
            }
        }
    }
}
