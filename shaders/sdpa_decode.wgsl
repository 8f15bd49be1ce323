// sdpa_decode: attention over a KV cache for a few query rows (decoding),
// the row "sdpa_kvcache" (src/ops/sdpa_kvcache.c) when group * S_q <= R
// rows fit: one workgroup a (batch, kv head, split of the keys) takes the R
// = group * S_q query rows that read that kv head (the group's query heads,
// each at S_q positions), so K and V are read once for all of them. The
// keys go in blocks of BLK = W * U, block n to split n % n_split, so the
// L keys of this step spread over the splits whatever the cache's size
// (S_max), and a split knows its first block before it knows L.
//
// A subgroup (SG lanes) takes U keys at a time: lane l holds pieces
// x = l + c*SG (c < QX) of each row of q (registers) and of the keys'
// K and V rows, all 2U loads issued before any is used; a score is the
// subgroupAdd of the lanes' partial dots. Each subgroup keeps its own
// running max, sum and output per row (online softmax); the W = WG / SG
// subgroups take interleaved keys (consecutive subgroups, consecutive
// keys) and are merged through workgroup memory at the end. Partial outputs
// (unnormalised), maxima and sums go out as the fused kernel's split-KV
// partials, in one binding (part: the outputs [split][row][D4], then from
// vec4 ML0 the (max, sum) pairs [split][row], two a vec4); sdpa_fused_reduce
// combines the splits. Scores in log2 units (q pre-scaled by scale * log2 e).
// ONE (one split, float32 output): part is the output itself [B, H, S_q,
// D4], and the kernel writes the normalised rows there (zeros for a cache
// length of 0, as the reduce would): no reduce dispatch after it.
//
// QKV (row "qkv_sdpa_kvcache"): q is the stacked projection [B, S_q,
// (H + 2 H_kv) * D4] instead, and the kernel first does qkv_rope_cache's
// work for its kv head: q's rows and the new k rows RMS-normalized per head
// (HAS_NORM: q_norm, k_norm), rotated by rotate-half RoPE (the rows of the
// cos and sin tables [P, D] at their positions L - S_q + i, L the cache
// length), and the new k and v rows written into the caches by the
// workgroup whose split holds that position; that workgroup takes them from
// workgroup memory, not the cache, so no workgroup reads a row written in
// this dispatch. A length outside [S_q, S_max] is reported (data-error
// words) and writes no row.
//
// Latency: a decode step runs this once a layer on a few rows, so the loads
// that do not need L (q or the rows to stage, the norms) are issued with
// L's before the workgroup waits for it; then the first pass's K and V rows
// with the cos/sin rows; a split past L stops there, without a partial
// (the reduce, told BLK, reads only splits below ceil(L / BLK)).
//
// Subgroups are taken to be SG consecutive invocations (tid / SG), as
// reduce_rows and sdpa_fused take them; src/ops/sdpa_kvcache.c uses this
// kernel only where the subgroup size is fixed.
//
// Prelude (src/ops/sdpa_kvcache.c): enable subgroups; struct Params, consts
// D4, R, SG, WG, U, QX = ceil(D4 / SG), QKV, HAS_NORM, ONE, IN4 and ld4 (float32
// or float16 storage), bindings 2 and 3, k and v (read_write with QKV), and
// fn put_kv(i, kv, vv): writes k[i] and v[i] (QKV; empty otherwise).
// Dispatch: n_groups = B * H_kv * n_split workgroups folded into x*y.
#include "common/grid"
#include "common/data_err"

const NEG_MAX: f32 = -3.40282346638528859812e38;
const W: u32 = WG / SG;
const BLK: u32 = W * U; // keys a workgroup takes in one pass

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<IN4>;   // [B, H, S_q, D4]; QKV: [B, S_q, H + 2 H_kv, D4]
// bindings 2, 3 (prelude): k, v [B, H_kv, S_max, D4]
@group(0) @binding(4) var<storage, read> seqlens: array<i32>;
@group(0) @binding(5) var<storage, read_write> part: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> flag: array<atomic<u32>>;
// QKV: cos, sin tables [P, D4] (row p: position p); q_norm, k_norm [D4]
// (dummies without HAS_NORM)
@group(0) @binding(7) var<storage, read> rcos: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> rsin: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> qnorm: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> knorm: array<vec4<f32>>;

