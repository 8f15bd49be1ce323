// sdpa_decode: attention over a KV cache for a few query rows (decoding),
// the row "sdpa_kvcache" (src/ops/sdpa_kvcache.c) when group * S_q <= R
// rows fit: one workgroup a (batch, kv head, split of the keys) takes the R
// = group * S_q query rows that read that kv head (the group's query heads,
// each at S_q positions), so K and V are read once for all of them.
//
// A subgroup (SG lanes) takes U keys at a time: lane l holds pieces
// x = l + c*SG (c < QX) of each row of q (registers) and of the keys'
// K and V rows, all 2U loads issued before any is used; a score is the
// subgroupAdd of the lanes' partial dots. Each subgroup keeps its own
// running max, sum and output per row (online softmax); the W = WG / SG
// subgroups take interleaved keys (consecutive subgroups, consecutive
// keys) and are merged through workgroup memory at the end. Partial outputs
// (unnormalised), maxima and sums go out as the fused kernel's split-KV
// partials; sdpa_fused_reduce combines the splits. Scores in log2 units (q
// pre-scaled by scale * log2 e).
//
// Subgroups are taken to be SG consecutive invocations (tid / SG), as
// reduce_rows and sdpa_fused take them; src/ops/sdpa_kvcache.c uses this
// kernel only where the subgroup size is fixed.
//
// Prelude (src/ops/sdpa_kvcache.c): enable subgroups; struct Params, consts
// D4, R, SG, WG, U, QX = ceil(D4 / SG), IN4 and ld4 (float32 or float16
// storage).
// Dispatch: n_groups = B * H_kv * n_split workgroups folded into x*y.
#include "common/grid"

const NEG_MAX: f32 = -3.40282346638528859812e38;
const W: u32 = WG / SG;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<IN4>;   // [B, H, S_q, D4]
@group(0) @binding(2) var<storage, read> k: array<IN4>;   // [B, H_kv, S_max, D4]
@group(0) @binding(3) var<storage, read> v: array<IN4>;
@group(0) @binding(4) var<storage, read> seqlens: array<i32>;
@group(0) @binding(5) var<storage, read_write> part_o: array<vec4<f32>>; // [split][B*H*S_q][D4]
@group(0) @binding(6) var<storage, read_write> part_ml: array<vec2<f32>>; // [split][B*H*S_q]
@group(0) @binding(7) var<storage, read_write> flag: array<atomic<u32>>;

var<workgroup> sM: array<f32, W * R>;
var<workgroup> sL: array<f32, W * R>;
var<workgroup> sO: array<vec4<f32>, W * R * D4>;
var<workgroup> sLen: u32; // the cache length, clamped

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
    if (tid == 0u) {
        let len = seqlens[b];
        if (len < 0 || u32(len) > P.s_kv) {
            if (atomicCompareExchangeWeak(&flag[0], 0u, 1u).exchanged) {
                atomicStore(&flag[1], bitcast<u32>(len));
                atomicStore(&flag[2], b);
                atomicStore(&flag[3], P.s_kv + 1u);
            }
        }
        sLen = u32(clamp(len, 0, i32(P.s_kv)));
    }
    let L = workgroupUniformLoad(&sLen); // uniform: the key loop holds subgroup operations
    let k0 = split * P.kv_chunk;
    let k1 = min(L, k0 + P.kv_chunk);

    // the R query rows: row r = gi * S_q + i is q head kvh * group + gi at position i
    var qr: array<vec4<f32>, R * QX>;
    var o: array<vec4<f32>, R * QX>;
    var m: array<f32, R>;
    var l: array<f32, R>;
    for (var r = 0u; r < R; r++) {
        let gi = r / P.s_q;
        let qrow = (b * P.h + kvh * P.group + gi) * P.s_q + (r - gi * P.s_q);
        for (var c = 0u; c < QX; c++) {
            let x = lane + c * SG;
            qr[r * QX + c] = select(vec4<f32>(0.0), ld4(q[qrow * D4 + min(x, D4 - 1u)]) * P.qscale, x < D4);
            o[r * QX + c] = vec4<f32>(0.0);
        }
        m[r] = NEG_MAX;
        l[r] = 0.0;
    }
    let kv_base = (b * P.h_kv + kvh) * P.s_kv * D4;

    for (var j0 = k0; j0 < k1; j0 += W * U) {
        // U keys of this subgroup: j0 + u * W + w; K and V rows read first
        var kk: array<vec4<f32>, U * QX>;
        var vv: array<vec4<f32>, U * QX>;
        for (var u = 0u; u < U; u++) {
            let j = min(j0 + u * W + w, k1 - 1u); // past the end: a valid row, masked below
            for (var c = 0u; c < QX; c++) {
                let x = min(lane + c * SG, D4 - 1u);
                kk[u * QX + c] = ld4(k[kv_base + j * D4 + x]);
                vv[u * QX + c] = ld4(v[kv_base + j * D4 + x]);
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
                let visible = j < k1 && (P.causal == 0u || i32(j) <= i32(i) + i32(L) - i32(P.s_q));
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
        let gi = r / P.s_q;
        let row = (b * P.h + kvh * P.group + gi) * P.s_q + (r - gi * P.s_q);
        let prow = split * P.n_rows + row;
        part_o[prow * D4 + x] = acc;
        if (x == 0u) { part_ml[prow] = vec2<f32>(mx, sum); }
    }
}
