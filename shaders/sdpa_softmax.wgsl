// sdpa_softmax: row-wise softmax of scores into probs. One 64-thread
// workgroup per row on a near-square 2-D grid; the flat row index is rebuilt
// from num_workgroups. A row that is -inf everywhere becomes zeros.
// Params: the host prepends it (src/ops/sdpa.c, written once there).

const WG: u32 = 64u;
// The running max starts at -FLT_MAX, not -inf: exp(s - m) is then never
// exp(-inf - -inf), -inf entries give 0, and an all -inf row sums to 0.
const NEG_MAX: f32 = -3.40282346638528859812e38;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> scores: array<f32>;
@group(0) @binding(2) var<storage, read_write> probs: array<f32>;

var<workgroup> red: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = wid.y * nwg.x + wid.x;
    if (row >= P.n_rows) { return; } // uniform per workgroup: barriers stay uniform
    let base = row * P.n_cols;

    var m = NEG_MAX;
    for (var c = lid; c < P.n_cols; c += WG) {
        m = max(m, scores[base + c]);
    }
    red[lid] = m;
    workgroupBarrier();
    for (var w = WG / 2u; w > 0u; w /= 2u) {
        if (lid < w) { red[lid] = max(red[lid], red[lid + w]); }
        workgroupBarrier();
    }
    let row_max = red[0];
    workgroupBarrier();

    var sum = 0.0;
    for (var c = lid; c < P.n_cols; c += WG) {
        sum += exp(scores[base + c] - row_max);
    }
    red[lid] = sum;
    workgroupBarrier();
    for (var w = WG / 2u; w > 0u; w /= 2u) {
        if (lid < w) { red[lid] = red[lid] + red[lid + w]; }
        workgroupBarrier();
    }
    let total = red[0];
    let inv = select(0.0, 1.0 / total, total > 0.0);
    for (var c = lid; c < P.n_cols; c += WG) {
        probs[base + c] = exp(scores[base + c] - row_max) * inv;
    }
}
