// rope: Hugging Face rotate-half rotary embedding over rows of D = 2h values,
//   out = x * cos + rotate_half(x) * sin,  rotate_half(x) = cat(-x[..., h:], x[..., :h])
// A thread takes one V (f32, or vec4<f32> when h % 4 == 0) at p of a row's
// first half and the matching V of its second half:
//   out[p]     = x[p]     * cos[p]     - x[p + h] * sin[p]
//   out[p + h] = x[p + h] * cos[p + h] + x[p]     * sin[p + h]
// cos and sin broadcast over x's leading dims: the host collapses x's
// leading dims (all but D) into at most 8, innermost first, each with
// cos's row stride (0: broadcast); a row's cos row is sum(idx_k * stride_k).
// Prelude (src/ops/rope.c): struct Params, alias V, const WG.
// Bindings: 0 Params, 1 x, 2 cos, 3 sin, 4 out (read_write).
// Dispatch: ceil(n_items / WG) workgroups (n_items = rows * h in V units),
// folded into x*y past 65535.

#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<V>;
@group(0) @binding(2) var<storage, read> C: array<V>;
@group(0) @binding(3) var<storage, read> S: array<V>;
@group(0) @binding(4) var<storage, read_write> O: array<V>;

fn dim_at(k: u32) -> u32 {
    if (k < 4u) { return P.dims_lo[k]; }
    return P.dims_hi[k - 4u];
}

fn stride_at(k: u32) -> u32 {
    if (k < 4u) { return P.cstr_lo[k]; }
    return P.cstr_hi[k - 4u];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = wg_flat(wid, nwg) * WG + lid;
    if (t >= P.n_items) { return; }
    let row = t / P.hv;
    let p = t % P.hv;
    var r = row;
    var crow = 0u;
    for (var k = 0u; k < P.nd; k++) {
        let e = dim_at(k);
        crow += (r % e) * stride_at(k);
        r = r / e;
    }
    let xo = row * 2u * P.hv + p;
    let co = crow * 2u * P.hv + p;
    let x1 = X[xo];
    let x2 = X[xo + P.hv];
    O[xo] = x1 * C[co] - x2 * S[co];
    O[xo + P.hv] = x2 * C[co + P.hv] + x1 * S[co + P.hv];
}
