// sdpa_qk_entry: the channel-attention route of sdpa_qk. One thread per score
// (row, c), so a few long rows still fill the GPU. Same Params as sdpa_qk.
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
    let i = (wid.y * nwg.x + wid.x) * WG + lid;
    if (i >= P.n_rows * P.s_kv) { return; }
    let local_row = i / P.s_kv;
    let c = i - local_row * P.s_kv;
    let row = P.row_base + local_row;
    let bh = row / P.s_q;
    let q_base = row * P.d4;
    let kc = (bh * P.s_kv + c) * P.d4;
    var acc = 0.0;
    for (var x = 0u; x < P.d4; x++) {
        acc += dot(q[q_base + x], k[kc + x]);
    }
    var s = acc * P.scale;
    if (P.has_mask != 0u) { s += mask[row * P.s_kv + c]; }
    scores[i] = s;
}
