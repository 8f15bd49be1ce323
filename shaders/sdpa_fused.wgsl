// sdpa_fused: single-pass attention (flash attention) with an online softmax.
//
// The host prepends consts, sizes of register arrays that WGSL wants at
// shader-creation time: QBIAS with fn qkv_bias4 (below; binding 9 when
// true), D4 (= D / 4), KE (keys per thread, 1, 2 or 4), RG
// (row groups of 4 per thread, 1 or 2), OJ (= ceil(D4 / TX)), PF
// (prefetched vec4s per thread), SRN and SWZ (the layout of workgroup
// memory, below), and the LEAN variant's LEAN, JU, CU, QG (below); the
// aliases IN4 (four elements of q, k, v: vec4<f32>, or vec2<u32> holding
// four float16 halves) and OUT4 (four
// elements of out) with ld4(IN4) -> vec4<f32> and st4(vec4<f32>) -> OUT4
// (pack2x16float / unpack2x16float for float16: no shader-f16 needed; f32
// partials when SPLIT); accumulation is f32 either way. It also defines
// row_max_sg(x) and row_sum_sg(x), the max and the sum over the TX lanes of
// a row by subgroup shuffles when USE_SG (after "enable subgroups;"), else
// stubs that are never called.
//
// One workgroup owns BR = 4*RG*TY query rows of one (batch, head) and walks
// the keys in tiles of BC = KE*TX. Thread (ly, lx) keeps a (4*RG) x KE block
// of scores (rows 4*(RG*ly+g)+i, keys lx+TX*e) and a (4*RG)-row x OJ-vec4
// block of the output (columns lx+TX*jj): every vec4 read from workgroup
// memory feeds several FMAs, which is what bounds this kernel (shared-memory
// wavefronts, see docs/PERFORMANCE.md). K and V take turns in one buffer so
// the Q tile stays resident; the next tile's K and V wait in registers while
// the current one is computed. Rows of sQ/sKV are padded by one vec4 so that
// the lanes of a quarter-warp read different banks.
//
// LEAN (fewer registers, for tiles of 8 rows a thread or 64 rows at D=128):
// one prefetch buffer, not two: this tile's V is loaded while its scores are
// computed and the next tile's K while its P.V is; the d4 loop of the scores
// and the key loop of P.V run to bounds from the uniform (P.d4, the tile's
// keys) in steps of JU and CU unrolled, not fully unrolled over compile-time
// bounds, which keeps the compiler from hoisting loads into registers;
// scores are chains of scalar fma (no dot-then-add); with USE_SG the
// softmax runs before the barrier that frees sKV (its max and alpha are
// not kept across it) and the row sums end in shuffles, so sR takes no
// memory (SRN = 0). Otherwise SRN = RG * TY * TX.
//
// QG (LEAN only, no QBIAS): the score loop reads Q from q itself (global
// memory, through the L1 cache) instead of a staged sQ, which then takes no
// workgroup memory; the scores are scaled after the loop. That frees
// RM * TY * (D4 + 1) vec4, so that 128-row tiles fit at D = 128 (K and V
// re-read from L2 a quarter as often as with 32-row tiles).
//
// QBIAS (row sdpa_qkvpacked with the q|k|v projection's bias, qkv_bias4(i):
// vec4 i of it, [3][H][D4]): q's bias is added as Q is staged, k's drops
// out (it adds (q + b_q).b_k to every score of a row: the softmax does not
// see it), and v's is added to each output row (the weights sum to 1; with
// SPLIT sdpa_fused_reduce adds it).
//
// q, k, v and out rows are found by strides (P.q_rs, q_hs, q_bs, ...; in
// vec4s): [B, H, S, D] tensors, or row sdpa_qkvpacked's qkv [B, S, 3, H, D]
// (k and v at offsets k_off, v_off) and out [B, S, H, D]. Split partials
// stay [split][bh][row][d4].
//
// Scores are in log2 units: q is pre-scaled by scale*log2(e), exp2 replaces
// exp. The running max starts at -FLT_MAX, so exp2(s - m) is never
// exp2(-inf + inf); a row masked everywhere keeps l == 0 and is written as 0.
// Params: the host prepends it (src/ops/sdpa_fused.c, written once there).

