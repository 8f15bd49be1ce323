// argmax_split: argmax of long contiguous rows (an LLM's logits: 151936
// values, one row) in two passes, so that one row is not one workgroup's
// walk (src/ops/reduce.c, row "argmax"; the same answer as argmax.wgsl: the
// first index of the largest value, NaN above everything, -0.0 == +0.0).
// PASS 1: workgroup g takes chunk g % SPLIT of row g / SPLIT (P.chunk XV
//   units), a thread its (key, index) best over a strided run, a tree in
//   workgroup memory; the chunk's best goes to PK[g].
// PASS 2: workgroup r reduces row r's SPLIT pairs and writes Y[r].
// Prelude: struct Params (argmax's, plus chunk and split), consts WG, VEC,
// INT, PASS; alias XV; fn comp(v: XV, c: u32) -> u32.
// Bindings: 0 Params, 1 X (pass 1; pass 2 binds PK there too, unread),
// 2 PK (pairs), 3 Y (pass 2).
// Dispatch: pass 1 n_rows * split workgroups, pass 2 n_rows, folded into x*y.
#include "common/grid"
#include "common/key"

const NONE: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<XV>;
@group(0) @binding(2) var<storage, read_write> PK: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> Y: array<i32>;

var<workgroup> rk: array<u32, WG>;
var<workgroup> ri: array<u32, WG>;

fn in_key(b: u32) -> u32 {
    if (INT) { return b ^ 0x80000000u; }
    return float_key(b);
}

// (k, i) beats (bk, bi): the larger key, or the same key and the lower index
fn better(k: u32, i: u32, bk: u32, bi: u32) -> bool {
    return bi == NONE || (i != NONE && (k > bk || (k == bk && i < bi)));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wg_flat(wid, nwg);
    if (g >= P.n_groups) { return; } // uniform per workgroup
    var bk = 0u;
    var bi = NONE;
    if (PASS == 1u) {
        let row = g / P.split;
        let c = g - row * P.split;
        let j0 = c * P.chunk;
        let j1 = min(P.n, j0 + P.chunk);
        for (var j = j0 + lid; j < j1; j += WG) {
            let v = X[row * P.n + j];
            for (var e = 0u; e < VEC; e++) {
                let k = in_key(comp(v, e));
                if (k > bk || bi == NONE) {
                    bk = k;
                    bi = j * VEC + e;
                }
            }
        }
    } else {
        for (var c = lid; c < P.split; c += WG) {
            let pr = PK[g * P.split + c];
            if (better(pr.x, pr.y, bk, bi)) {
                bk = pr.x;
                bi = pr.y;
            }
        }
    }
    rk[lid] = bk;
    ri[lid] = bi;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s && better(rk[lid + s], ri[lid + s], rk[lid], ri[lid])) {
            rk[lid] = rk[lid + s];
            ri[lid] = ri[lid + s];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        if (PASS == 1u) {
            PK[g] = vec2<u32>(rk[0], ri[0]);
        } else {
            Y[g] = i32(ri[0]);
        }
    }
}
