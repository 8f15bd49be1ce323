// max_pool2d: Y[pl][oy][ox] = max over the window of X[pl] (planes
// pl = n*C + c), window taps (oy*sh - ph + ky*dh, ox*sw - pw + kx*dw);
// taps in the padding are skipped (-inf), NaN propagates (aten's
// `v > max || isnan(v)`). One thread per output element.
// Prelude (src/ops/pool.c): struct Params, const WG.
// Bindings: 0 Params, 1 X (window from the first plane), 2 Y (window).
// Dispatch: ceil(n_items / WG) workgroups, folded into x*y past 65535.

#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;

// By its bits: compilers may fold v != v away.
fn is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = wg_flat(wid, nwg) * WG + lid;
    if (i >= P.n_items) { return; }
    let H = i32(P.dims.x); let W = i32(P.dims.y); let Ho = P.dims.z; let Wo = P.dims.w;
    let ox = i % Wo;
    let t = i / Wo;
    let oy = t % Ho;
    let base = P.x_off + (t / Ho) * P.dims.x * P.dims.y;
    let y0 = i32(oy) * P.win.x - P.win.z;
    let x0 = i32(ox) * P.win.y - P.win.w;
    var m = bitcast<f32>(P.neg_inf); // -inf: an empty window (never, with PyTorch's limits)
    for (var ky = 0u; ky < P.win2.z; ky = ky + 1u) {
        let iy = y0 + i32(ky * P.win2.x);
        if (iy < 0 || iy >= H) { continue; }
        for (var kx = 0u; kx < P.win2.w; kx = kx + 1u) {
            let ix = x0 + i32(kx * P.win2.y);
            if (ix < 0 || ix >= W) { continue; }
            let v = X[base + u32(iy * W + ix)];
            if (v > m || is_nan(v)) { m = v; }
        }
    }
    Y[P.y_off + i] = m;
}
