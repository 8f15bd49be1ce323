// gemm.wgsl - the shared GEMM (src/ops/gemm.c): for each batch b of the
// dispatch (workgroup z),
//   C(i, j) = act(alpha * sum_k A(i, k) B(k, j) + beta * bias(i, j)) + res(i, j)
// A(i, k) = A[a_off + b*a_bs + i*lda + k]    (TRANS_A: A[... + k*lda + i])
// B(k, j) = B[b_off + b*b_bs + k*ldb + j]    (TRANS_B: B[... + j*ldb + k])
// C(i, j) = C[c_off + b*c_bs + i*ldc + j]
// bias(i, j) = BIAS[bias_off + b*bias_bs + i*bias_rs + j*bias_cs]
// res(i, j) = RES[res_off + b*res_bs + i*ldr + j] (HAS_RES: a residual)
// (offsets, strides in elements; B may hold IEEE halves, two per u32,
// read with unpack2x16float: f16 storage without shader-f16).
//
// Register blocking: a workgroup of WX x WY threads computes a BM x BN tile
// (BM = WY*TM, BN = WX*TN); thread (tx, ty) owns rows ty*TM .. ty*TM+TM-1
// and the TN/4 column quads (c*WX + tx)*4 for c < TN/4, kept as TM*TN/4
// vec4 accumulators (BIAS_INIT: a bias of one row, bias_rs = 0, starts
// them at beta / alpha * bias(j), alpha != 0, so that the epilogue adds
// none: faster than store_all's bias on every tile, see src/ops/gemm.c).
// Per k step it reads TM/4 vec4 of A (broadcast within a
// warp: lanes of one ty share them) and TN/4 vec4 of B (consecutive lanes,
// consecutive quads) from workgroup memory for TM*TN FMAs: rows and columns
// per thread are what keep workgroup-memory bandwidth below the FMA rate.
// K runs in BK-deep tiles staged in workgroup memory (A transposed to
// k-major; rows padded by 4 floats so the transposing stores do not all hit
// one bank); the next tile's global values are loaded into registers while
// the current one is multiplied, four consecutive ones a load (VA, VB)
// where the operand's rows, offsets and extent along the loaded dim are
// multiples of 4 and a tile splits into whole vec4s a thread.
//
// SK (a wave-balanced product, see main): the first tiles whole, the last
// few in K slices, so that the last wave leaves no multiprocessor idle; a
// dispatch may take a part of its workgroups (sk_u0 on; the tail plan of
// src/ops/gemm_split.c runs the whole tiles and the slices apart).
//
// KW > 1 (K groups; not with SK or DB): the workgroup is KW groups of WX x
// WY threads on the same output tile, group g taking K tiles g, g + KW,
// g + 2 KW, ... into its own staging buffers and accumulators; at the end
// groups 1 .. KW - 1 add theirs into group 0's through workgroup memory
// (the B staging buffers, RQ accumulators a thread a pass), and group 0
// runs the epilogue. As many threads as KW K slices in batch entries, with
// no partial products in scratch and no reduce pass after them.
//
// Prelude (src/ops/gemm.c): struct Params, consts WX, WY, TM, TN, BK, KW,
// TRANS_A, TRANS_B, VA, VB, HAS_BIAS, BIAS_INIT, HAS_RES, SK, DB (two staging
// buffers, one barrier a K tile), ACT (0 none, 1
// relu, 2 gelu, 3 gelu tanh, 4 silu), bindings 1 (A) and 2 (B) with fn a_at(i) -> f32, a4(i) ->
// vec4<f32> (elements i .. i + 3; VA only), fn b_kj(b_base, k, j) -> B(k, j)
// and b4_kj(b_base, k, j): B(k, j) and the next three along the loaded dim
// (j's, or k's with TRANS_B; VB only) (f16 B: halves, two a u32, four a
// load with VB; conv2d's implicit route: the im2col columns gathered from
// its input, src/ops/gemm.c cols_wgsl), and fn store_all(acc, i0,
// j0, c_base, bias_base): put() for each accumulator, unrolled (used with a
// bias).
// Bindings: 0 Params, 1 A (f32), 2 B (f32, or u32 pairs of f16), 3 C
// (read_write), 4 bias (f32; a dummy unless HAS_BIAS or BIAS_INIT), 5 res
// (f32; a dummy when !HAS_RES).
// Dispatch: (ceil(n / BN), ceil(m / BM), batches); SK: sk_total
// workgroups folded into x * y, one batch entry.

