// sample: one token id a row of logits, drawn with the caller's uniform
// number u (wgnn's row "sample"; docs/OPS.md states the rule):
//   e_i = exp((x_i - max x) / T)   the unnormalised probability
//   top-k: keep x_i >= t_k, t_k the k-th largest logit (ties at it kept)
//   top-p: of those, keep x_i >= t_p, t_p the largest logit such that the
//          kept tokens with logit >= t_p hold >= top_p of the kept mass
//   pick: the first kept i, in index order, whose running kept mass
//         exceeds u * (kept mass); none (u = 1, rounding): the last kept
//         token of nonzero mass.
// One workgroup a row. Logits are ranked through u32 keys that order like
// the floats (common/key), so both thresholds are radix selects on keys, 4
// bits a pass, 8 passes each: per pass every thread adds its tokens' weight
// (1 for top-k, e for top-p) into its own column of a [16][WG] table in
// workgroup memory, the 16 bucket totals are summed in a fixed order, and
// every thread picks the same digit from them. Counts are exact in f32 up
// to 2^24 tokens (the host's bound on V). The pick: each thread sums the
// kept mass of a contiguous chunk of the row, thread 0 scans the chunk sums
// for the chunk where u * total falls, and that chunk's thread walks it
// again, in the same order, to the token. Cost: about 18 reads of the row.
//
// A row with no token of nonzero mass (every logit -inf; NaN or +inf
// ones) gets id 0 and raises WGNN__DATA_ERR_SAMPLE in the data-error
// words (the call that waits for it fails, naming the row).
// Prelude (src/ops/reduce.c): struct Params; const WG (a power of two >= 16).
// Bindings: 0 Params, 1 X (logits as u32 bits, read), 2 U (f32 a row,
// read), 3 Y (i32 a row), 4 flag (the data-error words). Dispatch: P.n_rows workgroups, folded into x*y
// past 65535.

#include "common/grid"
#include "common/key"
#include "common/data_err"

const NONE_IDX: u32 = 0xffffffffu;
const PARTS: u32 = WG / 16u; // columns of the table each bucket total sums 16 of at a time

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read> U: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<i32>;
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>>;

var<workgroup> hist: array<f32, 16 * WG>; // [bucket][thread]
var<workgroup> part: array<f32, WG>;
var<workgroup> ured: array<u32, WG>;
var<workgroup> bsum: array<f32, 16>;
var<workgroup> pick: vec4<u32>; // chunk, no crossing found (1), goal bits, running mass before the chunk bits

fn mass(b: u32, m: f32) -> f32 {
    return exp((bitcast<f32>(b) - m) / P.temperature);
}

