// reduce_rows: row reductions followed by a write of the row, one kernel
// with variants: softmax (OP 0; over any dim), layer_norm (OP 1) and
// rms_norm (OP 2).
//
// Rows. Contiguous (STRIDED false): row r is X[r*n .. r*n + n) in units of V
// (f32, or vec4<f32> when the row length allows); L consecutive threads
// share a row, R = WG / L rows a workgroup. Strided (STRIDED true, softmax
// over a dim that is not the last, V = f32): the tensor is (outer, n, inner)
// and row (o, i) has its j-th value at o*n*inner + j*inner + i; a workgroup
// takes R neighbouring columns i of one o (column lid % R, lane lid / R), so
// neighbouring threads read neighbouring addresses.
// A thread's values are j = lane + k*L, k = 0, 1, ... With CACHED they stay
// in K registers: the row is read once and written once. Rows too long for
// that are read again in each phase.
// softmax: m = max, s = sum exp(x - m), y = exp(x - m) / s; a row that is
//   -inf everywhere gives P.empty (NaN as PyTorch; SDPA asks for 0).
// layer_norm: two passes over the registers: mean (of x - x0, see
//   row_pivot), then the biased variance of x - mean, each deviation
//   taken as (x - x0) - mean(x - x0), so that the mean is never rounded
//   to x0's float32 spacing; y = (x - mean) / sqrt(var + eps), then
//   affine(): * weight + bias.
// rms_norm: one pass over the registers: sum of squares;
//   y = x / sqrt(sum / count + eps), then affine(): * weight.
//
// Prelude (src/ops/norm.c): struct Params; consts OP, WG, L, R, K, SG,
// CACHED, STRIDED; alias V with vsum/vmax/vfirst; lanes_reduce (subgroup
// shuffles over a row's lanes where SG > 0: the subgroup size, fixed on the
// adapter; the identity with SG = 0; common/row_reduce calls it); affine()
// with the layer_norm / rms_norm weight/bias bindings it reads.
// Bindings: 0 Params, 1 X (read), 2 Y (read_write); layer_norm, rms_norm:
// 3 weight, 4 bias where given (declared by the prelude).
// Dispatch: P.n_groups workgroups, folded into x*y past 65535: contiguous
// ceil(n_rows / R), strided outer * P.tiles (P.tiles = ceil(inner / R)).

#include "common/grid"
#include "common/row_reduce"

const NEG_MAX: f32 = -3.40282346638528859812e38;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<V>;
@group(0) @binding(2) var<storage, read_write> Y: array<V>;

