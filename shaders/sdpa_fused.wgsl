// sdpa_fused: single-pass attention (flash attention) with an online softmax.
//
// The host prepends consts: D4 (= D / 4), KE (keys per thread, 2 or 4),
// OJ (= ceil(D4 / TX)) and PF (prefetch vec4s per thread): sizes of register
// arrays, which WGSL wants at shader-creation time. It also defines
// row_max_sg(x): the max over the TX lanes of a row, with subgroup shuffles
// when USE_SG (the prelude then starts with "enable subgroups;"), else a
// stub that is never called.
//
// One workgroup owns BR = 4*TY query rows of one (batch, head) and walks the
// keys in tiles of BC = KE*TX. Thread (ly, lx) keeps a 4xKE block of scores
// (rows 4ly+i, keys lx+TX*e) and a 4-row x OJ-vec4 block of the output
// (columns lx+TX*jj): every vec4 read from workgroup memory feeds 4 to 16
// FMAs. K and V take turns in one buffer, so the Q tile stays resident and
// D=128 still fits 48 KiB. Rows of sQ/sKV are padded by one vec4 so that
// the 8 lanes of a quarter-warp read 8 different banks.
//
// Scores are in log2 units: q is pre-scaled by scale*log2(e), exp2 replaces
// exp. The running max starts at -FLT_MAX, so exp2(s - m) is never
// exp2(-inf + inf); a row masked everywhere keeps l == 0 and is written as 0.
struct Params {
    n_groups: u32, // B*H*n_qtiles workgroups (2-D fold)
    n_qtiles: u32, // ceil(S_q / BR)
    s_q: u32,
    s_kv: u32,
    qscale: f32,   // scale * log2(e)
    kv_chunk: u32, // keys per split (SPLIT), a multiple of BC
    n_bh: u32,     // B*H
    _pad: u32,
}

override TY: u32 = 16u;
override TX: u32 = 8u;
override HAS_MASK: bool = false;
override SACC: bool = false;
override PREFETCH: bool = false;
// SPLIT: split-KV for few query rows. Workgroup (split, bh, q-tile) covers
// keys [split*kv_chunk, +kv_chunk) and writes its unnormalised output to
// out (as [split][bh][row][d4]) and its row max and sum to part_ml;
// sdpa_fused_reduce combines the splits.
override SPLIT: bool = false;
// SEP_KV: K and V get their own buffers (when they fit): 3 barriers a tile
// with USE_SG instead of 4. USE_SG: row maxima by subgroup shuffles
// instead of a pass through workgroup memory (needs TX lanes of a row in one
// subgroup: the host checks the subgroup size).
override SEP_KV: bool = false;
override SEPF: u32 = 0u; // 1 when SEP_KV: sizes sVs
override USE_SG: bool = false;

const NEG_MAX: f32 = -3.40282346638528859812e38;
const LOG2E: f32 = 1.44269504088896340736;
const RS: u32 = D4 + 1u; // padded row stride of sQ and sKV, in vec4

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> part_ml: array<vec2<f32>>;

var<workgroup> sQ: array<vec4<f32>, 4u * TY * RS>;      // [row][d4], pre-scaled
var<workgroup> sKV: array<vec4<f32>, KE * TX * RS>;     // [key][d4]: K, then V (K only if SEP_KV)
var<workgroup> sVs: array<vec4<f32>, KE * TX * RS * SEPF + 1u>; // [key][d4]: V if SEP_KV
var<workgroup> sP: array<vec4<f32>, KE * TX * (TY + 1u)>; // [key][ly] p of rows 4ly..
var<workgroup> sR: array<vec4<f32>, TY * TX>;           // [ly][lx] row-partial max / sum

// Loads this thread's share of the K and V tile starting at key kv0 (zeros
// past S_kv) into registers.
fn load_tile(pk: ptr<function, array<vec4<f32>, PF>>, pv: ptr<function, array<vec4<f32>, PF>>,
             kv0: u32, kv_end: u32, kv_base: u32, tid: u32) {
    let NT = TX * TY;
    let BC = KE * TX;
    for (var u = 0u; u < PF; u++) {
        let i = tid + u * NT;
        let c = i / D4;
        var kk = vec4<f32>(0.0);
        var vv = vec4<f32>(0.0);
        if (i < BC * D4 && kv0 + c < kv_end) {
            kk = k[kv_base + kv0 * D4 + i];
            vv = v[kv_base + kv0 * D4 + i];
        }
        (*pk)[u] = kk;
        (*pv)[u] = vv;
    }
}

