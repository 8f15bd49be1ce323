// qkv_rope: a fused q|k|v projection [B, n, (H + 2 Hk) * D] into heads
// [B, H, n, D], [B, Hk, n, D], [B, Hk, n, D]; q and k RMS-normalized per
// head first when HAS_NORM (Qwen3's q_norm / k_norm), then rotated by
// Hugging Face's rotate-half RoPE with cos / sin [n, D]; v copied
// (src/ops/rope.c, row "qkv_rope").
// One workgroup a (b, t, head) of the H + 2 Hk heads; thread i < HALF =
// D / 2 holds elements i and i + HALF, the pair RoPE mixes (WG is HALF
// rounded up to a power of two for the reduction; the rest add zeros):
//   out[i]       = x[i] * cos[i]       - x[i + D/2] * sin[i]
//   out[i + D/2] = x[i + D/2] * cos[i + D/2] + x[i] * sin[i + D/2]
// Row "qkv_rope_cache" (a cache mode of the prelude): k and v go straight
// into the caches [B, Hk, ctx, D] at row positions[t], or, for
// qkv_sdpa_kvcache's general path, at position cache_seqlens[b] - n + t
// (with cos and sin tables [P, D] read at that position; in place: a
// decode step's cache append in the same kernel); a row outside [0, ctx)
// writes nothing and records itself in the context's data-error words.
// Without cos and sin (HAS_ROPE false) the heads are only split out (an
// encoder's stacked q|k|v).
// Prelude: struct Params, consts HALF, WG, HAS_NORM, HAS_ROPE, fn
// rope_row(b, t) -> u32 (the row of cos / sin for token t: t, or in the
// cache_seqlens mode its position, cos and sin being tables), and
// fn kv_row(b, hk, t) -> u32: the row of token t of head hk in K / V (none
// when 0xFFFFFFFF), with the cache modes' bindings 9 (positions or
// cache_seqlens) and 10 (data-error words); src/ops/rope.c,
// wgnn__qkv_rope_encode.
// Dispatch: B * n * (H + 2 Hk) workgroups folded into x*y.
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read> COS: array<f32>;
@group(0) @binding(3) var<storage, read> SIN: array<f32>;
@group(0) @binding(4) var<storage, read> QW: array<f32>; // q_norm weight [D] (a dummy without HAS_NORM)
@group(0) @binding(5) var<storage, read> KW: array<f32>; // k_norm weight [D]
@group(0) @binding(6) var<storage, read_write> Q: array<f32>;
@group(0) @binding(7) var<storage, read_write> K: array<f32>;
@group(0) @binding(8) var<storage, read_write> V: array<f32>;

var<workgroup> RED: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) i: u32) {
    let g = wg_flat(wid, nwg);
    if (g >= P.n_groups) { return; } // uniform per workgroup
    let heads = P.h + 2u * P.hk;
    let head = g % heads;
    let bt = g / heads; // b * n + t
    let t = bt % P.n;
    let b = bt / P.n;
    let D = 2u * HALF;
    let base = g * D;
    let live = i < HALF;
    var x0 = 0.0;
    var x1 = 0.0;
    if (live) {
        x0 = X[base + i];
        x1 = X[base + i + HALF];
    }
    let is_v = head >= P.h + P.hk;
    if (HAS_NORM && !is_v) {
        RED[i] = x0 * x0 + x1 * x1;
        workgroupBarrier();
        for (var s = WG / 2u; s > 0u; s >>= 1u) {
            if (i < s) { RED[i] += RED[i + s]; }
            workgroupBarrier();
        }
        let inv = inverseSqrt(RED[0] / f32(D) + P.eps);
        if (!live) { return; }
        if (head < P.h) {
            x0 = x0 * inv * QW[i];
            x1 = x1 * inv * QW[i + HALF];
        } else {
            x0 = x0 * inv * KW[i];
            x1 = x1 * inv * KW[i + HALF];
        }
    }
    if (!live) { return; }
    if (is_v) {
        let row = kv_row(b, head - P.h - P.hk, t);
        if (row == 0xFFFFFFFFu) { return; }
        V[row * D + i] = x0;
        V[row * D + i + HALF] = x1;
        return;
    }
    let c = rope_row(b, t) * D;
    var y0 = x0;
    var y1 = x1;
    if (HAS_ROPE) {
        y0 = x0 * COS[c + i] - x1 * SIN[c + i];
        y1 = x1 * COS[c + i + HALF] + x0 * SIN[c + i + HALF];
    }
    if (head < P.h) {
        let o = ((b * P.h + head) * P.n + t) * D;
        Q[o + i] = y0;
        Q[o + i + HALF] = y1;
    } else {
        let row = kv_row(b, head - P.h, t);
        if (row == 0xFFFFFFFFu) { return; }
        K[row * D + i] = y0;
        K[row * D + i + HALF] = y1;
    }
}
