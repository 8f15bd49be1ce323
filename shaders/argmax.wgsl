// argmax: the index of the largest value along one dim, as torch.argmax:
// the first (lowest) index of the maximum; NaN is larger than every number
// (the first NaN wins); -0.0 equals +0.0.
//
// Values are compared as u32 keys that order like the numbers (common/key),
// read as bits (X is u32), so no float compare, and no driver's NaN rule,
// is involved. int32 input (INT) keys by flipping the sign bit.
// Rows as in reduce_rows: contiguous (STRIDED false): row r is X[r*n ..) in
// units of XV (u32, or vec4<u32> when the row length is a multiple of 4), L
// consecutive threads a row, R = WG / L rows a workgroup; strided (argmax
// over a dim that is not the last): the tensor is (outer, n, inner), a
// workgroup takes R neighbouring columns i of one outer index, L lanes down
// each, so neighbouring threads read neighbouring addresses.
// A thread keeps its best (key, index) over j = lane + k*L, then a tree in
// workgroup memory over the row's lanes: the larger key, or the same key
// and the lower index.
//
// Prelude (src/ops/reduce.c): struct Params; consts WG, L, R, VEC, STRIDED,
// INT; alias XV; fn comp(v: XV, c: u32) -> u32 (component c of v).
// Bindings: 0 Params, 1 X (read), 2 Y: one i32 a row.
// Dispatch: P.n_groups workgroups, folded into x*y past 65535: contiguous
// ceil(n_rows / R), strided outer * P.tiles (P.tiles = ceil(inner / R)).

#include "common/grid"
#include "common/key"

const NONE: u32 = 0xffffffffu; // no index yet; larger than any index

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<XV>;
@group(0) @binding(2) var<storage, read_write> Y: array<i32>;

var<workgroup> rk: array<u32, WG>;
var<workgroup> ri: array<u32, WG>;

fn in_key(b: u32) -> u32 {
    if (INT) { return b ^ 0x80000000u; }
    return float_key(b);
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
    var dst = 0u;
    if (STRIDED) {
        rl = lid % R;
        lane = lid / R;
        let i = (g % P.tiles) * R + rl;
        let o = g / P.tiles;
        ok = i < P.inner;
        base = o * P.n * P.inner + i;
        stride = P.inner;
        dst = o * P.inner + i;
    } else {
        let row = g * R + rl;
        ok = row < P.n_rows;
        base = row * P.n;
        dst = row;
    }
    // key 0 with index NONE loses to every value, INT_MIN's key 0 included
    var bk = 0u;
    var bi = NONE;
    if (ok) {
        for (var j = lane; j < P.n; j += L) {
            let v = X[base + j * stride];
            for (var c = 0u; c < VEC; c++) {
                let k = in_key(comp(v, c));
                if (k > bk || bi == NONE) { // indices only grow here: strict > keeps the first
                    bk = k;
                    bi = j * VEC + c;
                }
            }
        }
    }
    let slot = lane * R + rl;
    rk[slot] = bk;
    ri[slot] = bi;
    workgroupBarrier();
    for (var s = L / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            let o = (lane + s) * R + rl;
            if (rk[o] > rk[slot] || (rk[o] == rk[slot] && ri[o] < ri[slot])) {
                rk[slot] = rk[o];
                ri[slot] = ri[o];
            }
        }
        workgroupBarrier();
    }
    if (ok && lane == 0u) { Y[dst] = i32(ri[rl]); }
}
