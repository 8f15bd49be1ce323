// gemv.wgsl - the GEMM for a few rows against a transposed B (src/ops/gemm.c):
// linear's y = act(alpha * x W^T + beta * bias) with M <= 4 rows of x, the
// decode-time product, bound by reading W once. Same Params and bindings as
// gemm.wgsl (TRANS_B only; TRANS_A is false).
//
// A workgroup of WG threads computes NJ = WG / LANES output columns: LANES
// consecutive threads walk one row of W (K contiguous) with consecutive
// addresses, so every warp reads whole lines; each keeps MR partial sums
// (one per row of A), reduced through workgroup memory at the end.
// B_F16: W holds halves, two per u32, and a lane reads a word (two k's).
//
// Prelude (src/ops/gemm.c): struct Params, consts WG, LANES, MR, B_F16,
// alias BT, HAS_BIAS, HAS_RES, ACT.
// Dispatch: (ceil(n / NJ) folded into x*y, 1, batches); see common/grid.

#include "common/act"
#include "common/grid"
#include "common/lanes_sum"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<BT>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<storage, read> BIAS: array<f32>;
@group(0) @binding(5) var<storage, read> RES: array<f32>; // HAS_RES: added after the activation

const NJ: u32 = WG / LANES;
const RMS: bool = false; // no prologue here (linear's rms_norm runs as a pass before this kernel)

fn act(x: vec4<f32>) -> vec4<f32> { return act_by(ACT, x); }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let lane = tid % LANES;
    let jl = tid / LANES;
    let j = wg_flat(vec3(wid.x, wid.y, 0u), nwg) * NJ + jl;
    let a_base = P.a_off + wid.z * P.a_bs;
    let b_base = P.b_off + wid.z * P.b_bs;
    var acc: array<f32, MR>;
    for (var r = 0u; r < MR; r++) { acc[r] = 0.0; }
    if (j < P.n) {
        let row = b_base + j * P.ldb;
        if (B_F16) {
            // words holding two k's each; an odd start is handled by the
            // scalar head below
            var k = lane * 2u;
            let head = row & 1u; // row starts mid-word: k = 0 is the high half
            if (head == 1u) {
                if (lane == 0u) {
                    let w = unpack2x16float(u32(B[row >> 1u])).y;
                    for (var r = 0u; r < MR; r++) { if (r < P.m) { acc[r] += A[a_base + r * P.lda] * w; } }
                }
                k = 1u + lane * 2u;
            }
            // four words (eight k's) a lane per step where they are whole,
            // then single words
            let k0 = k - lane * 2u; // 0, or 1 after the head
            let done = k0 + ((P.k - k0) / 8u) * 8u; // whole eights end here
            for (k = k0 + lane * 8u; k < done; k += LANES * 8u) {
                let wb = (row + k) >> 1u;
                let w0 = unpack2x16float(u32(B[wb]));
                let w1 = unpack2x16float(u32(B[wb + 1u]));
                let w2 = unpack2x16float(u32(B[wb + 2u]));
                let w3 = unpack2x16float(u32(B[wb + 3u]));
                for (var r = 0u; r < MR; r++) {
                    if (r < P.m) {
                        let ai = a_base + r * P.lda + k;
                        acc[r] += dot(vec4<f32>(A[ai], A[ai + 1u], A[ai + 2u], A[ai + 3u]), vec4<f32>(w0, w1)) +
                                  dot(vec4<f32>(A[ai + 4u], A[ai + 5u], A[ai + 6u], A[ai + 7u]), vec4<f32>(w2, w3));
                    }
                }
            }
            // the rest in pairs
            k = done + lane * 2u;
            for (; k + 1u < P.k; k += LANES * 2u) {
                let w = unpack2x16float(u32(B[(row + k) >> 1u]));
                for (var r = 0u; r < MR; r++) {
                    if (r < P.m) {
                        let ai = a_base + r * P.lda + k;
                        acc[r] += A[ai] * w.x + A[ai + 1u] * w.y;
                    }
                }
            }
            if (k < P.k) { // a last single k
                let w = unpack2x16float(u32(B[(row + k) >> 1u])).x;
                for (var r = 0u; r < MR; r++) { if (r < P.m) { acc[r] += A[a_base + r * P.lda + k] * w; } }
            }
        } else {
            // four adjacent k's a lane per step (a warp reads 512 contiguous
            // bytes; four independent loads in flight), then the k's past
            // the last whole four
            let k4 = P.k & ~3u;
            for (var k = lane * 4u; k < k4; k += LANES * 4u) {
                let w = vec4<f32>(f32(B[row + k]), f32(B[row + k + 1u]), f32(B[row + k + 2u]), f32(B[row + k + 3u]));
                for (var r = 0u; r < MR; r++) {
                    if (r < P.m) {
                        let ai = a_base + r * P.lda + k;
                        acc[r] += dot(vec4<f32>(A[ai], A[ai + 1u], A[ai + 2u], A[ai + 3u]), w);
                    }
                }
            }
            for (var k = k4 + lane; k < P.k; k += LANES) {
                let w = f32(B[row + k]);
                for (var r = 0u; r < MR; r++) {
                    if (r < P.m) { acc[r] += A[a_base + r * P.lda + k] * w; }
                }
            }
        }
    }
    lanes_sum(&acc, &acc, tid, lane, true);
    if (lane == 0u && j < P.n) {
        let c_base = P.c_off + wid.z * P.c_bs;
        let bias_base = P.bias_off + wid.z * P.bias_bs;
        for (var r = 0u; r < MR; r++) {
            if (r < P.m) {
                var v = P.alpha * RED[r * WG + tid];
                if (HAS_BIAS) { v += P.beta * BIAS[bias_base + r * P.bias_rs + j * P.bias_cs]; }
                v = act(vec4(v)).x;
                if (HAS_RES) { v += RES[P.res_off + wid.z * P.res_bs + r * P.ldr + j]; }
                C[c_base + r * P.ldc + j] = v;
            }
        }
    }
}
