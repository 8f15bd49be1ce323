// conv2d_dw.wgsl - conv2d with one input channel a group (depthwise, with
// or without a channel multiplier; src/ops/conv.c): Y [N, O, Ho, Wo] from
// X [N, C, H, W] and Wt [O, 1, KH, KW] (+ Bias [O]); output channel o reads
// input channel o / M, M = O / C.
// A workgroup computes a TH x TW tile (TH = TYT * RY rows, TW columns) of
// one output plane. It stages the RR x RC input region the tile reads (0 in
// the padding) and the plane's KH x KW weights in workgroup memory, each
// element loaded once; then each thread (TW across, TYT down) sums RY
// outputs one above the other from there. The kernel's size, stride and
// dilation are constants of the pipeline (its loops unroll); the padding
// and the sizes are uniforms.
// Prelude (src/ops/conv.c, conv2d_dw): struct Params, consts TW, TYT, RY,
// KH, KW, SH, SW, DH, DW, RR, RC, HAS_BIAS.
// Bindings: 0 Params, 1 X (window from sample n0), 2 Wt, 3 Bias (a dummy
// when absent), 4 Y (window from sample n0).
// Dispatch: n_wg = tiles.x * tiles.y * O * samples workgroups, folded into
// x*y past 65535; flat id = (plane * tiles.y + tile row) * tiles.x + tile
// column, plane = s * O + o.

#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> Wt: array<f32>;
@group(0) @binding(3) var<storage, read> Bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

const WG: u32 = TW * TYT;
const TH: u32 = TYT * RY;

var<workgroup> xs: array<f32, RR * RC>; // the input region, row-major
var<workgroup> ws: array<f32, KH * KW>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let flat = wg_flat(wid, nwg);
    if (flat >= P.n_wg) { return; } // the whole workgroup: no barrier skipped by part of it
    let tcol = flat % P.tiles.x;
    let rest = flat / P.tiles.x;
    let trow = rest % P.tiles.y;
    let plane = rest / P.tiles.y;

    let C = P.in_dims.x; let H = P.in_dims.y; let W = P.in_dims.z; let M = P.in_dims.w;
    let O = P.out_dims.x; let Ho = P.out_dims.y; let Wo = P.out_dims.z;
    let o = plane % O;
    let s = plane / O;
    let xbase = P.x_off + (s * C + o / M) * H * W;
    let oy0 = trow * TH;
    let ox0 = tcol * TW;
    let iy0 = i32(oy0 * SH) - P.pad.x;
    let ix0 = i32(ox0 * SW) - P.pad.y;
    for (var i = lid; i < RR * RC; i += WG) {
        let iy = iy0 + i32(i / RC);
        let ix = ix0 + i32(i % RC);
        var v = 0.0;
        if (iy >= 0 && iy < i32(H) && ix >= 0 && ix < i32(W)) { v = X[xbase + u32(iy) * W + u32(ix)]; }
        xs[i] = v;
    }
    for (var i = lid; i < KH * KW; i += WG) { ws[i] = Wt[o * (KH * KW) + i]; }
    workgroupBarrier();

    let tx = lid % TW;
    let ty = lid / TW;
    var acc: array<f32, RY>;
    for (var r = 0u; r < RY; r++) { acc[r] = 0.0; }
    for (var ky = 0u; ky < KH; ky++) {
        for (var kx = 0u; kx < KW; kx++) {
            let wv = ws[ky * KW + kx];
            let at = (ty * RY * SH + ky * DH) * RC + tx * SW + kx * DW;
            for (var r = 0u; r < RY; r++) { acc[r] += xs[at + r * SH * RC] * wv; }
        }
    }
    let ox = ox0 + tx;
    if (ox >= Wo) { return; }
    var bv = 0.0;
    if (HAS_BIAS) { bv = Bias[o]; }
    let ybase = P.y_off + plane * Ho * Wo + ox;
    for (var r = 0u; r < RY; r++) {
        let oy = oy0 + ty * RY + r;
        if (oy < Ho) { Y[ybase + oy * Wo] = acc[r] + bv; }
    }
}
