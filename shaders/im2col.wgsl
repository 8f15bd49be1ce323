// im2col: the columns of a 2-D convolution, for a GEMM (src/ops/conv.h):
//   Y[s][(ci*kh + ky)*kw + kx][oy*Wo + ox] = X[s][ci][oy*sh - ph + ky*dh][ox*sw - pw + kx*dw]
// (0 outside the input), i.e. per sample a row-major [C*kh*kw, Ho*Wo]
// matrix. One thread per element of Y; consecutive threads write
// consecutive pixels.
// Prelude (src/ops/conv.c): struct Params, const WG.
// Bindings: 0 Params, 1 X (window from the first sample), 2 Y (window).
// Dispatch: ceil(n_items / WG) workgroups, folded into x*y past 65535.

#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = wg_flat(wid, nwg) * WG + lid;
    if (i >= P.n_items) { return; }
    let C = P.in_dims.x; let H = P.in_dims.y; let W = P.in_dims.z; let Wo = P.in_dims.w;
    let pix = i % P.npix;
    let row = i / P.npix;
    let k = row % P.k;
    let s = row / P.k;
    let kw = P.win2.w;
    let khw = P.win2.z * kw;
    let ci = k / khw;
    let r = k % khw;
    let iy = i32(pix / Wo) * P.win.x - P.win.z + i32((r / kw) * P.win2.x);
    let ix = i32(pix % Wo) * P.win.y - P.win.w + i32((r % kw) * P.win2.y);
    var v = 0.0;
    if (iy >= 0 && iy < i32(H) && ix >= 0 && ix < i32(W)) {
        v = X[P.x_off + (s * C + ci) * H * W + u32(iy) * W + u32(ix)];
    }
    Y[P.y_off + i] = v;
}