// layer_norm sums x - x0 (x0: the row's first value), so that a large
// offset common to the row does not eat the mean's f32 precision.
fn row_pivot(ok: bool, base: u32) -> f32 {
    if (ok) { return vfirst(X[base]); }
    return 0.0;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wg_flat(wid, nwg);
    if (g >= P.n_groups) { return; } // uniform per workgroup: barriers stay uniform
    var rl = lid / L;
    var lane = lid % L;
    var ok = false;
    var base = 0u;
    var stride = 1u;
    if (STRIDED) {
        rl = lid % R;
        lane = lid / R;
        let i = (g % P.tiles) * R + rl;
        ok = i < P.inner;
        base = (g / P.tiles) * P.n * P.inner + i;
        stride = P.inner;
    } else {
        let row = g * R + rl;
        ok = row < P.n_rows;
        base = row * P.n;
    }
    // k < nk: this thread's values (none for a padding thread)
    let nk = select(0u, (P.n - lane + L - 1u) / L, ok && lane < P.n);

    if (CACHED) {
        var c: array<V, K>;
        if (OP == 0u) {
            var m = NEG_MAX;
            for (var k = 0u; k < K; k++) {
                if (k < nk) {
                    c[k] = X[base + (lane + k * L) * stride];
                    m = max(m, vmax(c[k]));
                }
            }
            m = row_reduce(m, lid, rl, lane, true);
            var s = 0.0;
            for (var k = 0u; k < K; k++) {
                if (k < nk) {
                    c[k] = exp(c[k] - V(m));
                    s += vsum(c[k]);
                }
            }
            s = row_reduce(s, lid, rl, lane, false);
            let inv = select(P.empty, 1.0 / s, s > 0.0);
            for (var k = 0u; k < K; k++) {
                if (k < nk) { Y[base + (lane + k * L) * stride] = c[k] * inv; }
            }
        } else if (OP == 2u) {
            var q = 0.0;
            for (var k = 0u; k < K; k++) {
                if (k < nk) {
                    c[k] = X[base + lane + k * L];
                    q += vsum(c[k] * c[k]);
                }
            }
            let rstd = 1.0 / sqrt(row_reduce(q, lid, rl, lane, false) / P.count + P.eps);
            for (var k = 0u; k < K; k++) {
                if (k < nk) {
                    let j = lane + k * L;
                    Y[base + j] = affine(c[k] * rstd, j);
                }
            }
        } else {
            let pivot = row_pivot(ok, base);
            var s = 0.0;
            for (var k = 0u; k < K; k++) {
                if (k < nk) {
                    c[k] = X[base + lane + k * L];
                    s += vsum(c[k] - V(pivot));
                }
            }
            let shift = row_reduce(s, lid, rl, lane, false) / P.count; // mean - x0
            var q = 0.0;
            for (var k = 0u; k < K; k++) {
                if (k < nk) {
                    c[k] = (c[k] - V(pivot)) - V(shift);
                    q += vsum(c[k] * c[k]);
                }
            }
            let rstd = 1.0 / sqrt(row_reduce(q, lid, rl, lane, false) / P.count + P.eps);
            for (var k = 0u; k < K; k++) {
                if (k < nk) {
                    let j = lane + k * L;
                    Y[base + j] = affine(c[k] * rstd, j);
                }
            }
        }
        return;
    }

    // Rows too long for registers: read again in each phase.
    if (OP == 0u) {
        var m = NEG_MAX;
        for (var k = 0u; k < nk; k++) { m = max(m, vmax(X[base + (lane + k * L) * stride])); }
        m = row_reduce(m, lid, rl, lane, true);
        var s = 0.0;
        for (var k = 0u; k < nk; k++) { s += vsum(exp(X[base + (lane + k * L) * stride] - V(m))); }
        s = row_reduce(s, lid, rl, lane, false);
        let inv = select(P.empty, 1.0 / s, s > 0.0);
        for (var k = 0u; k < nk; k++) {
            let a = base + (lane + k * L) * stride;
            Y[a] = exp(X[a] - V(m)) * inv;
        }
    } else if (OP == 2u) {
        var q = 0.0;
        for (var k = 0u; k < nk; k++) {
            let x = X[base + lane + k * L];
            q += vsum(x * x);
        }
        let rstd = 1.0 / sqrt(row_reduce(q, lid, rl, lane, false) / P.count + P.eps);
        for (var k = 0u; k < nk; k++) {
            let j = lane + k * L;
            Y[base + j] = affine(X[base + j] * rstd, j);
        }
    } else {
        let pivot = row_pivot(ok, base);
        var s = 0.0;
        for (var k = 0u; k < nk; k++) { s += vsum(X[base + lane + k * L] - V(pivot)); }
        let shift = row_reduce(s, lid, rl, lane, false) / P.count; // mean - x0
        var q = 0.0;
        for (var k = 0u; k < nk; k++) {
            let d = (X[base + lane + k * L] - V(pivot)) - V(shift);
            q += vsum(d * d);
        }
        let rstd = 1.0 / sqrt(row_reduce(q, lid, rl, lane, false) / P.count + P.eps);
        for (var k = 0u; k < nk; k++) {
            let j = lane + k * L;
            Y[base + j] = affine(((X[base + j] - V(pivot)) - V(shift)) * rstd, j);
        }
    }
}
