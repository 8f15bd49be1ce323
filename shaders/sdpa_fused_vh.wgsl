// sdpa_fused_vh: flash attention (online softmax, as sdpa_fused.wgsl) for
// D = 128's long sequences on GPUs (src/ops/sdpa_fused.c vh_tile), with Q
// resident in workgroup memory and V staged in two halves of D, so that a
// tile of 64 query rows x 32 keys fits 48 KiB: sQ [BR][D4] (pre-scaled),
// then one region that holds the K tile [BC][D4] (d4 index XORed with the
// key's low 3 bits, so 8 lanes reading 8 keys hit different banks) during
// the scores, and afterwards a V half [BC][DH] beside P [row group][BC].
// Six barriers a key tile. Thread (ly, lx) scores rows RM*ly .. +RM-1
// against keys lx and lx + TX (KE = 2) and keeps the output columns lx and
// lx + TX (one per half of D: D4 = 2 * TX) in two arrays, o0 and o1 (one
// array indexed by the half went to local memory on NVIDIA's compiler).
// No mask, no causal rows, no splits, no KV cache (the host checks); the row
// maxima and sums by subgroup shuffles (a row's TX lanes in one subgroup).
// Rows past S_q read zeros and are not written; keys past S_kv read zeros
// and count for nothing. q, k, v and out by their strides (P.q_rs, ...), as
// in sdpa_fused.wgsl: [B, H, S, D], or sdpa_qkvpacked's qkv and out.
//
// The host prepends D4, RG, JU and CU (the score and P.V loops' unrolls),
// PFK and PFV (K's vec4s a thread; V's a thread and half), IN4/OUT4 with
// ld4/st4, Params, row_max_sg and row_sum_sg.

override TY: u32 = 8u;
override TX: u32 = 16u;

const NEG_MAX: f32 = -3.40282346638528859812e38;
const RM: u32 = 4u * RG;
const KE: u32 = 2u;
const DH: u32 = D4 / 2u;
override BC: u32 = KE * TX;
override BR: u32 = RM * TY;
override NT: u32 = TX * TY;
override KV0: u32 = BR * D4;
override P0: u32 = KV0 + BC * DH;
override REG: u32 = max(BC * D4, BC * DH + RG * TY * BC);

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<IN4>;
@group(0) @binding(2) var<storage, read> k: array<IN4>;
@group(0) @binding(3) var<storage, read> v: array<IN4>;
@group(0) @binding(4) var<storage, read_write> out: array<OUT4>;

var<workgroup> SM: array<vec4<f32>, KV0 + REG>;

fn k_at(key: u32, j: u32) -> u32 { return KV0 + key * D4 + (j ^ (key & 7u)); }

fn load_k(pk: ptr<function, array<vec4<f32>, PFK>>, kv0: u32, kv_end: u32, kv_base: u32, tid: u32) {
    for (var u = 0u; u < PFK; u++) {
        let i = tid + u * NT;
        let c = i / D4;
        var x = vec4<f32>(0.0);
        if (i < BC * D4 && kv0 + c < kv_end) { x = ld4(k[P.k_off + kv_base + (kv0 + c) * P.kv_rs + (i - c * D4)]); }
        (*pk)[u] = x;
    }
}

// V half h's share: element q = tid + u*NT of [BC][DH] is (key q / DH, column h*DH + q % DH)
fn load_v(pv: ptr<function, array<vec4<f32>, 2 * PFV>>, kv0: u32, kv_end: u32, kv_base: u32, tid: u32) {
    for (var h = 0u; h < 2u; h++) {
        for (var u = 0u; u < PFV; u++) {
            let i = tid + u * NT;
            let c = i / DH;
            var x = vec4<f32>(0.0);
            if (i < BC * DH && kv0 + c < kv_end) {
                x = ld4(v[P.v_off + kv_base + (kv0 + c) * P.kv_rs + h * DH + (i - c * DH)]);
            }
            (*pv)[h * PFV + u] = x;
        }
    }
}

fn store_v(pv: ptr<function, array<vec4<f32>, 2 * PFV>>, h: u32, tid: u32) {
    for (var u = 0u; u < PFV; u++) {
        let i = tid + u * NT;
        if (i < BC * DH) { SM[KV0 + i] = (*pv)[h * PFV + u]; }
    }
}

// P.V over the staged V half into oh (this thread's rows, one column)
fn pv_half(oh: ptr<function, array<vec4<f32>, RM>>, lx: u32, ly: u32) {
    for (var c0 = 0u; c0 < BC; c0 += CU) {
        for (var cu = 0u; cu < CU; cu++) {
            let c = c0 + cu;
            let vv = SM[KV0 + c * DH + lx];
            for (var g = 0u; g < RG; g++) {
                let pr = SM[P0 + (RG * ly + g) * BC + c];
                (*oh)[4u * g + 0u] = fma(vec4<f32>(pr.x), vv, (*oh)[4u * g + 0u]);
                (*oh)[4u * g + 1u] = fma(vec4<f32>(pr.y), vv, (*oh)[4u * g + 1u]);
                (*oh)[4u * g + 2u] = fma(vec4<f32>(pr.z), vv, (*oh)[4u * g + 2u]);
                (*oh)[4u * g + 3u] = fma(vec4<f32>(pr.w), vv, (*oh)[4u * g + 3u]);
            }
        }
    }
}