override TY: u32 = 8u;
override TX: u32 = 16u;
override HAS_MASK: bool = false;
// SACC: score dot products as vec4 partial sums (pure FMAs in the loop).
override SACC: bool = false;
// SPLIT: split-KV for few query rows. Workgroup (split, bh, q-tile) covers
// keys [split*kv_chunk, +kv_chunk) and writes its unnormalised output to
// out (as [split][bh][row][d4]) and its row max and sum to part_ml;
// sdpa_fused_reduce combines the splits.
override SPLIT: bool = false;
// USE_SG: row maxima by subgroup shuffles instead of a pass through
// workgroup memory (the host checks that a row's TX lanes share a subgroup).
override USE_SG: bool = false;
// CAUSAL: row i sees keys j <= i + P.causal_off only (0: top-left, S_kv - S_q:
// bottom-right). Key tiles past the tile's last row's limit are not visited;
// the boundary tile is masked per element (a hidden key's p is 0, as a key
// past S_kv).
override CAUSAL: bool = false;
// KVLEN: a KV cache (row sdpa_kvcache): batch element b has only its first
// L = cache_seqlens[b] keys (of S_kv allocated), and with CAUSAL the q rows
// are its last S_q positions: row i sees keys j < L with j <= i + L - S_q.
// An L outside [0, S_kv] is clamped and recorded in the data-error words.
override KVLEN: bool = false;

#include "common/data_err"

const NEG_MAX: f32 = -3.40282346638528859812e38;
const LOG2E: f32 = 1.44269504088896340736;
const RS: u32 = D4 + 1u; // padded row stride of sQ and sKV, in vec4
const RM: u32 = 4u * RG; // rows per thread

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<IN4>;
@group(0) @binding(2) var<storage, read> k: array<IN4>;
@group(0) @binding(3) var<storage, read> v: array<IN4>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<OUT4>;
@group(0) @binding(6) var<storage, read_write> part_ml: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> seqlens: array<i32>;
@group(0) @binding(8) var<storage, read_write> flag: array<atomic<u32>>;

// Workgroup memory, one array (so that a tile that needs no sQ or sR takes
// none of it): sQ [row][d4] pre-scaled (none with QG), sKV [key][d4] (K,
// then V), sP [key][row group], sR [row group][lx] partial max / sum (SRN
// entries; 0 where unused). SWZ: rows unpadded, sKV's d4 index XORed with
// the key's low 3 bits (so that 8 lanes reading 8 keys' same d4 still hit
// different banks; D4 a multiple of 8) and sP as [row group][key]: the
// layout that fits 48 KiB for 64-key tiles at D=64.
const QRS: u32 = select(RS, D4, SWZ); // row strides of sQ, sKV
const KRS: u32 = select(RS, D4, SWZ);
override Q_N: u32 = select(RM * TY * QRS, 0u, QG);
override KV0: u32 = Q_N;
override P0: u32 = KV0 + KE * TX * KRS;
override R0: u32 = P0 + KE * TX * (RG * TY + select(1u, 0u, SWZ));
var<workgroup> SM: array<vec4<f32>, max(1u, R0 + SRN)>;

fn sq_at(row: u32, j: u32) -> u32 { return row * QRS + j; }
fn kv_at(key: u32, j: u32) -> u32 {
    if (SWZ) { return KV0 + key * KRS + (j ^ (key & 7u)); }
    return KV0 + key * KRS + j;
}
fn sp_at(key: u32, rg: u32) -> u32 {
    if (SWZ) { return P0 + rg * KE * TX + key; }
    return P0 + key * (RG * TY + 1u) + rg;
}
fn sr_at(i: u32) -> u32 { return R0 + i; }

// This thread's share of the K (from_v false) or V tile starting at key kv0
// (zeros past kv_end), into registers (LEAN).
fn load_one(pf: ptr<function, array<vec4<f32>, PF>>, from_v: bool, kv0: u32, kv_end: u32, kv_base: u32, tid: u32) {
    let NT = TX * TY;
    let BC = KE * TX;
    for (var u = 0u; u < PF; u++) {
        let i = tid + u * NT;
        let c = i / D4;
        var x = vec4<f32>(0.0);
        if (i < BC * D4 && kv0 + c < kv_end) {
            let at = kv_base + (kv0 + c) * P.kv_rs + (i - c * D4);
            if (from_v) { x = ld4(v[P.v_off + at]); } else { x = ld4(k[P.k_off + at]); }
        }
        (*pf)[u] = x;
    }
}

// This thread's share of the K and V tile starting at key kv0 (zeros past
// kv_end), into registers.
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
            let at = kv_base + (kv0 + c) * P.kv_rs + (i - c * D4);
            kk = ld4(k[P.k_off + at]);
            vv = ld4(v[P.v_off + at]);
        }
        (*pk)[u] = kk;
        (*pv)[u] = vv;
    }
}