#include "common/act"

@group(0) @binding(0) var<uniform> P: Params;
// bindings 1 (A) and 2 (B): the prelude's, with a_at / a4 and b_kj / b4_kj
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<storage, read> BIAS: array<f32>;
@group(0) @binding(5) var<storage, read> RES: array<f32>;

var<private> res_base: u32; // this batch entry's first residual element

const NT: u32 = WX * WY; // threads of one K group
const BM: u32 = WY * TM;
const BN: u32 = WX * TN;
const SA: u32 = BM + 4u; // floats per k row of AS
const SB: u32 = BN + 4u;
const NA: u32 = BM * BK; // values of one A tile (NA / 4 vec4s), of one B tile
const NB: u32 = BN * BK;
// A values each thread stages per tile (the last ones past NA skipped where
// NT does not divide it), B's; in vec4s (VA, VB)
const LA: u32 = (NA + NT - 1u) / NT;
const LB: u32 = (NB + NT - 1u) / NT;
const LA4: u32 = (NA / 4u + NT - 1u) / NT;
const LB4: u32 = (NB / 4u + NT - 1u) / NT;

const AS_N: u32 = BK * SA / 4u; // vec4s of one staged A tile
const BS_N: u32 = BK * SB / 4u;
const NBUF: u32 = select(1u, 2u, DB); // staging buffers a group
var<workgroup> AS: array<vec4<f32>, AS_N * NBUF * KW>;
var<workgroup> BS: array<vec4<f32>, BS_N * NBUF * KW>;
// accumulators a thread passes through BS at a time when KW > 1
const RQ: u32 = min(TM * TN / 4u, max(1u, BS_N * NBUF * KW / NT));

fn act(x: vec4<f32>) -> vec4<f32> { return act_by(ACT, x); }

// staging slot e of a tile's n values (or vec4s) is past its end: only
// where NT does not divide n (a constant false otherwise)
fn past(e: u32, n: u32) -> bool { return n % NT != 0u && e >= n; }

