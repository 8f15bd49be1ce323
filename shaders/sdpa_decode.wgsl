// sdpa_decode: attention over a KV cache for a few query rows (decoding),
// the row "sdpa_kvcache" (src/ops/sdpa.c) when S_q * group <= R_MAX: one
// workgroup a (batch, kv head, split of the keys) takes all R = group * S_q
// query rows that read that kv head (the group's query heads, each at
// S_q positions) at once, instead of a 64-row tile with one live row.
//
// Per block of WG keys in the split's range:
//   1. thread t scores key blk + t against the R rows (its key row read
//      whole, the rows from workgroup memory), -inf past the row's limit;
//   2. per row, the block's max and the rescale of the running sums;
//   3. thread (r, d4) adds p . V[:, d4] over the block (V rows read across
//      the threads: coalesced).
// Partial outputs (unnormalised), maxima and sums go out as the fused
// kernel's split-KV partials; sdpa_fused_reduce combines the splits.
// Scores in log2 units (q pre-scaled by scale * log2 e).
//
// Prelude (src/ops/sdpa.c): struct Params, consts D4, R_MAX, WG, IN4 and
// ld4 (float32 or float16 storage).
// Dispatch: n_groups = B * H_kv * n_split workgroups folded into x*y.
#include "common/grid"

const NEG_MAX: f32 = -3.40282346638528859812e38;
const NEG_INF_LIKE: f32 = -3.0e38;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<IN4>;   // [B, H, S_q, D4]
@group(0) @binding(2) var<storage, read> k: array<IN4>;   // [B, H_kv, S_max, D4]
@group(0) @binding(3) var<storage, read> v: array<IN4>;
@group(0) @binding(4) var<storage, read> seqlens: array<i32>;
@group(0) @binding(5) var<storage, read_write> part_o: array<vec4<f32>>; // [split][B*H*S_q][D4]
@group(0) @binding(6) var<storage, read_write> part_ml: array<vec2<f32>>; // [split][B*H*S_q]
@group(0) @binding(7) var<storage, read_write> flag: array<atomic<u32>>;

var<workgroup> sQ: array<vec4<f32>, R_MAX * D4>;
var<workgroup> sS: array<f32, R_MAX * WG>;      // [row][key in block]: scores, then p
var<workgroup> sM: array<f32, R_MAX>;           // running max per row
var<workgroup> sA: array<f32, R_MAX>;           // this block's rescale per row
var<workgroup> sL: array<f32, R_MAX>;           // running sum per row
var<workgroup> sR: array<f32, WG>;              // reduction scratch
var<workgroup> sLen: u32;                        // the cache length, clamped

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let g = wg_flat(wid, nwg);
    if (g >= P.n_groups) { return; } // uniform per workgroup
    let split = g / (P.n_b * P.h_kv);
    let bk = g - split * P.n_b * P.h_kv; // b * h_kv + kv head
    let b = bk / P.h_kv;
    let kvh = bk - b * P.h_kv;
    let R = P.group * P.s_q;
    let len = seqlens[b];
    if ((len < 0 || u32(len) > P.s_kv) && tid == 0u) {
        if (atomicCompareExchangeWeak(&flag[0], 0u, 1u).exchanged) {
            atomicStore(&flag[1], bitcast<u32>(len));
            atomicStore(&flag[2], b);
            atomicStore(&flag[3], P.s_kv + 1u);
        }
    }
    if (tid == 0u) { sLen = u32(clamp(len, 0, i32(P.s_kv))); }
    let L = workgroupUniformLoad(&sLen); // uniform: the block loop below has barriers
    let k0 = split * P.kv_chunk;
    let k1 = min(L, k0 + P.kv_chunk);

    // the R query rows: row r = gi * S_q + i is q head kvh * group + gi at position i
    for (var x = tid; x < R * D4; x += WG) {
        let r = x / D4;
        let gi = r / P.s_q;
        let i = r - gi * P.s_q;
        let qrow = (b * P.h + kvh * P.group + gi) * P.s_q + i;
        sQ[x] = ld4(q[qrow * D4 + (x - r * D4)]) * P.qscale;
    }
    if (tid < R_MAX) {
        sM[tid] = NEG_MAX;
        sL[tid] = 0.0;
    }
    let kv_base = (b * P.h_kv + kvh) * P.s_kv * D4;
    // phase-3 role: output vec4 d4 of row r3 (threads past R * D4 idle there)
    let r3 = tid / D4;
    let d3 = tid - r3 * D4;
    var o = vec4<f32>(0.0);
    workgroupBarrier();

    for (var blk = k0; blk < k1; blk += WG) {
        // 1. scores of key blk + tid
        let j = blk + tid;
        for (var r = 0u; r < R; r++) { sS[r * WG + tid] = NEG_MAX; }
        if (j < k1) {
            var acc: array<f32, R_MAX>;
            for (var r = 0u; r < R_MAX; r++) { acc[r] = 0.0; }
            for (var x = 0u; x < D4; x++) {
                let kk = ld4(k[kv_base + j * D4 + x]);
                for (var r = 0u; r < R_MAX; r++) {
                    if (r < R) { acc[r] += dot(sQ[r * D4 + x], kk); }
                }
            }
            for (var r = 0u; r < R; r++) {
                let i = r % P.s_q;
                // causal: position i of the S_q new rows sees keys <= i + L - S_q
                let visible = P.causal == 0u || i32(j) <= i32(i) + i32(L) - i32(P.s_q);
                if (visible) { sS[r * WG + tid] = acc[r]; }
            }
        }
        workgroupBarrier();
        // 2. per row: block max, rescale, p = exp2(s - m), block sum
        for (var r = 0u; r < R; r++) {
            sR[tid] = sS[r * WG + tid];
            workgroupBarrier();
            for (var s = WG / 2u; s > 0u; s >>= 1u) {
                if (tid < s) { sR[tid] = max(sR[tid], sR[tid + s]); }
                workgroupBarrier();
            }
            let m_old = sM[r];
            let m_new = max(m_old, sR[0]);
            let sv = sS[r * WG + tid];
            let pv = select(0.0, exp2(sv - m_new), sv > NEG_INF_LIKE);
            sS[r * WG + tid] = pv;
            workgroupBarrier();
            sR[tid] = pv;
            workgroupBarrier();
            for (var s = WG / 2u; s > 0u; s >>= 1u) {
                if (tid < s) { sR[tid] += sR[tid + s]; }
                workgroupBarrier();
            }
            if (tid == 0u) {
                let alpha = exp2(m_old - m_new);
                sA[r] = alpha;
                sL[r] = sL[r] * alpha + sR[0];
                sM[r] = m_new;
            }
            workgroupBarrier();
        }
        // 3. o += p . V over the block's keys
        if (r3 < R) {
            o *= sA[r3];
            let n = min(WG, k1 - blk);
            for (var c = 0u; c < n; c++) {
                o += sS[r3 * WG + c] * ld4(v[kv_base + (blk + c) * D4 + d3]);
            }
        }
        workgroupBarrier();
    }

    // partials of this split (a split with no key keeps m = -FLT_MAX, l = 0)
    if (r3 < R) {
        let gi = r3 / P.s_q;
        let i = r3 - gi * P.s_q;
        let row = (b * P.h + kvh * P.group + gi) * P.s_q + i;
        let prow = split * P.n_rows + row;
        part_o[prow * D4 + d3] = o;
        if (d3 == 0u) { part_ml[prow] = vec2<f32>(sM[r3], sL[r3]); }
    }
}
