// index_copy: out = self, then out.index_select(dim, index) = source
// (src/ops/shape.c, row "index_copy"). self and out are seen as
// [outer, N, inner] and source as [outer, n_idx, inner], in 32-bit words
// (inner_w words per row of dim; float16 rows are whole words, the host
// checks it).
// COPY: dst[t] = src[t] (wgnn__plan_copy_words: an in-place output given as
// another tensor gets its input's words first; src/ops/ops.c, wgnn__op_plan).
// Scatter pass: thread t = (o * n_idx + i) * inner_w + e copies source word
// t to row r = idx[i] of out. An r outside [0, N) writes nothing and records
// itself in the context's data-error words (src/internal.h).
// Bindings: 0 Params, 1 src (self or source), 2 dst (out), 3 idx (a dummy
// for COPY), 4 flag.
#include "common/grid"
#include "common/data_err"

override WG: u32 = 64u;
override COPY: bool = false;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read> idx: array<i32>;
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = wg_flat(wid, nwg) * WG + lid;
    if (t >= P.n_threads) { return; }
    if (COPY) {
        dst[t] = src[t];
        return;
    }
    let e = t % P.inner_w;
    let rest = t / P.inner_w;
    let i = rest % P.n_idx;
    let o = rest / P.n_idx;
    let r = idx[i];
    if (r < 0 || u32(r) >= P.n) {
        data_err(DATA_ERR_INDEX_COPY, bitcast<u32>(r), i, P.n);
        return;
    }
    dst[(o * P.n + u32(r)) * P.inner_w + e] = src[t];
}