@compute @workgroup_size(WX * WY * KW)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let kg = lid / NT; // K group
    let tid = lid % NT;
    let tx = tid % WX;
    let ty = tid / WX;
    var m0 = wid.y * BM;
    var n0 = wid.x * BN;
    var kt0 = 0u; // first K tile
    var tiles = (P.k + BK - 1u) / BK;
    var c_base = P.c_off + wid.z * P.c_bs;
    if (SK) {
        // A wave-balanced product (src/ops/gemm.c, wave_plan), one batch
        // entry, the workgroups counted flat: u < sk_dp takes output tile u
        // (tiles row-major, sk_tx a row) whole; the rest take the tiles from
        // sk_dp on in sk_ts K slices each, slice 0 into C and slice j > 0
        // into the extras at sk_x: [sk_ts - 1][rows from sk_m0 to m][ldc],
        // which gemm_reduce.wgsl adds after C's.
        let u = P.sk_u0 + wid.y * nwg.x + wid.x;
        if (u >= P.sk_total) { return; }
        var tile = u;
        if (u >= P.sk_dp) {
            let v = u - P.sk_dp;
            tile = P.sk_dp + v / P.sk_ts;
            let j = v % P.sk_ts;
            kt0 = j * tiles / P.sk_ts;
            tiles = (j + 1u) * tiles / P.sk_ts - kt0;
            if (j > 0u) { c_base = P.sk_x + ((j - 1u) * (P.m - P.sk_m0) - P.sk_m0) * P.ldc; } // u32 wraps back in C's row
        }
        m0 = (tile / P.sk_tx) * BM;
        n0 = (tile % P.sk_tx) * BN;
    }
    let a_base = P.a_off + wid.z * P.a_bs;
    let b_base = P.b_off + wid.z * P.b_bs;

    var acc: array<vec4<f32>, TM * TN / 4u>;
    for (var q = 0u; q < TM * TN / 4u; q++) { acc[q] = vec4(0.0); }
    if (BIAS_INIT && kg == 0u) {
        let bias0 = P.bias_off + wid.z * P.bias_bs;
        var bv: array<vec4<f32>, TN / 4u>;
        for (var c = 0u; c < TN / 4u; c++) {
            let j0 = n0 + (c * WX + tx) * 4u;
            let ok = vec4(j0) + vec4(0u, 1u, 2u, 3u) < vec4(P.n);
            let bb = bias0 + j0 * P.bias_cs;
            bv[c] = (P.beta / P.alpha) * vec4(select(0.0, BIAS[select(0u, bb, ok.x)], ok.x),
                                              select(0.0, BIAS[select(0u, bb + P.bias_cs, ok.y)], ok.y),
                                              select(0.0, BIAS[select(0u, bb + 2u * P.bias_cs, ok.z)], ok.z),
                                              select(0.0, BIAS[select(0u, bb + 3u * P.bias_cs, ok.w)], ok.w));
        }
        for (var q = 0u; q < TM * TN / 4u; q++) { acc[q] = bv[q % (TN / 4u)]; }
    }
    var ra: array<f32, select(LA, 1u, VA)>;
    var rb: array<f32, select(LB, 1u, VB)>;
    var ra4: array<vec4<f32>, select(1u, LA4, VA)>;
    var rb4: array<vec4<f32>, select(1u, LB4, VB)>;

    let steps = (tiles + KW - 1u) / KW; // K tiles a group
    for (var t = 0u; t <= steps; t++) {
        // stage the group's tile t - 1 (loaded last iteration) while tile t
        // loads; DB: into the buffer tile t - 3 was read from, which every
        // thread left before the last barrier, so that one barrier a tile does
        let ao = kg * AS_N * NBUF + select(0u, ((t + 1u) % 2u) * AS_N, DB);
        let bo = kg * BS_N * NBUF + select(0u, ((t + 1u) % 2u) * BS_N, DB);
        if (t > 0u) {
            if (!DB) { workgroupBarrier(); }
            if (VA) {
                for (var l = 0u; l < LA4; l++) {
                    let e = tid + l * NT;
                    if (past(e, NA / 4u)) { continue; }
                    if (TRANS_A) { // four rows of one k
                        let kk = e / (BM / 4u);
                        AS[ao + (kk * SA) / 4u + e % (BM / 4u)] = ra4[l];
                    } else { // four k's of one row
                        let r = e / (BK / 4u);
                        let k4 = (e % (BK / 4u)) * 4u;
                        for (var c = 0u; c < 4u; c++) { AS[ao + ((k4 + c) * SA + r) / 4u][r % 4u] = ra4[l][c]; }
                    }
                }
            } else {
                for (var l = 0u; l < LA; l++) {
                    let e = tid + l * NT;
                    if (past(e, NA)) { continue; }
                    var r: u32; var kk: u32;
                    if (TRANS_A) { r = e % BM; kk = e / BM; } else { r = e / BK; kk = e % BK; }
                    AS[ao + (kk * SA + r) / 4u][r % 4u] = ra[l];
                }
            }
            if (VB) {
                for (var l = 0u; l < LB4; l++) {
                    let e = tid + l * NT;
                    if (past(e, NB / 4u)) { continue; }
                    if (TRANS_B) { // four k's of one column
                        let c = e / (BK / 4u);
                        let k4 = (e % (BK / 4u)) * 4u;
                        for (var q = 0u; q < 4u; q++) { BS[bo + ((k4 + q) * SB + c) / 4u][c % 4u] = rb4[l][q]; }
                    } else { // four columns of one k
                        let kk = e / (BN / 4u);
                        BS[bo + (kk * SB) / 4u + e % (BN / 4u)] = rb4[l];
                    }
                }
            } else {
                for (var l = 0u; l < LB; l++) {
                    let e = tid + l * NT;
                    if (past(e, NB)) { continue; }
                    var c: u32; var kk: u32;
                    if (TRANS_B) { c = e / BK; kk = e % BK; } else { c = e % BN; kk = e / BN; }
                    BS[bo + (kk * SB + c) / 4u][c % 4u] = rb[l];
                }
            }
            workgroupBarrier();
        }
        if (t < steps) {
            let k0 = (kt0 + t * KW + kg) * BK; // past the group's last tile: k >= P.k, zeros
            if (VA) {
                for (var l = 0u; l < LA4; l++) {
                    let e = tid + l * NT;
                    if (past(e, NA / 4u)) { continue; }
                    var i: u32; var k: u32;
                    if (TRANS_A) { k = k0 + e / (BM / 4u); i = m0 + (e % (BM / 4u)) * 4u; }
                    else { i = m0 + e / (BK / 4u); k = k0 + (e % (BK / 4u)) * 4u; }
                    var v = vec4<f32>(0.0);
                    if (i < P.m && k < P.k) {
                        if (TRANS_A) { v = a4(a_base + k * P.lda + i); } else { v = a4(a_base + i * P.lda + k); }
                    }
                    ra4[l] = v;
                }
            } else {
                for (var l = 0u; l < LA; l++) {
                    let e = tid + l * NT;
                    if (past(e, NA)) { continue; }
                    var r: u32; var kk: u32;
                    if (TRANS_A) { r = e % BM; kk = e / BM; } else { r = e / BK; kk = e % BK; }
                    let i = m0 + r;
                    let k = k0 + kk;
                    var v = 0.0;
                    if (i < P.m && k < P.k) {
                        if (TRANS_A) { v = a_at(a_base + k * P.lda + i); } else { v = a_at(a_base + i * P.lda + k); }
                    }
                    ra[l] = v;
                }
            }
            if (VB) {
                for (var l = 0u; l < LB4; l++) {
                    let e = tid + l * NT;
                    if (past(e, NB / 4u)) { continue; }
                    var j: u32; var k: u32;
                    if (TRANS_B) { j = n0 + e / (BK / 4u); k = k0 + (e % (BK / 4u)) * 4u; }
                    else { k = k0 + e / (BN / 4u); j = n0 + (e % (BN / 4u)) * 4u; }
                    var v = vec4<f32>(0.0);
                    if (j < P.n && k < P.k) {
                        v = b4_kj(b_base, k, j);
                    }
                    rb4[l] = v;
                }
            } else {
                for (var l = 0u; l < LB; l++) {
                    let e = tid + l * NT;
                    if (past(e, NB)) { continue; }
                    var c: u32; var kk: u32;
                    if (TRANS_B) { c = e / BK; kk = e % BK; } else { c = e % BN; kk = e / BN; }
                    let j = n0 + c;
                    let k = k0 + kk;
                    var v = 0.0;
                    if (j < P.n && k < P.k) {
                        v = b_kj(b_base, k, j);
                    }
                    rb[l] = v;
                }
            }
        }
        if (t > 0u && (t - 1u) * KW + kg < tiles) {
            for (var kk = 0u; kk < BK; kk++) {
                var a: array<vec4<f32>, TM / 4u>;
                var b: array<vec4<f32>, TN / 4u>;
                for (var r4 = 0u; r4 < TM / 4u; r4++) { a[r4] = AS[ao + kk * (SA / 4u) + ty * (TM / 4u) + r4]; }
                for (var c = 0u; c < TN / 4u; c++) { b[c] = BS[bo + kk * (SB / 4u) + c * WX + tx]; }
                for (var r = 0u; r < TM; r++) {
                    let av = vec4(a[r / 4u][r % 4u]);
                    for (var c = 0u; c < TN / 4u; c++) {
                        acc[r * (TN / 4u) + c] = fma(av, b[c], acc[r * (TN / 4u) + c]);
                    }
                }
            }
        }
    }

    if (KW > 1u) { // groups 1 .. KW - 1 add their sums into group 0's, one a round, RQ of them a pass
        for (var g = 1u; g < KW; g++) {
            for (var q0 = 0u; q0 < TM * TN / 4u; q0 += RQ) {
                workgroupBarrier();
                if (kg == g) {
                    for (var q = 0u; q < RQ; q++) {
                        if (q0 + q < TM * TN / 4u) { BS[q * NT + tid] = acc[q0 + q]; }
                    }
                }
                workgroupBarrier();
                if (kg == 0u) {
                    for (var q = 0u; q < RQ; q++) {
                        if (q0 + q < TM * TN / 4u) { acc[q0 + q] += BS[q * NT + tid]; }
                    }
                }
            }
        }
        if (kg > 0u) { return; }
    }

    let bias_base = P.bias_off + wid.z * P.bias_bs;
    res_base = P.res_off + wid.z * P.res_bs;
    if (HAS_BIAS) {
        store_all(acc, m0 + ty * TM, n0 + tx * 4u, c_base, bias_base);
    } else {
        // the activation over the accumulators first, in a loop of its own:
        // inside the store loop it made the body too large for the driver
        // to unroll, and acc went to local memory (the 128 x 128 tile with
        // an exact GELU on an H100: 15.2 ms for 6304 x 3072 x 768 against
        // 0.80 ms so; docs/PERFORMANCE.md, session 24)
        if (ACT != 0u) {
            for (var q = 0u; q < TM * TN / 4u; q++) { acc[q] = act(P.alpha * acc[q]); }
        }
        // as a loop: every tile compiles it unrolled (the 128 x 128 tile's
        // product ran 18% slower through store_all on the H200)
        for (var r = 0u; r < TM; r++) {
            for (var c = 0u; c < TN / 4u; c++) {
                put(m0 + ty * TM + r, n0 + (c * WX + tx) * 4u, acc[r * (TN / 4u) + c], c_base, bias_base);
            }
        }
    }
}

