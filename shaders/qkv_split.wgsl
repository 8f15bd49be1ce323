// qkv_split: qkv_rope without norms or rotation (an encoder's stacked
// q|k|v split into heads; src/ops/rope.c, wgnn__qkv_rope_encode), four
// elements a thread:
//   X [B, n, H + 2 Hk, D] -> Q [B, H, n, D], K [B, Hk, n, D], V [B, Hk, n, D]
// Thread e takes X's vec4 e (reads in X's order, writes runs of D / 4
// vec4s). qkv_rope's one workgroup a head row moved 145 us of ViT-B/16's
// batch-32 q|k|v on the H200, where the bytes take about 35.
// Prelude: struct Params (total: vec4s of X, n, h, hk, d4 = D / 4), const WG.
// Dispatch: ceil(total / WG) workgroups folded into x*y.
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> Q: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> K: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> V: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = wg_flat(wid, nwg) * WG + lid;
    if (e >= P.total) { return; }
    let heads = P.h + 2u * P.hk;
    let j = e % P.d4;
    let r = e / P.d4;      // (b * n + t) * heads + head
    let head = r % heads;
    let bt = r / heads;
    let t = bt % P.n;
    let b = bt / P.n;
    let x = X[e];
    if (head < P.h) {
        Q[((b * P.h + head) * P.n + t) * P.d4 + j] = x;
    } else if (head < P.h + P.hk) {
        K[((b * P.hk + head - P.h) * P.n + t) * P.d4 + j] = x;
    } else {
        V[((b * P.hk + head - P.h - P.hk) * P.n + t) * P.d4 + j] = x;
    }
}