@compute @workgroup_size(TX, TY)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid3: vec3<u32>) {
    let flat = wid.y * nwg.x + wid.x;
    if (flat >= P.n_groups) { return; }
    let lx = lid3.x;
    let ly = lid3.y;
    let tid = ly * TX + lx;
    let bh = flat / P.n_qtiles;
    let row0 = (flat - bh * P.n_qtiles) * BR;
    let bi = bh / P.n_h;
    let hi = bh - bi * P.n_h;
    let q_base = bi * P.q_bs + hi * P.q_hs + row0 * P.q_rs;
    let kv_base = bi * P.kv_bs + (hi / P.group) * P.kv_hs;
    let o_base = bi * P.o_bs + hi * P.o_hs + row0 * P.o_rs;
    let kv_end = P.s_kv;

    for (var i = tid; i < BR * D4; i += NT) {
        let r = i / D4;
        var val = vec4<f32>(0.0);
        if (row0 + r < P.s_q) { val = ld4(q[q_base + r * P.q_rs + (i - r * D4)]) * P.qscale; }
        SM[i] = val;
    }
    var o0: array<vec4<f32>, RM>; // output columns lx (D's first half)
    var o1: array<vec4<f32>, RM>; // and lx + TX
    for (var r = 0u; r < RM; r++) {
        o0[r] = vec4<f32>(0.0);
        o1[r] = vec4<f32>(0.0);
    }
    var m: array<vec4<f32>, RG>;
    var l: array<vec4<f32>, RG>;
    for (var g = 0u; g < RG; g++) {
        m[g] = vec4<f32>(NEG_MAX);
        l[g] = vec4<f32>(0.0);
    }
    var pk: array<vec4<f32>, PFK>;
    var pv: array<vec4<f32>, 2 * PFV>;
    load_k(&pk, 0u, kv_end, kv_base, tid);
    for (var kv0 = 0u; kv0 < kv_end; kv0 += BC) {
        let n_keys = min(BC, kv_end - kv0);
        for (var u = 0u; u < PFK; u++) {
            let i = tid + u * NT;
            if (i < BC * D4) {
                let c = i / D4;
                SM[k_at(c, i - c * D4)] = pk[u];
            }
        }
        workgroupBarrier(); // (1) K (and, the first time, Q) visible
        load_v(&pv, kv0, kv_end, kv_base, tid);

        var s: array<vec4<f32>, RM>;
        for (var r = 0u; r < RM; r++) { s[r] = vec4<f32>(0.0); }
        for (var j0 = 0u; j0 < P.d4; j0 += JU) {
            for (var ju = 0u; ju < JU; ju++) {
                let j = j0 + ju;
                let k0 = SM[k_at(lx, j)];
                let k1 = SM[k_at(lx + TX, j)];
                for (var r = 0u; r < RM; r++) {
                    let qv = SM[(RM * ly + r) * D4 + j];
                    var t0 = s[r].x;
                    t0 = fma(qv.x, k0.x, t0);
                    t0 = fma(qv.y, k0.y, t0);
                    t0 = fma(qv.z, k0.z, t0);
                    t0 = fma(qv.w, k0.w, t0);
                    s[r].x = t0;
                    var t1 = s[r].y;
                    t1 = fma(qv.x, k1.x, t1);
                    t1 = fma(qv.y, k1.y, t1);
                    t1 = fma(qv.z, k1.z, t1);
                    t1 = fma(qv.w, k1.w, t1);
                    s[r].y = t1;
                }
            }
        }
        let valid = vec2<bool>((lx < n_keys), (lx + TX < n_keys));
        var p: array<array<vec4<f32>, 4>, RG>; // [g][i], keys in .x .y
        for (var g = 0u; g < RG; g++) {
            var pm = vec4<f32>(NEG_MAX);
            for (var i = 0u; i < 4u; i++) {
                let si = select(vec2<f32>(NEG_MAX), s[4u * g + i].xy, valid);
                pm[i] = max(si.x, si.y);
            }
            let mt = max(m[g], row_max_sg(pm));
            let alpha = exp2(m[g] - mt);
            m[g] = mt;
            for (var i = 0u; i < 4u; i++) {
                let e = select(vec2<f32>(0.0), exp2(s[4u * g + i].xy - vec2<f32>(mt[i])), valid);
                p[g][i] = vec4<f32>(e, 0.0, 0.0);
                l[g][i] = l[g][i] * alpha[i] + (e.x + e.y);
                o0[4u * g + i] *= alpha[i];
                o1[4u * g + i] *= alpha[i];
            }
        }
        workgroupBarrier(); // (2) K reads done
        for (var g = 0u; g < RG; g++) {
            for (var e = 0u; e < KE; e++) {
                SM[P0 + (RG * ly + g) * BC + lx + TX * e] = vec4<f32>(p[g][0][e], p[g][1][e], p[g][2][e], p[g][3][e]);
            }
        }
        store_v(&pv, 0u, tid);
        workgroupBarrier(); // (3) P and V's first half visible
        pv_half(&o0, lx, ly);
        workgroupBarrier(); // (4) the first half's reads done
        store_v(&pv, 1u, tid);
        load_k(&pk, kv0 + BC, kv_end, kv_base, tid); // the next tile's K, during the second half
        workgroupBarrier(); // (5) the second half visible
        pv_half(&o1, lx, ly);
        workgroupBarrier(); // (6) P and V reads done: the region takes the next K
    }

    for (var g = 0u; g < RG; g++) {
        let lt = row_sum_sg(l[g]);
        for (var i = 0u; i < 4u; i++) {
            let r = 4u * g + i;
            let row = row0 + RM * ly + r;
            if (row >= P.s_q) { continue; }
            let inv = select(0.0, 1.0 / lt[i], lt[i] > 0.0);
            out[o_base + (RM * ly + r) * P.o_rs + lx] = st4(o0[r] * inv);
            out[o_base + (RM * ly + r) * P.o_rs + lx + TX] = st4(o1[r] * inv);
        }
    }
}
