// upsample2d: resize of X [planes, H, W] to Y [planes, Ho, Wo], aten's
// source indices in float32 (scale_h/scale_w: the host's float scales):
//   MODE 0 nearest:  src = min(floor(dst * scale), in - 1)
//   MODE 1 bilinear: src = max((dst + 0.5) * scale - 0.5, 0)
//   MODE 2 bilinear, align_corners: src = dst * scale
// bilinear then reads i0 = min(floor(src), in - 1), i1 = i0 + (i0 < in - 1),
// weight l1 = clamp(src - i0, 0, 1) (in == out: a copy), and gives
// (1-ly) * ((1-lx) x00 + lx x01) + ly * ((1-lx) x10 + lx x11).
// One thread per output element.
// Prelude (src/ops/pool.c): struct Params, consts WG, MODE.
// Bindings: 0 Params, 1 X (window from the first plane), 2 Y (window).
// Dispatch: ceil(n_items / WG) workgroups, folded into x*y past 65535.

#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;

struct Src {
    i0: u32,
    i1: u32,
    l1: f32,
}

fn linear_src(dst: u32, n_in: u32, n_out: u32, scale: f32) -> Src {
    if (n_in == n_out) { return Src(dst, dst, 0.0); }
    var r: f32;
    if (MODE == 2u) {
        r = scale * f32(dst);
    } else {
        r = max(scale * (f32(dst) + 0.5) - 0.5, 0.0);
    }
    let i0 = min(u32(floor(r)), n_in - 1u);
    let l1 = clamp(r - f32(i0), 0.0, 1.0);
    return Src(i0, i0 + select(0u, 1u, i0 < n_in - 1u), l1);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = wg_flat(wid, nwg) * WG + lid;
    if (i >= P.n_items) { return; }
    let H = P.dims.x; let W = P.dims.y; let Ho = P.dims.z; let Wo = P.dims.w;
    let ox = i % Wo;
    let t = i / Wo;
    let oy = t % Ho;
    let base = P.x_off + (t / Ho) * H * W;
    if (MODE == 0u) {
        let iy = min(u32(floor(f32(oy) * P.scale_h)), H - 1u);
        let ix = min(u32(floor(f32(ox) * P.scale_w)), W - 1u);
        Y[P.y_off + i] = X[base + iy * W + ix];
        return;
    }
    let sy = linear_src(oy, H, Ho, P.scale_h);
    let sx = linear_src(ox, W, Wo, P.scale_w);
    let r0 = base + sy.i0 * W;
    let r1 = base + sy.i1 * W;
    let hx = 1.0 - sx.l1;
    let top = hx * X[r0 + sx.i0] + sx.l1 * X[r0 + sx.i1];
    let bot = hx * X[r1 + sx.i0] + sx.l1 * X[r1 + sx.i1];
    Y[P.y_off + i] = (1.0 - sy.l1) * top + sy.l1 * bot;
}