fn store_tile(p: ptr<function, array<vec4<f32>, PF>>, tid: u32) {
    let NT = TX * TY;
    for (var u = 0u; u < PF; u++) {
        let i = tid + u * NT;
        if (i < KE * TX * D4) {
            let c = i / D4;
            SM[kv_at(c, i - c * D4)] = (*p)[u];
        }
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
    let BR = RM * TY;
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
    var coff = P.causal_off;
    if (KVLEN) {
        let b = (P.bh_base + bh) / P.n_h;
        let len = seqlens[b];
        if ((len < 0 || u32(len) > P.s_kv) && lx == 0u && ly == 0u) {
            data_err(DATA_ERR_SEQLEN, bitcast<u32>(len), b, P.s_kv + 1u);
        }
        let L = u32(clamp(len, 0, i32(P.s_kv)));
        kv_end = min(kv_end, L);
        coff = i32(L) - i32(P.s_q);
    }
    if (CAUSAL) { // keys the tile's last row can see: [0, last + coff + 1)
        let vis = i32(min(row0 + BR, P.s_q)) + coff;
        kv_end = min(kv_end, u32(max(vis, i32(kv_start))));
    }
    // (batch, head) of this workgroup's rows; q, k, v and out by their
    // strides (vec4s): [B, H, S, D] as they come, or qkv packed [B, S, 3, H, D]
    // with out [B, S, H, D] (row sdpa_qkvpacked)
    let bi = bh / P.n_h;
    let hi = bh - bi * P.n_h;
    let q_base = bi * P.q_bs + hi * P.q_hs + row0 * P.q_rs;
    let kv_base = bi * P.kv_bs + (hi / P.group) * P.kv_hs; // grouped-query attention: kv head by index
    let o_base = bi * P.o_bs + hi * P.o_hs + row0 * P.o_rs;

    // Q tile, pre-scaled; rows past S_q read as zeros. QG: where this
    // thread's rows start in q (rows past S_q read the last row's values:
    // never written out).
    var qrow: array<u32, RM>;
    for (var r = 0u; r < RM; r++) { qrow[r] = q_base + min(RM * ly + r, P.s_q - 1u - row0) * P.q_rs; }
    for (var i = tid; i < select(BR * D4, 0u, QG); i += NT) {
        let r = i / D4;
        var val = vec4<f32>(0.0);
        if (row0 + r < P.s_q) {
            val = ld4(q[q_base + r * P.q_rs + (i - r * D4)]);
            if (QBIAS) { val += qkv_bias4(hi * D4 + (i - r * D4)); }
            val *= P.qscale;
        }
        SM[sq_at(r, i - r * D4)] = val;
    }

    var o: array<array<vec4<f32>, OJ>, RM>;
    for (var r = 0u; r < RM; r++) {
        for (var jj = 0u; jj < OJ; jj++) { o[r][jj] = vec4<f32>(0.0); }
    }
    var m: array<vec4<f32>, RG>; // running max of rows 4*(RG*ly+g)+0..3
    var l: array<vec4<f32>, RG>; // this thread's part of the running sum
    for (var g = 0u; g < RG; g++) {
        m[g] = vec4<f32>(NEG_MAX);
        l[g] = vec4<f32>(0.0);
    }

    var pk: array<vec4<f32>, PF>;
    var pv: array<vec4<f32>, PF>;
    if (LEAN) {
        load_one(&pk, false, kv_start, kv_end, kv_base, tid);
    } else {
        load_tile(&pk, &pv, kv_start, kv_end, kv_base, tid);
    }
    for (var kv0 = kv_start; kv0 < kv_end; kv0 += BC) {
        let n_keys = min(BC, kv_end - kv0);
        store_tile(&pk, tid);
        // This tile's mask entries, loaded now so the S loop hides their
        // latency (0 for rows and keys out of range: those are never used).
        var mk: array<vec4<f32>, RM>;
        if (HAS_MASK) {
            for (var r = 0u; r < RM; r++) {
                mk[r] = vec4<f32>(0.0);
                let row = row0 + RM * ly + r;
                let mrow = (bh * P.s_q + row) * P.s_kv + kv0 + lx;
                for (var e = 0u; e < KE; e++) {
                    if (row < P.s_q && lx + e * TX < n_keys) { mk[r][e] = mask[mrow + e * TX]; }
                }
            }
        }
        workgroupBarrier(); // K visible
        if (LEAN) { load_one(&pv, true, kv0, kv_end, kv_base, tid); } // this tile's V, while the scores are computed

        // s[r][e]: row 4*RG*ly + r against key lx+TX*e (e < KE; the rest stay 0).
        var s: array<vec4<f32>, RM>;
        for (var r = 0u; r < RM; r++) { s[r] = vec4<f32>(0.0); }
        if (LEAN && !SACC) {
            for (var j0 = 0u; j0 < P.d4; j0 += JU) {
                for (var ju = 0u; ju < JU; ju++) {
                    let j = j0 + ju;
                    var kk: array<vec4<f32>, KE>;
                    for (var e = 0u; e < KE; e++) { kk[e] = SM[kv_at(lx + e * TX, j)]; }
                    for (var r = 0u; r < RM; r++) {
                        var qv: vec4<f32>;
                        if (QG) { qv = ld4(q[qrow[r] + j]); } else { qv = SM[sq_at(RM * ly + r, j)]; }
                        for (var e = 0u; e < KE; e++) {
                            var t = s[r][e];
                            t = fma(qv.x, kk[e].x, t);
                            t = fma(qv.y, kk[e].y, t);
                            t = fma(qv.z, kk[e].z, t);
                            t = fma(qv.w, kk[e].w, t);
                            s[r][e] = t;
                        }
                    }
                }
            }
            if (QG) {
                for (var r = 0u; r < RM; r++) { s[r] *= P.qscale; }
            }
        } else if (SACC) {
            var a: array<array<vec4<f32>, KE>, RM>;
            for (var r = 0u; r < RM; r++) {
                for (var e = 0u; e < KE; e++) { a[r][e] = vec4<f32>(0.0); }
            }
            for (var j = 0u; j < D4; j++) {
                var kk: array<vec4<f32>, KE>;
                for (var e = 0u; e < KE; e++) { kk[e] = SM[kv_at(lx + e * TX, j)]; }
                for (var r = 0u; r < RM; r++) {
                    let qv = SM[sq_at(RM * ly + r, j)];
                    for (var e = 0u; e < KE; e++) { a[r][e] = fma(qv, kk[e], a[r][e]); }
                }
            }
            for (var r = 0u; r < RM; r++) {
                for (var e = 0u; e < KE; e++) { s[r][e] = dot(a[r][e], vec4<f32>(1.0)); }
            }
        } else {
            for (var j = 0u; j < D4; j++) {
                var kk: array<vec4<f32>, KE>;
                for (var e = 0u; e < KE; e++) { kk[e] = SM[kv_at(lx + e * TX, j)]; }
                for (var r = 0u; r < RM; r++) {
                    let qv = SM[sq_at(RM * ly + r, j)];
                    for (var e = 0u; e < KE; e++) { s[r][e] += dot(qv, kk[e]); }
                }
            }
        }

        // (Comparisons in parentheses: WGSL would read "a < b, ... c > d" as a template list.)
        let valid = vec4<bool>((lx < n_keys), (KE > 1u) && (lx + TX < n_keys), (KE > 2u) && (lx + 2u * TX < n_keys),
                               (KE > 2u) && (lx + 3u * TX < n_keys));
        if (HAS_MASK) {
            for (var r = 0u; r < RM; r++) {
                for (var e = 0u; e < KE; e++) {
                    let mv = mk[r][e];
                    let ml = mv * LOG2E;
                    // A finite mask must stay finite in log2 units.
                    s[r][e] += select(ml, NEG_MAX, ml < NEG_MAX && mv >= NEG_MAX);
                }
            }
        }
        // vk[r]: which of row r's keys count (valid, and within its causal limit)
        var vk: array<vec4<bool>, RM>;
        for (var r = 0u; r < RM; r++) {
            vk[r] = valid;
            if (CAUSAL) {
                let lim = i32(row0 + RM * ly + r) + coff - i32(kv0 + lx); // key lx+TX*e visible iff TX*e <= lim
                let t = i32(TX);
                vk[r] = valid & vec4<bool>((0 <= lim), (t <= lim), (2 * t <= lim), (3 * t <= lim));
            }
        }
        // LEAN with subgroup maxima: the softmax before the barrier that frees
        // sKV (sP is free since the last tile's end), so neither the scores
        // nor the new maxima live across it.
        let early = LEAN && USE_SG;
        var mt: array<vec4<f32>, RG>;
        for (var g = 0u; g < RG; g++) {
            var pm = vec4<f32>(NEG_MAX);
            for (var i = 0u; i < 4u; i++) {
                let si = select(vec4<f32>(NEG_MAX), s[4u * g + i], vk[4u * g + i]);
                pm[i] = max(max(si.x, si.y), max(si.z, si.w));
            }
            if (USE_SG) {
                mt[g] = max(m[g], row_max_sg(pm));
            } else {
                SM[sr_at((RG * ly + g) * TX + lx)] = pm;
            }
        }
        if (!early) {
            workgroupBarrier(); // K reads done (sKV free for V), partial maxima visible
            store_tile(&pv, tid);
            if (LEAN) {
                load_one(&pk, false, kv0 + BC, kv_end, kv_base, tid);
            } else {
                load_tile(&pk, &pv, kv0 + BC, kv_end, kv_base, tid);
            }
        }
        for (var g = 0u; g < RG; g++) {
            if (!USE_SG) {
                mt[g] = m[g];
                for (var x = 0u; x < TX; x++) { mt[g] = max(mt[g], SM[sr_at((RG * ly + g) * TX + x)]); }
            }
            let alpha = exp2(m[g] - mt[g]);
            m[g] = mt[g];
            var p: array<vec4<f32>, 4>;
            for (var i = 0u; i < 4u; i++) {
                p[i] = vec4<f32>(0.0);
                for (var e = 0u; e < KE; e++) { // no exp2 for the unused lanes when KE = 2
                    p[i][e] = select(0.0, exp2(s[4u * g + i][e] - mt[g][i]), vk[4u * g + i][e]);
                }
                l[g][i] = l[g][i] * alpha[i] + (p[i].x + p[i].y + p[i].z + p[i].w);
                for (var jj = 0u; jj < OJ; jj++) { o[4u * g + i][jj] *= alpha[i]; }
            }
            for (var e = 0u; e < KE; e++) {
                SM[sp_at(lx + e * TX, RG * ly + g)] = vec4<f32>(p[0][e], p[1][e], p[2][e], p[3][e]);
            }
        }
        if (early) {
            workgroupBarrier(); // K reads done (sKV free for V)
            store_tile(&pv, tid);
            load_one(&pk, false, kv0 + BC, kv_end, kv_base, tid); // the next tile's K, while P.V is computed
        }
        workgroupBarrier(); // V and P visible

        // LEAN: to the tile's last key, CU keys a step (p and V are 0 past it)
        let c_end = select(BC, min(BC, (n_keys + CU - 1u) / CU * CU), LEAN);
        for (var c0 = 0u; c0 < c_end; c0 += CU) {
            for (var cu = 0u; cu < CU; cu++) {
                let c = c0 + cu;
                var pr: array<vec4<f32>, RG>;
                for (var g = 0u; g < RG; g++) { pr[g] = SM[sp_at(c, RG * ly + g)]; }
                for (var jj = 0u; jj < OJ; jj++) {
                    let j = lx + TX * jj;
                    if (OJ * TX == D4 || j < D4) {
                        let vv = SM[kv_at(c, j)];
                        for (var g = 0u; g < RG; g++) {
                            o[4u * g + 0u][jj] += pr[g].x * vv;
                            o[4u * g + 1u][jj] += pr[g].y * vv;
                            o[4u * g + 2u][jj] += pr[g].z * vv;
                            o[4u * g + 3u][jj] += pr[g].w * vv;
                        }
                    }
                }
            }
        }
        workgroupBarrier(); // sKV, sP and sR free for the next tile
    }

    // Each thread summed l over its own keys only: add up the row's partials
    // (LEAN with subgroups: by shuffles, sR has one entry).
    if (!(LEAN && USE_SG)) {
        for (var g = 0u; g < RG; g++) { SM[sr_at((RG * ly + g) * TX + lx)] = l[g]; }
        workgroupBarrier();
    }
    for (var g = 0u; g < RG; g++) {
        var lt = vec4<f32>(0.0);
        if (LEAN && USE_SG) {
            lt = row_sum_sg(l[g]);
        } else {
            for (var x = 0u; x < TX; x++) { lt += SM[sr_at((RG * ly + g) * TX + x)]; }
        }
        for (var i = 0u; i < 4u; i++) {
            let r = 4u * g + i;
            let row = row0 + RM * ly + r;
            if (row >= P.s_q) { continue; }
            if (SPLIT) {
                let prow = (split * P.n_bh + bh) * P.s_q + row;
                if (lx == 0u) { part_ml[prow] = vec2<f32>(m[g][i], lt[i]); }
                for (var jj = 0u; jj < OJ; jj++) {
                    let j = lx + TX * jj;
                    if (j < D4) { out[prow * D4 + j] = st4(o[r][jj]); }
                }
            } else {
                let inv = select(0.0, 1.0 / lt[i], lt[i] > 0.0);
                for (var jj = 0u; jj < OJ; jj++) {
                    let j = lx + TX * jj;
                    if (j < D4) {
                        var y = o[r][jj] * inv;
                        if (QBIAS) { y += qkv_bias4((2u * P.n_h + hi) * D4 + j); }
                        out[o_base + (RM * ly + r) * P.o_rs + j] = st4(y);
                    }
                }
            }
        }
    }
}
