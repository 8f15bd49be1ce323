// sdpa_fused_reduce: combines the split-KV partials of sdpa_fused (SPLIT).
// The host prepends OUT4 (four elements of out: vec4<f32>, or vec2<u32>
// holding float16 halves), st4(vec4<f32>) -> OUT4, and const QBIAS with fn
// qkv_bias4(i) (sdpa_qkvpacked's bias, [3][H][d4] vec4s, binding 4 when
// true: v's part is added to each output row, as sdpa_fused does unsplit).
// One thread per (row, d4): with M the largest split max,
//   out = sum_s o_s * 2^(m_s - M) / sum_s l_s * 2^(m_s - M)   (0 if the sum is 0),
// in one pass over the splits (M as it grows, the sums rescaled),
// row (b * n_h + h) * s_q + r going to out[b * o_bs + h * o_hs + r * o_rs]
// (vec4s; contiguous rows: n_h = s_q = 1, o_bs = d4).
// Params: the host prepends it (src/ops/sdpa_fused.c, written once there),
// and fn n_splits(row): the splits to combine, P.n_split, or for the decode
// kernel's only those that hold keys of the row's cache length
// (the others wrote nothing).

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> part_o: array<vec4<f32>>;  // [split][row][d4]
@group(0) @binding(2) var<storage, read> part_ml: array<vec2<f32>>; // [split][row]
@group(0) @binding(3) var<storage, read_write> out: array<OUT4>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * nwg.x + wid.x) * WG + lid;
    if (i >= P.n_rows * P.d4) { return; }
    let row = i / P.d4;
    let x = i - row * P.d4;
    // one pass, four splits a step: their loads all issued before any is
    // used, the running max M rescaling what is summed so far (a split with
    // no key has m = -FLT_MAX and l = 0, and weighs 0 against any other)
    var mx = -3.40282346638528859812e38;
    var l = 0.0;
    var acc = vec4<f32>(0.0);
    let n = n_splits(row);
    var s = 0u;
    for (; s + 4u <= n; s += 4u) {
        var ml: array<vec2<f32>, 4>;
        var o: array<vec4<f32>, 4>;
        for (var j = 0u; j < 4u; j++) {
            ml[j] = part_ml[(s + j) * P.n_rows + row];
            o[j] = part_o[((s + j) * P.n_rows + row) * P.d4 + x];
        }
        let mn = max(mx, max(max(ml[0].x, ml[1].x), max(ml[2].x, ml[3].x)));
        let a = exp2(mx - mn);
        l *= a;
        acc *= a;
        for (var j = 0u; j < 4u; j++) {
            let w = exp2(ml[j].x - mn);
            l += ml[j].y * w;
            acc += o[j] * w;
        }
        mx = mn;
    }
    for (; s < n; s++) {
        let ml = part_ml[s * P.n_rows + row];
        let mn = max(mx, ml.x);
        let a = exp2(mx - mn);
        let w = exp2(ml.x - mn);
        l = l * a + ml.y * w;
        acc = acc * a + part_o[(s * P.n_rows + row) * P.d4 + x] * w;
        mx = mn;
    }
    // out row by its strides: row = (b * n_h + h) * s_q + r
    let bh = row / P.s_q;
    let r = row - bh * P.s_q;
    let b = bh / P.n_h;
    let h = bh - b * P.n_h;
    var y = acc * select(0.0, 1.0 / l, l > 0.0);
    if (QBIAS) { y += qkv_bias4((2u * P.n_h + h) * P.d4 + x); }
    out[b * P.o_bs + h * P.o_hs + r * P.o_rs + x] = st4(y);
}
