// swiglu: out[r, j] = silu(x[r, j]) * x[r, n + j] for x [rows, 2n], out
// [rows, n]: a gated MLP's two projections, computed as one matrix, joined
// (src/ops/glu.c, row "swiglu"). Four outputs a thread (n % 4 == 0: vec4
// loads), else one.
// Prelude: struct Params, const WG, alias XT (f32, or vec4<f32> when n % 4 == 0)
// and fn silu_t(XT) -> XT. Dispatch: ceil(rows * n / (V4 ? 4 : 1) / WG) folded into x*y.
#include "common/act"
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<XT>;
@group(0) @binding(2) var<storage, read_write> Y: array<XT>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = wg_flat(wid, nwg) * WG + lid; // an output unit (one element, or four)
    if (i >= P.units) { return; }
    let r = i / P.n_units;
    let j = i - r * P.n_units;
    let g = X[r * 2u * P.n_units + j];
    let u = X[r * 2u * P.n_units + P.n_units + j];
    Y[i] = silu_t(g) * u;
}