@compute @workgroup_size(TX, TY)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid3: vec3<u32>) {
    let flat = wid.y * nwg.x + wid.x;
    if (flat >= P.n_groups) { return; } // uniform per workgroup
    let lx = lid3.x;
    let ly = lid3.y;
    let tid = ly * TX + lx;
    let NT = TX * TY;
    let BR = 4u * TY;
    let BC = KE * TX;
    let split = flat / (P.n_bh * P.n_qtiles);
    let rest = flat - split * P.n_bh * P.n_qtiles;
    let bh = rest / P.n_qtiles;
    let row0 = (rest - bh * P.n_qtiles) * BR;
    var kv_start = 0u;
    var kv_end = P.s_kv;
    if (SPLIT) {
        kv_start = split * P.kv_chunk;
        kv_end = min(P.s_kv, kv_start + P.kv_chunk);
    }
    let q_base = (bh * P.s_q + row0) * D4;
    let kv_base = bh * P.s_kv * D4;

    // Q tile, pre-scaled; rows past S_q read as zeros.
    for (var i = tid; i < BR * D4; i += NT) {
        let r = i / D4;
        var val = vec4<f32>(0.0);
        if (row0 + r < P.s_q) { val = q[q_base + i] * P.qscale; }
        sQ[r * RS + (i - r * D4)] = val;
    }

    var o: array<array<vec4<f32>, OJ>, 4>;
    for (var i = 0u; i < 4u; i++) {
        for (var jj = 0u; jj < OJ; jj++) { o[i][jj] = vec4<f32>(0.0); }
    }
    var m = vec4<f32>(NEG_MAX);
    var l = vec4<f32>(0.0);

    // PREFETCH: this thread's share of the next K and V tiles waits in
    // registers while the current tile is computed (PF = BC*D4/NT vec4).
    var pk: array<vec4<f32>, PF>;
    var pv: array<vec4<f32>, PF>;
    if (PREFETCH) { load_tile(&pk, &pv, kv_start, kv_end, kv_base, tid); }
    for (var kv0 = kv_start; kv0 < kv_end; kv0 += BC) {
        let n_keys = min(BC, kv_end - kv0);
        if (PREFETCH) {
            for (var u = 0u; u < PF; u++) {
                let i = tid + u * NT;
                if (i < BC * D4) {
                    let c = i / D4;
                    sKV[c * RS + (i - c * D4)] = pk[u];
                    if (SEP_KV) { sVs[c * RS + (i - c * D4)] = pv[u]; }
                }
            }
        } else {
            for (var i = tid; i < BC * D4; i += NT) {
                let c = i / D4;
                var kk = vec4<f32>(0.0);
                if (c < n_keys) { kk = k[kv_base + kv0 * D4 + i]; }
                sKV[c * RS + (i - c * D4)] = kk;
                if (SEP_KV) {
                    var vv = vec4<f32>(0.0);
                    if (c < n_keys) { vv = v[kv_base + kv0 * D4 + i]; }
                    sVs[c * RS + (i - c * D4)] = vv;
                }
            }
        }
        workgroupBarrier();
        if (PREFETCH && SEP_KV) { load_tile(&pk, &pv, kv0 + BC, kv_end, kv_base, tid); }

        // s[i][e]: row 4ly+i against key lx+TX*e (e < KE; the rest stay 0).
        var s: array<vec4<f32>, 4>;
        for (var i = 0u; i < 4u; i++) { s[i] = vec4<f32>(0.0); }
        if (SACC) {
            // vec4 partial sums: pure FMAs in the loop, one reduction after.
            var a: array<array<vec4<f32>, KE>, 4>;
            for (var i = 0u; i < 4u; i++) {
                for (var e = 0u; e < KE; e++) { a[i][e] = vec4<f32>(0.0); }
            }
            for (var j = 0u; j < D4; j++) {
                var kk: array<vec4<f32>, KE>;
                for (var e = 0u; e < KE; e++) { kk[e] = sKV[(lx + e * TX) * RS + j]; }
                for (var i = 0u; i < 4u; i++) {
                    let qv = sQ[(4u * ly + i) * RS + j];
                    for (var e = 0u; e < KE; e++) { a[i][e] = fma(qv, kk[e], a[i][e]); }
                }
            }
            for (var i = 0u; i < 4u; i++) {
                for (var e = 0u; e < KE; e++) { s[i][e] = dot(a[i][e], vec4<f32>(1.0)); }
            }
        } else {
            for (var j = 0u; j < D4; j++) {
                var kk: array<vec4<f32>, KE>;
                for (var e = 0u; e < KE; e++) { kk[e] = sKV[(lx + e * TX) * RS + j]; }
                for (var i = 0u; i < 4u; i++) {
                    let qv = sQ[(4u * ly + i) * RS + j];
                    for (var e = 0u; e < KE; e++) { s[i][e] += dot(qv, kk[e]); }
                }
            }
        }

        let valid = vec4<bool>((lx < n_keys), (lx + TX < n_keys), (KE > 2u) && (lx + 2u * TX < n_keys),
                               (KE > 2u) && (lx + 3u * TX < n_keys));
        if (HAS_MASK) {
            for (var i = 0u; i < 4u; i++) {
                let row = row0 + 4u * ly + i;
                if (row < P.s_q) {
                    let mrow = (bh * P.s_q + row) * P.s_kv + kv0 + lx;
                    for (var e = 0u; e < 4u; e++) {
                        if (valid[e]) {
                            let mv = mask[mrow + e * TX];
                            let ml = mv * LOG2E;
                            // A finite mask must stay finite in log2 units.
                            s[i][e] += select(ml, NEG_MAX, ml < NEG_MAX && mv >= NEG_MAX);
                        }
                    }
                }
            }
        }
        var pm = vec4<f32>(NEG_MAX);
        for (var i = 0u; i < 4u; i++) {
            let si = select(vec4<f32>(NEG_MAX), s[i], valid);
            pm[i] = max(max(si.x, si.y), max(si.z, si.w));
        }
        var mt = m;
        if (USE_SG) {
            mt = max(m, row_max_sg(pm));
        } else {
            sR[ly * TX + lx] = pm;
        }
        if (!(USE_SG && SEP_KV)) {
            workgroupBarrier(); // K reads done, partial maxima visible
        }
        if (!USE_SG) {
            for (var x = 0u; x < TX; x++) { mt = max(mt, sR[ly * TX + x]); }
        }

        if (SEP_KV) {
        } else if (PREFETCH) {
            for (var u = 0u; u < PF; u++) {
                let i = tid + u * NT;
                if (i < BC * D4) { let c = i / D4; sKV[c * RS + (i - c * D4)] = pv[u]; }
            }
            load_tile(&pk, &pv, kv0 + BC, kv_end, kv_base, tid);
        } else {
            for (var i = tid; i < BC * D4; i += NT) {
                let c = i / D4;
                var vv = vec4<f32>(0.0);
                if (c < n_keys) { vv = v[kv_base + kv0 * D4 + i]; }
                sKV[c * RS + (i - c * D4)] = vv;
            }
        }
        let alpha = exp2(m - mt);
        m = mt;
        var p: array<vec4<f32>, 4>;
        for (var i = 0u; i < 4u; i++) {
            p[i] = select(vec4<f32>(0.0), exp2(s[i] - mt[i]), valid);
            l[i] = l[i] * alpha[i] + (p[i].x + p[i].y + p[i].z + p[i].w);
        }
        for (var e = 0u; e < KE; e++) {
            sP[(lx + e * TX) * (TY + 1u) + ly] = vec4<f32>(p[0][e], p[1][e], p[2][e], p[3][e]);
        }
        for (var i = 0u; i < 4u; i++) {
            for (var jj = 0u; jj < OJ; jj++) { o[i][jj] *= alpha[i]; }
        }
        workgroupBarrier(); // V and P visible

        for (var c = 0u; c < BC; c++) {
            let pv = sP[c * (TY + 1u) + ly];
            for (var jj = 0u; jj < OJ; jj++) {
                let j = lx + TX * jj;
                if (OJ * TX == D4 || j < D4) {
                    var vv: vec4<f32>;
                    if (SEP_KV) { vv = sVs[c * RS + j]; } else { vv = sKV[c * RS + j]; }
                    o[0][jj] += pv.x * vv;
                    o[1][jj] += pv.y * vv;
                    o[2][jj] += pv.z * vv;
                    o[3][jj] += pv.w * vv;
                }
            }
        }
        workgroupBarrier(); // sKV, sP and sR free for the next tile
    }

    // Each thread summed l over its own keys only: add up the row's partials.
    sR[ly * TX + lx] = l;
    workgroupBarrier();
    var lt = vec4<f32>(0.0);
    for (var x = 0u; x < TX; x++) { lt += sR[ly * TX + x]; }
    for (var i = 0u; i < 4u; i++) {
        let row = row0 + 4u * ly + i;
        if (SPLIT && row < P.s_q) {
            let prow = (split * P.n_bh + bh) * P.s_q + row;
            if (lx == 0u) { part_ml[prow] = vec2<f32>(m[i], lt[i]); }
            for (var jj = 0u; jj < OJ; jj++) {
                let j = lx + TX * jj;
                if (j < D4) { out[prow * D4 + j] = o[i][jj]; }
            }
        } else if (row < P.s_q) {
            let inv = select(0.0, 1.0 / lt[i], lt[i] > 0.0);
            for (var jj = 0u; jj < OJ; jj++) {
                let j = lx + TX * jj;
                if (j < D4) { out[q_base + (4u * ly + i) * D4 + j] = o[i][jj] * inv; }
            }
        }
    }
}
