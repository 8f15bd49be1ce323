// sdpa_fused: single-pass attention (flash attention) with an online softmax.
//
// The host prepends two consts: D4 (= D / 4) and OJ (= ceil(D4 / TX)), the
// sizes of register arrays, which WGSL wants at shader-creation time.
//
// One workgroup owns BR = 4*TY query rows of one (batch, head) and walks the
// keys in tiles of BC = 4*TX. Thread (ly, lx) keeps a 4x4 block of scores
// (rows 4ly.., keys 4lx..) and a 4-row x OJ-vec4 block of the output
// (columns lx + TX*jj), so every operand read from workgroup memory feeds
// 4 FMAs per component. Scores are in log2 units: q is pre-scaled by
// scale*log2(e) and the softmax uses exp2. The running max starts at -FLT_MAX
// so exp2(s - m) is never exp2(-inf + inf); a row masked everywhere keeps
// l == 0 and is written as zeros.
struct Params {
    n_groups: u32, // B*H*n_qtiles workgroups (2-D fold)
    n_qtiles: u32, // ceil(S_q / BR)
    s_q: u32,
    s_kv: u32,
    qscale: f32,   // scale * log2(e)
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

override TY: u32 = 16u;
override TX: u32 = 8u;
override HAS_MASK: bool = false;

const NEG_MAX: f32 = -3.40282346638528859812e38;
const LOG2E: f32 = 1.44269504088896340736;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> mask: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;

var<workgroup> sQ: array<vec4<f32>, 4u * D4 * TY>;   // [d][ly] -> rows 4ly..4ly+3 at dim d
var<workgroup> sK: array<vec4<f32>, 4u * D4 * TX>;   // [d][lx] -> keys 4lx..4lx+3 at dim d
var<workgroup> sV: array<vec4<f32>, 4u * TX * D4>;   // [c][j]  -> v[c, 4j..4j+3]
var<workgroup> sP: array<vec4<f32>, 4u * TX * TY>;   // [c][ly] -> p of rows 4ly.. at key c
var<workgroup> sR: array<vec4<f32>, TY * TX>;        // [ly][lx] row-partial max / sum

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
    let BC = 4u * TX;
    let bh = flat / P.n_qtiles;
    let row0 = (flat - bh * P.n_qtiles) * BR;
    let q_base = (bh * P.s_q + row0) * D4;
    let kv_base = bh * P.s_kv * D4;

    // Q tile, transposed and pre-scaled; rows past S_q read as zeros.
    for (var i = tid; i < BR * D4; i += NT) {
        let r = i / D4;
        let j = i - r * D4;
        var val = vec4<f32>(0.0);
        if (row0 + r < P.s_q) { val = q[q_base + i] * P.qscale; }
        let slot = r / 4u;
        let e = r % 4u;
        sQ[(4u * j + 0u) * TY + slot][e] = val.x;
        sQ[(4u * j + 1u) * TY + slot][e] = val.y;
        sQ[(4u * j + 2u) * TY + slot][e] = val.z;
        sQ[(4u * j + 3u) * TY + slot][e] = val.w;
    }

    var o: array<array<vec4<f32>, OJ>, 4>;
    for (var i = 0u; i < 4u; i++) {
        for (var jj = 0u; jj < OJ; jj++) { o[i][jj] = vec4<f32>(0.0); }
    }
    var m = vec4<f32>(NEG_MAX);
    var l = vec4<f32>(0.0);

