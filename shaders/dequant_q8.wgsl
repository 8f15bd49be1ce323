// dequant_q8: W int8 [n, k] (four to a u32 word, k ascending from the low
// byte) times its row's scale, into float32 [n, k] (a plan's scratch):
// linear_q8 on many rows dequantizes once, then runs the GEMM
// (src/ops/quant.c). One thread a word (four k's).
// Prelude: struct Params, const WG. Dispatch: ceil(n * k4 / WG) folded into x*y.
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> W: array<u32>;                // [n, k4]
@group(0) @binding(2) var<storage, read> SCALE: array<f32>;            // [n]
@group(0) @binding(3) var<storage, read_write> OUT: array<vec4<f32>>;  // [n, k4] vec4

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = wg_flat(wid, nwg) * WG + lid;
    if (i >= P.n * P.k4) { return; }
    let s = bitcast<i32>(W[i]);
    let q = vec4<f32>(f32((s << 24u) >> 24u), f32((s << 16u) >> 24u), f32((s << 8u) >> 24u), f32(s >> 24u));
    OUT[i] = q * SCALE[i / P.k4];
}
