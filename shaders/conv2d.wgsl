// conv2d: direct 2-D convolution of X [N, C, H, W] with Wt [O, C/G, kh, kw]
// (+ Bias [O]) into Y [N, O, Ho, Wo], every groups value G. Per sample and
// group it is the product Wt_g [Og, K] x cols [K, Ho*Wo], K = Cg*kh*kw,
// cols gathered from X on the fly (implicit GEMM; zero outside the input).
// A workgroup computes TO = TY*RO output channels x TP = TX*RP output
// pixels of one (sample, group): KC-deep slices of Wt_g and of cols go
// through workgroup memory, each thread accumulates RO x RP outputs
// (channels ty + r*TY, pixels tx + q*TX, so neighbouring threads write
// neighbouring pixels).
// Prelude (src/ops/conv.c): struct Params, consts TY, TX, RO, RP, KC,
// HAS_BIAS.
// Bindings: 0 Params, 1 X (window from sample n0), 2 Wt, 3 Bias (a dummy
// when absent), 4 Y (window from sample n0).
// Dispatch: n_wg = ptiles * ctiles * G * samples workgroups, folded into
// x*y past 65535; flat id = ((s * G + g) * ctiles + ct) * ptiles + pt.

#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> Wt: array<f32>;
@group(0) @binding(3) var<storage, read> Bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y: array<f32>;

const WG: u32 = TY * TX;
const TO: u32 = TY * RO;
const TP: u32 = TX * RP;

var<workgroup> ws: array<f32, KC * TO>; // [kk][o]
var<workgroup> xs: array<f32, KC * TP>; // [kk][p]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let flat = wg_flat(wid, nwg);
    if (flat >= P.n_wg) { return; }
    let pt = flat % P.ptiles;
    let rest = flat / P.ptiles;
    let ct = rest % P.ctiles;
    let sg = rest / P.ctiles; // s * G + g
    let grp = sg % P.groups;
    let s = sg / P.groups;

    let C = P.in_dims.x; let H = P.in_dims.y; let W = P.in_dims.z; let Cg = P.in_dims.w;
    let O = P.out_dims.x; let Wo = P.out_dims.z; let Og = P.out_dims.w;
    let npix = P.out_dims.y * Wo;
    let kw = P.win2.w;
    let khw = P.win2.z * kw;
    let K = P.k;
    let o0 = ct * TO;
    let p0 = pt * TP;
    let xbase = P.x_off + (s * C + grp * Cg) * H * W;
    let wbase = (grp * Og + o0) * K;
    let tx = lid % TX;
    let ty = lid / TX;

    var acc: array<f32, RO * RP>;
    for (var k0 = 0u; k0 < K; k0 = k0 + KC) {
        for (var i = lid; i < KC * TO; i = i + WG) {
            let kk = i % KC;
            let oo = i / KC;
            var v = 0.0;
            if (o0 + oo < Og && k0 + kk < K) { v = Wt[wbase + oo * K + k0 + kk]; }
            ws[kk * TO + oo] = v;
        }
        for (var i = lid; i < KC * TP; i = i + WG) {
            let pp = i % TP;
            let kk = i / TP;
            let pix = p0 + pp;
            let k = k0 + kk;
            var v = 0.0;
            if (pix < npix && k < K) {
                let ci = k / khw;
                let r = k % khw;
                let ky = r / kw;
                let kx = r % kw;
                let iy = i32(pix / Wo) * P.win.x - P.win.z + i32(ky * P.win2.x);
                let ix = i32(pix % Wo) * P.win.y - P.win.w + i32(kx * P.win2.y);
                if (iy >= 0 && iy < i32(H) && ix >= 0 && ix < i32(W)) {
                    v = X[xbase + ci * H * W + u32(iy) * W + u32(ix)];
                }
            }
            xs[kk * TP + pp] = v;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < KC; kk = kk + 1u) {
            var a: array<f32, RO>;
            var b: array<f32, RP>;
            for (var r = 0u; r < RO; r = r + 1u) { a[r] = ws[kk * TO + ty + r * TY]; }
            for (var q = 0u; q < RP; q = q + 1u) { b[q] = xs[kk * TP + tx + q * TX]; }
            for (var r = 0u; r < RO; r = r + 1u) {
                for (var q = 0u; q < RP; q = q + 1u) { acc[r * RP + q] = acc[r * RP + q] + a[r] * b[q]; }
            }
        }
        workgroupBarrier();
    }

    for (var r = 0u; r < RO; r = r + 1u) {
        let o = o0 + ty + r * TY;
        if (o >= Og) { continue; }
        let oc = grp * Og + o;
        var bv = 0.0;
        if (HAS_BIAS) { bv = Bias[oc]; }
        let ybase = P.y_off + (s * O + oc) * npix;
        for (var q = 0u; q < RP; q = q + 1u) {
            let pix = p0 + tx + q * TX;
            if (pix < npix) { Y[ybase + pix] = acc[r * RP + q] + bv; }
        }
    }
}