    for (var kv0 = 0u; kv0 < P.s_kv; kv0 += BC) {
        // K tile transposed (key index fastest: conflict-free stores), V tile
        // row-major (coalesced). Keys past S_kv read as zeros.
        for (var i = tid; i < BC * D4; i += NT) {
            let j = i / BC;
            let c = i - j * BC;
            var kk = vec4<f32>(0.0);
            if (kv0 + c < P.s_kv) { kk = k[kv_base + (kv0 + c) * D4 + j]; }
            let slot = c / 4u;
            let e = c % 4u;
            sK[(4u * j + 0u) * TX + slot][e] = kk.x;
            sK[(4u * j + 1u) * TX + slot][e] = kk.y;
            sK[(4u * j + 2u) * TX + slot][e] = kk.z;
            sK[(4u * j + 3u) * TX + slot][e] = kk.w;
        }
        for (var i = tid; i < BC * D4; i += NT) {
            let c = i / D4;
            var vv = vec4<f32>(0.0);
            if (kv0 + c < P.s_kv) { vv = v[kv_base + kv0 * D4 + i]; }
            sV[i] = vv;
        }
        workgroupBarrier();

        // S block: s[i] holds row 4ly+i against keys 4lx..4lx+3.
        var s: array<vec4<f32>, 4>;
        s[0] = vec4<f32>(0.0);
        s[1] = vec4<f32>(0.0);
        s[2] = vec4<f32>(0.0);
        s[3] = vec4<f32>(0.0);
        for (var d = 0u; d < 4u * D4; d++) {
            let qv = sQ[d * TY + ly];
            let kv = sK[d * TX + lx];
            s[0] += qv.x * kv;
            s[1] += qv.y * kv;
            s[2] += qv.z * kv;
            s[3] += qv.w * kv;
        }

        let c0 = kv0 + 4u * lx;
        let valid = vec4<bool>(c0 < P.s_kv, c0 + 1u < P.s_kv, c0 + 2u < P.s_kv, c0 + 3u < P.s_kv);
        if (HAS_MASK) {
            for (var i = 0u; i < 4u; i++) {
                let row = row0 + 4u * ly + i;
                if (row < P.s_q) {
                    let mrow = (bh * P.s_q + row) * P.s_kv;
                    for (var e = 0u; e < 4u; e++) {
                        if (c0 + e < P.s_kv) {
                            let mv = mask[mrow + c0 + e];
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
        sR[ly * TX + lx] = pm;
        workgroupBarrier();
        var mt = m;
        for (var x = 0u; x < TX; x++) { mt = max(mt, sR[ly * TX + x]); }
        let alpha = exp2(m - mt);
        m = mt;
        var p: array<vec4<f32>, 4>;
        for (var i = 0u; i < 4u; i++) {
            p[i] = select(vec4<f32>(0.0), exp2(s[i] - mt[i]), valid);
            l[i] = l[i] * alpha[i] + (p[i].x + p[i].y + p[i].z + p[i].w);
        }
        for (var e = 0u; e < 4u; e++) {
            sP[(4u * lx + e) * TY + ly] = vec4<f32>(p[0][e], p[1][e], p[2][e], p[3][e]);
        }
        for (var i = 0u; i < 4u; i++) {
            for (var jj = 0u; jj < OJ; jj++) { o[i][jj] *= alpha[i]; }
        }
        workgroupBarrier();

        for (var c = 0u; c < BC; c++) {
            let pv = sP[c * TY + ly];
            for (var jj = 0u; jj < OJ; jj++) {
                let j = lx + TX * jj;
                if (OJ * TX == D4 || j < D4) {
                    let vv = sV[c * D4 + j];
                    o[0][jj] += pv.x * vv;
                    o[1][jj] += pv.y * vv;
                    o[2][jj] += pv.z * vv;
                    o[3][jj] += pv.w * vv;
                }
            }
        }
        workgroupBarrier();
    }

    // Each thread summed l over its own keys only: add up the row's partials.
    sR[ly * TX + lx] = l;
    workgroupBarrier();
    var lt = vec4<f32>(0.0);
    for (var x = 0u; x < TX; x++) { lt += sR[ly * TX + x]; }
    for (var i = 0u; i < 4u; i++) {
        let row = row0 + 4u * ly + i;
        if (row < P.s_q) {
            let inv = select(0.0, 1.0 / lt[i], lt[i] > 0.0);
            for (var jj = 0u; jj < OJ; jj++) {
                let j = lx + TX * jj;
                if (j < D4) { out[q_base + (4u * ly + i) * D4 + j] = o[i][jj] * inv; }
            }
        }
    }
}
