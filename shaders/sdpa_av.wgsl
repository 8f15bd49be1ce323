// sdpa_av: out[r, x] = sum_c probs[r, c] * v[bh(r), c, x]. One thread per
// (row, d4) computes a vec4 of outputs; scalar loop over S_kv.
// Params: the host prepends it (src/ops/sdpa.c, written once there).

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * nwg.x + wid.x) * WG + lid;
    if (i >= P.n_rows * P.d4) { return; }
    let local_row = i / P.d4;
    let x = i - local_row * P.d4;
    let row = P.row_base + local_row;
    let bh = row / P.s_q;
    let p_base = local_row * P.s_kv;
    let v_base = bh * P.s_kv * P.d4 + x;
    var acc = vec4<f32>(0.0);
    for (var c = 0u; c < P.s_kv; c++) {
        acc += probs[p_base + c] * v[v_base + c * P.d4];
    }
    out[row * P.d4 + x] = acc;
}
