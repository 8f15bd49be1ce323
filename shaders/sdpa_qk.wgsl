// sdpa_qk: scores[r, c] = dot(q[r], k[bh(r), c]) * scale (+ mask[r, c]).
// One thread per query row (b, h, s) of this chunk; vec4 loads over D.
// Params: the host prepends it (src/ops/sdpa.c, written once there).

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> mask: array<f32>;
@group(0) @binding(4) var<storage, read_write> scores: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let local_row = (wid.y * nwg.x + wid.x) * WG + lid;
    if (local_row >= P.n_rows) { return; }
    let row = P.row_base + local_row;
    let bh = row / P.s_q;
    let q_base = row * P.d4;
    let k_base = bh * P.s_kv * P.d4;
    for (var c = 0u; c < P.s_kv; c++) {
        var acc = 0.0;
        let kc = k_base + c * P.d4;
        for (var x = 0u; x < P.d4; x++) {
            acc += dot(q[q_base + x], k[kc + x]);
        }
        var s = acc * P.scale;
        if (P.has_mask != 0u) { s += mask[row * P.s_kv + c]; }
        scores[local_row * P.s_kv + c] = s;
    }
}