var<workgroup> sM: array<f32, W * R>;
var<workgroup> sL: array<f32, W * R>;
var<workgroup> sO: array<vec4<f32>, W * R * D4>; // QKV: first the staged rows, R + 3 S_q of them
var<workgroup> sLen: u32; // the cache length, clamped
var<workgroup> sAppend: u32; // QKV: the length is in [S_q, S_max]

// QKV: the stacked projection's piece x of head `head` at token t
fn qkv_at(b: u32, t: u32, head: u32, x: u32) -> vec4<f32> {
    return ld4(q[((b * P.s_q + t) * (P.h + 2u * P.h_kv) + head) * D4 + x]);
}

// QKV: element e of staged row `slot` rotated (rotate-half RoPE at position t)
fn roped(slot: u32, t: u32, e: u32) -> f32 {
    let half = 2u * D4;
    let x = sO[slot * D4 + e / 4u][e % 4u];
    let pe = select(e - half, e + half, e < half);
    let rot = select(sO[slot * D4 + pe / 4u][pe % 4u], -sO[slot * D4 + pe / 4u][pe % 4u], e < half);
    return x * rcos[t * D4 + e / 4u][e % 4u] + rot * rsin[t * D4 + e / 4u][e % 4u];
}

// QKV: piece x of staged row `slot` rotated at position t
fn roped4(slot: u32, t: u32, x: u32) -> vec4<f32> {
    let e = 4u * x;
    return vec4<f32>(roped(slot, t, e), roped(slot, t, e + 1u), roped(slot, t, e + 2u), roped(slot, t, e + 3u));
}

// K and V rows j0 + u * W + w (u < U) of subgroup w, the lane's pieces; a
// row past `last` reads row `last` (a valid row, masked by the caller)
struct Rows {
    k: array<vec4<f32>, U * QX>,
    v: array<vec4<f32>, U * QX>,
}

fn key_rows(kv_base: u32, j0: u32, last: u32, w: u32, lane: u32) -> Rows {
    var o: Rows;
    for (var u = 0u; u < U; u++) {
        let j = min(j0 + u * W + w, last);
        for (var c = 0u; c < QX; c++) {
            let x = min(lane + c * SG, D4 - 1u);
            o.k[u * QX + c] = ld4(k[kv_base + j * D4 + x]);
            o.v[u * QX + c] = ld4(v[kv_base + j * D4 + x]);
        }
    }
    return o;
}

// whether split `split` takes key (position) pos: keys go in blocks of
// BLK = W * U, block n to split n % n_split
fn holds(pos: i32, split: u32) -> bool { return pos >= 0 && (u32(pos) / BLK) % P.n_split == split; }