// The epilogue of one accumulator: C's row i, columns j0 .. j0 + 3 (those
// inside the product). With a bias the prelude's store_all calls it for
// each acc[q] with q a constant (acc[r * TN / 4 + c]: row i0 + r, columns
// j0 + c * WX * 4): written as a loop, acc was indexed by a variable where
// the compiler declined to unroll it, which puts acc in local memory (the
// 8 x 8 tiles with a bias: 256 bytes of local memory a thread, 15x slower
// on the H200).
fn put(i: u32, j0: u32, a: vec4<f32>, c_base: u32, bias_base: u32) {
    let row_ok = i < P.m;
    var v = a; // without a bias: alpha and the activation applied already where ACT != 0 (main)
    if (HAS_BIAS || ACT == 0u) { v = P.alpha * a; }
    let ok = vec4(row_ok) & (vec4(j0) + vec4(0u, 1u, 2u, 3u) < vec4(P.n));
    if (HAS_BIAS) {
        let bb = bias_base + i * P.bias_rs + j0 * P.bias_cs;
        let bv = vec4(select(0.0, BIAS[select(0u, bb, ok.x)], ok.x),
                      select(0.0, BIAS[select(0u, bb + P.bias_cs, ok.y)], ok.y),
                      select(0.0, BIAS[select(0u, bb + 2u * P.bias_cs, ok.z)], ok.z),
                      select(0.0, BIAS[select(0u, bb + 3u * P.bias_cs, ok.w)], ok.w));
        v = act(v + P.beta * bv);
    }
    if (HAS_RES) {
        let rb = res_base + i * P.ldr + j0;
        v += vec4(select(0.0, RES[select(0u, rb, ok.x)], ok.x), select(0.0, RES[select(0u, rb + 1u, ok.y)], ok.y),
                  select(0.0, RES[select(0u, rb + 2u, ok.z)], ok.z), select(0.0, RES[select(0u, rb + 3u, ok.w)], ok.w));
    }
    let o = c_base + i * P.ldc + j0;
    if (ok.x) { C[o] = v.x; }
    if (ok.y) { C[o + 1u] = v.y; }
    if (ok.z) { C[o + 2u] = v.z; }
    if (ok.w) { C[o + 3u] = v.w; }
}
