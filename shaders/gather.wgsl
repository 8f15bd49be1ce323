// gather: the shape family's one kernel (src/ops/shape.c), a strided copy.
// A domain of rank <= 8 (P.dims, outermost first) is walked; each element
// is copied from src[P.src_base + sum c_d * P.sstr_d] to
// dst[P.dst_base + sum c_d * P.dstr_d] (element offsets; u32 arithmetic
// wraps, the host makes every offset that is used land inside its binding).
// Data are moved as bits: 32-bit elements (float32, int32) or 16-bit ones
// (float16, HALF) without shader-f16.
// Variants (override MODE):
//   0 copy    slice, split_with_sizes, permute, cat
//   1 pad     constant_pad_nd: a coordinate outside [P.lo_d, P.hi_d) in any
//             dim writes P.fill instead of reading src
//   2 index   embedding: dim 0's coordinate c0 picks weight row
//             r = idx[P.idx_base + c0]; rows in [P.row_lo, P.row_hi) are
//             bound (src_base .. is relative to row_lo); a row outside
//             [0, P.n_rows) writes zeros (P.fill) and raises flag[0] when
//             P.oob_zero, else it is another dispatch's (skipped)
// HALF: a thread writes one whole u32 word of dst, two 16-bit elements.
// VEC (copy of 32-bit elements): a thread copies VEC consecutive elements,
// the innermost dim (contiguous on both sides) counted in runs of VEC with
// stride VEC: the coordinate walk, which costs more than the copy, once a run.
// Dims [P.inner, rank) form a block contiguous in dst (all dims when the
// output is dense, the innermost one for cat); P.blk_words threads per
// block; a half of the word outside the block, or skipped, keeps dst's bits.
// The host guarantees that no two blocks of one dispatch share a word.
// Bindings: 0 Params, 1 src (read), 2 dst (read_write), 3 idx (read; a dummy
// unless MODE 2), 4 flag (read_write; a dummy unless MODE 2).
// Dispatch: ceil(P.n_threads / WG) workgroups on a 2-D folded grid.
#include "common/grid"
#include "common/data_err"

override WG: u32 = 64u;
override MODE: u32 = 0u;
override HALF: bool = false;
override VEC: u32 = 1u;

const READ: u32 = 0u;
const FILL: u32 = 1u;
const KEEP: u32 = 2u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read> idx: array<i32>;
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>>;

fn at8(a: vec4<u32>, b: vec4<u32>, k: u32) -> u32 {
    if (k < 4u) { return a[k]; }
    return b[k - 4u];
}

struct Walk {
    s: u32,   // src offset contributed by the dims walked
    d: u32,   // dst offset contributed
    ok: bool, // every coordinate inside [lo, hi) (MODE 1)
    c0: u32,  // the coordinate of dim 0, when walked
}

// Splits f into coordinates over dims [first, last) (innermost fastest).
fn walk(f0: u32, first: u32, last: u32) -> Walk {
    var w = Walk(0u, 0u, true, 0u);
    var f = f0;
    for (var k = last; k > first; k--) {
        let d = k - 1u;
        let n = at8(P.dims0, P.dims1, d);
        let c = f % n;
        f = f / n;
        w.s += c * at8(P.sstr0, P.sstr1, d);
        w.d += c * at8(P.dstr0, P.dstr1, d);
        if (MODE == 1u) {
            w.ok = w.ok && c >= at8(P.lo0, P.lo1, d) && c < at8(P.hi0, P.hi1, d);
        }
        if (d == 0u) { w.c0 = c; }
    }
    return w;
}

// What the element at w gets: (READ, src element offset), (FILL, 0) or (KEEP, 0).
fn source(w: Walk) -> vec2<u32> {
    if (MODE == 1u && !w.ok) { return vec2<u32>(FILL, 0u); }
    if (MODE == 2u) {
        let i = P.idx_base + w.c0;
        if (i >= arrayLength(&idx)) { return vec2<u32>(KEEP, 0u); }
        let r = idx[i];
        if (r < 0 || u32(r) >= P.n_rows) {
            if (P.oob_zero == 0u) { return vec2<u32>(KEEP, 0u); }
            // the first thread to find a bad index records it
            data_err(DATA_ERR_INDEX, bitcast<u32>(r), i, P.n_rows);
            return vec2<u32>(FILL, 0u);
        }
        if (u32(r) < P.row_lo || u32(r) >= P.row_hi) { return vec2<u32>(KEEP, 0u); }
        return vec2<u32>(READ, P.src_base + w.s + (u32(r) - P.row_lo) * P.row_stride);
    }
    return vec2<u32>(READ, P.src_base + w.s);
}

fn read32(off: u32) -> u32 {
    if (off < arrayLength(&src)) { return src[off]; }
    return 0u;
}

fn read16(off: u32) -> u32 {
    return (read32(off >> 1u) >> ((off & 1u) * 16u)) & 0xffffu;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = wg_flat(wid, nwg) * WG + lid;
    if (t >= P.n_threads) { return; }
    if (!HALF) {
        let w = walk(t, 0u, P.rank);
        let o = P.dst_base + w.d;
        let g = source(w);
        if (g.x == KEEP) { return; }
        for (var e = 0u; e < VEC; e++) {
            if (o + e >= arrayLength(&dst)) { return; }
            var v = P.fill;
            if (g.x == READ) { v = read32(g.y + e); }
            dst[o + e] = v;
        }
        return;
    }
    let outer = walk(t / P.blk_words, 0u, P.inner);
    let s = P.dst_base + outer.d;      // the block's first element in dst
    let end = s + P.blk_len;           // one past its last
    let word = (s >> 1u) + t % P.blk_words;
    if (2u * word >= end || word >= arrayLength(&dst)) { return; }
    var hv = array<u32, 2>(0u, 0u);
    var keep = array<bool, 2>(true, true);
    for (var h = 0u; h < 2u; h++) {
        let e = 2u * word + h;
        if (e < s || e >= end) { continue; }
        var w = walk(e - s, P.inner, P.rank);
        w.s += outer.s;
        w.ok = w.ok && outer.ok;
        w.c0 += outer.c0; // dim 0 is walked by one of the two
        let g = source(w);
        if (g.x == KEEP) { continue; }
        keep[h] = false;
        hv[h] = P.fill & 0xffffu;
        if (g.x == READ) { hv[h] = read16(g.y); }
    }
    if (keep[0] && keep[1]) { return; }
    if (keep[0] || keep[1]) {
        let old = dst[word];
        if (keep[0]) { hv[0] = old & 0xffffu; }
        if (keep[1]) { hv[1] = old >> 16u; }
    }
    dst[word] = hv[0] | (hv[1] << 16u);
}