// The largest key t such that the weight of the row's tokens with
// floor <= key >= t reaches need (weight e with WEIGHTED, else 1 each). A
// weighted select sets need = frac * (weight of all tokens >= floor), known
// after the first pass. Where rounding leaves need unreached, the smallest
// key of a token of nonzero weight. Called by every thread (barriers).
fn radix_select(base: u32, lid: u32, floor: u32, weighted: bool, count: f32, frac: f32, m: f32) -> u32 {
    var prefix = 0u;
    var above = 0.0; // weight above the current prefix's range
    var need = count;
    for (var ps = 0u; ps < 8u; ps++) {
        let shift = 28u - 4u * ps;
        let hi = select(0xffffffffu << (shift + 4u), 0u, ps == 0u); // the bits chosen so far
        for (var d = 0u; d < 16u; d++) { hist[d * WG + lid] = 0.0; }
        for (var j = lid; j < P.n; j += WG) {
            let b = X[base + j];
            let k = float_key(b);
            if (k >= floor && (k & hi) == prefix) {
                var w = 1.0;
                if (weighted) { w = mass(b, m); }
                let d = (k >> shift) & 15u;
                hist[d * WG + lid] += w;
            }
        }
        workgroupBarrier();
        let bk = lid / PARTS;
        let first = bk * WG + (lid % PARTS) * 16u;
        var s = 0.0;
        for (var q = 0u; q < 16u; q++) { s += hist[first + q]; }
        part[lid] = s;
        workgroupBarrier();
        if (lid < 16u) {
            var t = 0.0;
            for (var q = 0u; q < PARTS; q++) { t += part[lid * PARTS + q]; }
            bsum[lid] = t;
        }
        workgroupBarrier();
        if (weighted && ps == 0u) {
            var tot = 0.0;
            for (var d = 0u; d < 16u; d++) { tot += bsum[d]; }
            need = frac * tot;
        }
        // every thread: the first bucket from the top where the weight reaches need
        var acc = above;
        var dsel = 16u;
        var acc_sel = 0.0;
        var low = 0u;
        var acc_low = 0.0;
        for (var i = 0u; i < 16u; i++) {
            let d = 15u - i;
            let h = bsum[d];
            if (h > 0.0) {
                low = d;
                acc_low = acc;
                if (dsel == 16u && acc + h >= need) {
                    dsel = d;
                    acc_sel = acc;
                }
            }
            acc += h;
        }
        if (dsel == 16u) {
            dsel = low;
            acc_sel = acc_low;
        }
        above = acc_sel;
        prefix = prefix | (dsel << shift);
        workgroupBarrier(); // bsum and hist read before the next pass writes them
    }
    return prefix;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = wg_flat(wid, nwg);
    if (row >= P.n_rows) { return; } // uniform per workgroup: barriers stay uniform
    let base = row * P.n;

    // the largest logit
    var mk = 0u;
    for (var j = lid; j < P.n; j += WG) { mk = max(mk, float_key(X[base + j])); }
    ured[lid] = mk;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) { ured[lid] = max(ured[lid], ured[lid + s]); }
        workgroupBarrier();
    }
    let m = key_float(ured[0]);

    // thresholds (0: keep everything; every key is above 0)
    var t = 0u;
    if (P.top_k > 0u) { t = radix_select(base, lid, 0u, false, f32(P.top_k), 0.0, m); }
    if (P.top_p < 1.0) { t = radix_select(base, lid, t, true, 0.0, P.top_p, m); }

    // the kept mass of this thread's chunk
    let j0 = min(lid * P.chunk, P.n);
    let j1 = min(j0 + P.chunk, P.n);
    var s = 0.0;
    for (var j = j0; j < j1; j++) {
        let b = X[base + j];
        if (float_key(b) >= t) { s += mass(b, m); }
    }
    part[lid] = s;
    workgroupBarrier();
    if (lid == 0u) {
        var total = 0.0;
        for (var c = 0u; c < WG; c++) { total += part[c]; }
        let goal = clamp(U[row], 0.0, 1.0) * total;
        var run = 0.0;
        var sel = WG;
        var sel_run = 0.0;
        var last = 0u;
        var last_run = 0.0;
        for (var c = 0u; c < WG; c++) {
            let h = part[c];
            if (h > 0.0) {
                last = c;
                last_run = run;
                if (sel == WG && run + h > goal) {
                    sel = c;
                    sel_run = run;
                }
            }
            run += h;
        }
        if (sel == WG) {
            pick = vec4<u32>(last, 1u, bitcast<u32>(goal), bitcast<u32>(last_run));
        } else {
            pick = vec4<u32>(sel, 0u, bitcast<u32>(goal), bitcast<u32>(sel_run));
        }
    }
    workgroupBarrier();
    let pk = pick;
    if (lid == pk.x) {
        let goal = bitcast<f32>(pk.z);
        var run = bitcast<f32>(pk.w);
        var found = NONE_IDX;
        var last = NONE_IDX;
        for (var j = j0; j < j1; j++) {
            let b = X[base + j];
            if (float_key(b) >= t) {
                let e = mass(b, m);
                if (e > 0.0) { last = j; }
                run += e;
                if (pk.y == 0u && e > 0.0 && run > goal) {
                    found = j;
                    break;
                }
            }
        }
        if (found == NONE_IDX) { found = last; }
        if (found == NONE_IDX) {
            found = 0u;
            data_err(DATA_ERR_SAMPLE, 0u, P.row0 + row, 0u);
        }
        Y[row] = i32(found);
    }
}