// the q / output row [B, H, S_q] of this workgroup's query row r (query
// head gi = r / S_q of kv head kvh's group, position r % S_q)
fn row_of(b: u32, kvh: u32, r: u32) -> u32 {
    let gi = r / P.s_q;
    return (b * P.h + kvh * P.group + gi) * P.s_q + (r - gi * P.s_q);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let g = wg_flat(wid, nwg);
    if (g >= P.n_groups) { return; } // uniform per workgroup
    let split = g / (P.n_b * P.h_kv);
    let bk = g - split * P.n_b * P.h_kv; // b * h_kv + kv head
    let b = bk / P.h_kv;
    let kvh = bk - b * P.h_kv;
    let w = tid / SG;
    let lane = tid - w * SG;
    let k0 = split * BLK; // its first block of keys
    let kv_base = (b * P.h_kv + kvh) * P.s_kv * D4;

    // 1. What does not wait for the cache length L, its loads issued
    // together: L (thread 0), the query rows (QKV: the rows to stage) and
    // the norms.
    if (tid == 0u) {
        let len = seqlens[b];
        if (len < 0 || u32(len) > P.s_kv) { data_err(DATA_ERR_SEQLEN, bitcast<u32>(len), b, P.s_kv + 1u); }
        // QKV: the new rows need L >= S_q (one report, by split 0)
        if (QKV && split == 0u && len >= 0 && u32(len) <= P.s_kv && u32(len) < P.s_q) {
            data_err(DATA_ERR_SEQLEN_NEW, bitcast<u32>(len), b, P.s_q);
        }
        sLen = u32(clamp(len, 0, i32(P.s_kv)));
        sAppend = u32(len >= i32(P.s_q) && len <= i32(P.s_kv));
    }

    // the R query rows: row r = gi * S_q + i is q head kvh * group + gi at position i
    var qr: array<vec4<f32>, R * QX>;
    var o: array<vec4<f32>, R * QX>;
    var m: array<f32, R>;
    var l: array<f32, R>;
    for (var r = 0u; r < R; r++) {
        for (var c = 0u; c < QX; c++) { o[r * QX + c] = vec4<f32>(0.0); }
        m[r] = NEG_MAX;
        l[r] = 0.0;
    }
    if (QKV) {
        // Staged rows, subgroup w taking slots w, w + W, ...: slot r < R the
        // query rows, R + i the new k row i (both RMS-normalized with
        // HAS_NORM), R + S_q + i the new v row i; every split stages the new
        // rows (it learns which split holds them only from L).
        let n_stage = R + 2u * P.s_q;
        for (var r0 = 0u; r0 < n_stage; r0 += W) {
            let r = r0 + w;
            let live = r < n_stage;
            let is_q = r < R;
            let is_k = !is_q && r < R + P.s_q;
            let i = select(select(select(0u, r - R - P.s_q, live), r - R, is_k), r % P.s_q, is_q);
            let head = select(select(select(0u, P.h + P.h_kv + kvh, live), P.h + kvh, is_k), kvh * P.group + r / P.s_q, is_q);
            var xr: array<vec4<f32>, QX>;
            var nw: array<vec4<f32>, QX>;
            var ss = 0.0;
            for (var c = 0u; c < QX; c++) {
                let x = min(lane + c * SG, D4 - 1u);
                xr[c] = select(vec4<f32>(0.0), qkv_at(b, i, head, x), live && lane + c * SG < D4);
                if (HAS_NORM) { nw[c] = select(knorm[x], qnorm[x], is_q); }
                ss += dot(xr[c], xr[c]);
            }
            let inv = inverseSqrt(subgroupAdd(ss) / f32(4u * D4) + P.eps);
            if (live) {
                for (var c = 0u; c < QX; c++) {
                    let x = lane + c * SG;
                    if (x < D4) {
                        var y = xr[c];
                        if (HAS_NORM && r < R + P.s_q) { y *= inv * nw[c]; }
                        sO[r * D4 + x] = y;
                    }
                }
            }
        }
    } else {
        for (var r = 0u; r < R; r++) {
            let qrow = row_of(b, kvh, r);
            for (var c = 0u; c < QX; c++) {
                let x = lane + c * SG;
                qr[r * QX + c] = select(vec4<f32>(0.0), ld4(q[qrow * D4 + min(x, D4 - 1u)]) * P.qscale, x < D4);
            }
        }
    }

    // 2. L known (a barrier: the staged rows are in sO). A split with no
    // key is done: sdpa_fused_reduce (its n_splits) reads only the splits below
    // ceil(L / BLK). The first pass's K and V rows are read now, with the
    // cos/sin rows.
    let L = workgroupUniformLoad(&sLen); // uniform: the key loop holds subgroup operations
    let append = workgroupUniformLoad(&sAppend) != 0u && QKV; // new rows only for a length in [S_q, S_max]
    if (k0 >= L) {
        if (ONE) { // no key at all (L = 0): zero rows, as the reduce writes them
            for (var t = tid; t < R * D4; t += WG) {
                let r = t / D4;
                part[row_of(b, kvh, r) * D4 + t - r * D4] = vec4<f32>(0.0);
            }
        }
        return;
    }
    let first = i32(L) - i32(P.s_q); // position of new row 0
    var cur = key_rows(kv_base, k0, L - 1u, w, lane); // past L: row L - 1, masked below
    if (QKV) {
        for (var r = 0u; r < R; r++) {
            let pq = u32(max(first + i32(r % P.s_q), 0)); // its position (any row when L is out of range)
            for (var c = 0u; c < QX; c++) {
                let x = lane + c * SG;
                qr[r * QX + c] = select(vec4<f32>(0.0), roped4(r, pq, min(x, D4 - 1u)) * P.qscale, x < D4);
            }
        }
        // the new k rows rotated, into slot R + 2 S_q + i for the key loop,
        // and with their v rows into the caches by the split whose keys hold
        // their position (no workgroup reads a row written in this dispatch:
        // the split that holds it takes it from sO)
        for (var t = tid; t < P.s_q * D4; t += WG) {
            let i = t / D4;
            let x = t - i * D4;
            let pos = first + i32(i);
            let kr = roped4(R + i, u32(max(pos, 0)), x);
            sO[(R + 2u * P.s_q + i) * D4 + x] = kr;
            if (append && holds(pos, split)) { put_kv(kv_base + u32(pos) * D4 + x, kr, sO[(R + P.s_q + i) * D4 + x]); }
        }
        workgroupBarrier();
    }

    for (var j0 = k0; j0 < L; j0 += P.n_split * BLK) {
        // U keys of this subgroup: j0 + u * W + w; K and V rows read first
        // (the first pass's with the cos/sin rows, above)
        if (j0 != k0) { cur = key_rows(kv_base, j0, L - 1u, w, lane); }
        var kk = cur.k;
        var vv = cur.v;
        if (append && j0 + BLK > u32(max(first, 0))) {
            // a new row (position >= first) comes from sO, not the cache
            // (as does the row a key past L was clamped to)
            for (var u = 0u; u < U; u++) {
                let i = i32(min(j0 + u * W + w, L - 1u)) - first;
                if (i >= 0) {
                    for (var c = 0u; c < QX; c++) {
                        let x = min(lane + c * SG, D4 - 1u);
                        kk[u * QX + c] = sO[(R + 2u * P.s_q + u32(i)) * D4 + x];
                        vv[u * QX + c] = sO[(R + P.s_q + u32(i)) * D4 + x];
                    }
                }
            }
        }
        for (var r = 0u; r < R; r++) {
            let i = r % P.s_q;
            var s: array<f32, U>;
            var mx = m[r];
            for (var u = 0u; u < U; u++) {
                var part = 0.0;
                for (var c = 0u; c < QX; c++) { part += dot(qr[r * QX + c], kk[u * QX + c]); }
                let sc = subgroupAdd(part);
                let j = j0 + u * W + w;
                // causal: position i of the S_q new rows sees keys <= i + L - S_q
                let visible = j < L && (P.causal == 0u || i32(j) <= i32(i) + i32(L) - i32(P.s_q));
                s[u] = select(NEG_MAX, sc, visible);
                mx = max(mx, s[u]);
            }
            let alpha = exp2(m[r] - mx);
            var sum = l[r] * alpha;
            for (var c = 0u; c < QX; c++) { o[r * QX + c] *= alpha; }
            for (var u = 0u; u < U; u++) {
                let p = select(0.0, exp2(s[u] - mx), s[u] > NEG_MAX);
                sum += p;
                for (var c = 0u; c < QX; c++) { o[r * QX + c] += p * vv[u * QX + c]; }
            }
            m[r] = mx;
            l[r] = sum;
        }
    }
    if (QKV) { workgroupBarrier(); } // sO is the merge's again

    // merge the subgroups (a subgroup with no key keeps m = -FLT_MAX, l = 0)
    for (var r = 0u; r < R; r++) {
        if (lane == 0u) {
            sM[w * R + r] = m[r];
            sL[w * R + r] = l[r];
        }
        for (var c = 0u; c < QX; c++) {
            let x = lane + c * SG;
            if (x < D4) { sO[(w * R + r) * D4 + x] = o[r * QX + c]; }
        }
    }
    workgroupBarrier();
    for (var t = tid; t < R * D4; t += WG) {
        let r = t / D4;
        let x = t - r * D4;
        var mx = NEG_MAX;
        for (var ww = 0u; ww < W; ww++) { mx = max(mx, sM[ww * R + r]); }
        var sum = 0.0;
        var acc = vec4<f32>(0.0);
        for (var ww = 0u; ww < W; ww++) {
            let f = select(0.0, exp2(sM[ww * R + r] - mx), sL[ww * R + r] > 0.0);
            sum += sL[ww * R + r] * f;
            acc += sO[(ww * R + r) * D4 + x] * f;
        }
        let row = row_of(b, kvh, r);
        if (ONE) {
            part[row * D4 + x] = acc * select(0.0, 1.0 / sum, sum > 0.0);
            continue;
        }
        let prow = split * P.n_rows + row;
        part[prow * D4 + x] = acc;
        if (x == 0u) {
            let pm = P.ml0 + prow / 2u;
            if (prow % 2u == 0u) {
                part[pm].x = mx;
                part[pm].y = sum;
            } else {
                part[pm].z = mx;
                part[pm].w = sum;
            }
        }
    }
}
