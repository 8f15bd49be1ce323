/* gemm_split.c - the GEMM's split route (src/ops/gemm.c plans the rest):
 * how many K slices a product takes (split_count), the wave plan on the
 * 128 x 128 tile where the GPU's compute units are known (wave_choose), and
 * the partial products into scratch with their reduce pass
 * (shaders/gemm_reduce.wgsl, or gemm_reduce_ln.wgsl when the rows'
 * LayerNorm is asked for too): plan_split, called through
 * wgnn__gemm_plan_split from gemm.c's product planner. */
#include "gemm.h"

#include "norm.h"

#include <stdio.h>

/* ---- split-K ------------------------------------------------------------------
 * A product with few output tiles (small M and N, long K: a ViT block at
 * batch 1, a row vector times a matrix) leaves most of a large GPU idle.
 * Then K is cut into S slices run as S batch entries of the same kernel
 * (a slice is an offset along K: batch strides do it), each writing its
 * partial product (alpha applied) to scratch; gemm_reduce.wgsl sums them in
 * order and applies the bias and activation. */

#define REDUCE_PARAMS(X, S)                                                                       \
    X(S, u32, m) X(S, u32, n) X(S, u32, s) X(S, u32, ldc) X(S, u32, c_off) X(S, u32, bias_off)    \
    X(S, u32, bias_rs) X(S, u32, bias_cs) X(S, f32, beta) X(S, u32, res_off) X(S, u32, ldr)        \
    X(S, u32, t_m0) X(S, u32, t_dp) X(S, u32, t_n) X(S, u32, t_tx) X(S, u32, t_bm) X(S, u32, t_bn)        \
    X(S, u32, n_groups) X(S, u32, y_off) X(S, f32, eps) X(S, f32, count) /* gemm_reduce_ln's */
WGNN__PARAMS_STRUCT(reduce_params, REDUCE_PARAMS);
WGNN__PARAMS_CHECK(reduce_params, REDUCE_PARAMS)
#define TAIL_PARAMS(X, S)                                                                         \
    X(S, u32, m) X(S, u32, n) X(S, u32, ldc) X(S, u32, c_off) X(S, u32, bias_off) X(S, u32, bias_rs) \
    X(S, u32, bias_cs) X(S, f32, beta) X(S, u32, t_m0) X(S, u32, t_dp) X(S, u32, t_n) X(S, u32, t_tx) \
    X(S, u32, t_tiles) X(S, u32, t_bm) X(S, u32, t_bn) /* gemm_tail's */
WGNN__PARAMS_STRUCT(tail_params, TAIL_PARAMS);
WGNN__PARAMS_CHECK(tail_params, TAIL_PARAMS)

#define SPLIT_MIN_SLICE 128u  /* K values per slice, at least */
#define SPLIT_TARGET_GROUPS 512u
#define BIAS_PASS 0x10000u  /* flag in split_count's result: one slice, bias in gemm_reduce */
#define WAVE_WIDE 0x20000u  /* flag in split_count's result: a wave plan's product, not a bias pass's */

static uint32_t split_count_shape(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias);

/* Slices for g: 1 (no split) unless the problem is one product with few
 * tiles, its K long enough, and its output and bias bindable whole. */
static uint32_t split_count(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias) {
    if (g->batch != 1 || !g->c.buf || (has_bias && !g->bias.buf)) return 1;
    uint64_t cap = wgnn__gemm_binding_cap(ctx);
    if (wgpuBufferGetSize(g->c.buf) > cap || (has_bias && wgpuBufferGetSize(g->bias.buf) > cap) ||
        (g->res.buf && wgpuBufferGetSize(g->res.buf) > cap))
        return 1;
    return split_count_shape(ctx, g, has_bias);
}

bool wgnn__gemm_splits(const wgnn_context *ctx, const wgnn__gemm *g) {
    return split_count(ctx, g, g->bias.buf != NULL || g->bias.scratch >= 0) != 1;
}

/* split_count for g's shape, its buffers taken to fit one binding each */
static uint32_t split_count_shape(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias) {
    if (g->batch != 1) return 1;
    if (wgnn__gemm_gemv_ok(g) || wgnn__gemm_gemvn_ok(g)) return 1; /* a GEMV kernel */
    if (ctx->knobs.gemm_split >= 1) {
        uint32_t s = (uint32_t)ctx->knobs.gemm_split;
        while (s > 1 && g->k % s) s--;
        return s;
    }
    /* a large product with a bias: on the 128 x 128 tile with the bias in
     * its accumulators where it is one row and no LayerNorm is asked for
     * (the reduce writes that; gemm.c, bias_init_on), else the plain
     * product on that tile into scratch, then the bias pass (one "slice"),
     * which beats the 64 x 64 tile with the bias (addmm 4096^3 on the
     * H200: 5.0 ms on 64 x 64, 3.85 ms for the plain product) */
    if (has_bias && !g->trans_a && ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 &&
        wgnn__ceil_div(g->m, 128) * wgnn__ceil_div(g->n, 128) >= SPLIT_TARGET_GROUPS)
        return wgnn__gemm_bias_init_ok(ctx, g) && !g->ln_y.buf ? 1 : 1 | BIAS_PASS;
    /* fewer 128 x 128 tiles than that, but still a few waves of them, and a
     * long K: four K slices on that tile, the bias in the reduce. ViT-B/16's
     * fc2 at batch 32 (6304 x 768 x 3072) on the H200: 0.961 -> 0.883 ms
     * (two slices: 0.994; its out projection, K = 768, got slower split:
     * 0.258 -> 0.314, docs/PERFORMANCE.md) */
    if (has_bias && !g->trans_a && ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 &&
        wgnn__ceil_div(g->m, 128) * wgnn__ceil_div(g->n, 128) >= SPLIT_TARGET_GROUPS / 2 && g->k >= 2048 && g->k % 4 == 0)
        return 4;
    /* where the compute units are known, a product with a bias and more
     * than 256 rows that gives a wave or more of 128 x 128 tiles (two a
     * compute unit), counting up to 8 K slices of 128 or more, takes the
     * bias pass and the wave plan too: ViT-B/16's out projection at batch
     * 32 (6304 x 768 x 768, 300 tiles) 0.236 -> 0.222 ms on the H200 (264
     * whole, 36 in 3 K slices), against the 128 x 64 tile with the bias in
     * it (docs/PERFORMANCE.md, session 7) */
    uint64_t t128 = wgnn__ceil_div(g->m, 128) * wgnn__ceil_div(g->n, 128);
    uint64_t smax = g->k / SPLIT_MIN_SLICE < 8 ? g->k / SPLIT_MIN_SLICE : 8;
    if (ctx->knobs.gemm_waves != 0 && has_bias && !g->trans_a && ctx->knobs.compute_units && g->m > WGNN__GEMM_SMALL_M &&
        ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 && t128 * 128 * 128 * 4 <= (uint64_t)g->m * g->n * 5 &&
        t128 * (smax > 1 ? smax : 1) >= 2ull * ctx->knobs.compute_units)
        return 1 | BIAS_PASS | WAVE_WIDE;
    /* tiles of the kernel small problems get: for few rows k_small_tile
     * (32 x 64), at most 768 of its workgroups and 6 slices, else 64 x 64,
     * at least SPLIT_TARGET_GROUPS / 2. The small tile runs 9 workgroups
     * an SM on the H200 (105 registers): past 1188 a product takes a
     * second wave. Its slices at ViT-B/16's batch 1 (M = 197, session 11
     * call 2, us): fc1 (K = 768) S = 4 55.3, 3 52.9, 2 53.1; q|k|v (K =
     * 768) S = 6 45.2, 4 42.7, 3 41.4; fc2 (K = 3072) S = 6, 8, 12 53.0,
     * 53.9, 53.1; the out projection S = 3, 6 25.6, 25.9. On the 8 x 4 a
     * thread tile (session 14 call 2) fc2 S = 6 / 8 / 12 50.3 / 52.2 /
     * 50.7: at most 6 slices (fc2 8 -> 6) took the encoders' GPU span
     * 1.990 -> 1.962 ms (ViT-B/16) and 2.073 -> 2.052 (SigLIP-B/16), two
     * rounds in call 4 (docs/PERFORMANCE.md). */
    bool small = g->m <= WGNN__GEMM_SMALL_M && wgnn__gemm_small_tile_ok(ctx);
    uint64_t groups = small ? wgnn__ceil_div(g->m, 32) * wgnn__ceil_div(g->n, 64) : wgnn__ceil_div(g->m, 64) * wgnn__ceil_div(g->n, 64);
    uint32_t target = small ? 768u : SPLIT_TARGET_GROUPS, most = small ? 6u : 64u;
    if (groups >= target / 2 || g->k < 2 * SPLIT_MIN_SLICE) return 1;
    uint32_t want = (uint32_t)(small ? target / groups : wgnn__ceil_div(target, groups)), best = 1;
    for (uint32_t s = 2; s <= want && s <= most && g->k / s >= SPLIT_MIN_SLICE; s++)
        if (g->k % s == 0) best = s;
    return best;
}

/* ---- wave plan ----------------------------------------------------------------
 * A GPU runs a product's workgroups in waves. On the H200 (132 SMs) the
 * 128 x 128 tile runs two workgroups an SM, and a last wave that leaves at
 * most one on each SM takes about half a wave (one keeps an SM about as
 * busy as two), so a product's time goes in steps of half a wave: mm
 * 5632 x 3072 x 768 (1056 tiles, 8 x 132) 0.648 ms, 5760 and 6272 rows
 * (1080 and 1176 tiles) 0.72, 6304 rows (1200 tiles, 9.09 x 132) 0.783
 * (docs/PERFORMANCE.md, session 7). Where the GPU's compute units are known
 * (knobs.compute_units), a product on that tile that goes through
 * gemm_reduce anyway (a bias pass or split-K) takes the slicing with the
 * fewest modelled waves: S uniform K slices, or its first tiles whole and
 * the last few (fewer than the units) in ts K slices each, one workgroup
 * an SM in a short last wave (gemm.wgsl's SK). The model also counts the
 * reduce's reads of every slice past the first. ViT-B/16's fc2 at batch 32
 * (6304 x 768 x 3072) measured 0.877 / 0.807 / 0.767 / 0.815 / 0.794 ms in
 * 1 / 2 / 3 / 4 / 6 slices, the model's order exactly (and 4 first at
 * SigLIP's 6272 rows, as measured). */
typedef struct wave_plan {
    uint32_t s;      /* uniform K slices (1: the bias pass alone) */
    uint32_t dp, ts; /* ts > 0 (then s = 1): tiles below dp whole, the rest in ts K slices */
    bool big;        /* planned on the 128 x 128 tile (else: split_count's plan as it was) */
    uint32_t kw;     /* K groups inside each slice's workgroups (gemm.wgsl's KW; 0 or 1: one) */
} wave_plan;

#define WAVE_MIN_TILES 2u       /* K tiles in a tail slice, at least */
#define WAVE_MAX_TS 16u         /* tail slices, at most */
#define WAVE_FLOP_PER_BYTE 13.0 /* the tile's FLOP rate over the reduce's read rate (H200: ~40 TFLOP/s, ~3 TB/s) */

/* waves (of two workgroups on each of `units`) that `wgs` workgroups take */
static double waves(uint64_t wgs, uint32_t units) {
    uint64_t full = wgs / (2ull * units), rem = wgs % (2ull * units);
    return (double)full + (rem == 0 ? 0.0 : rem <= units ? 0.5 : 1.0);
}

/* gemm_reduce's and gemm_tail's prelude for their elements: V values a
 * thread (a quad where v4, else one), ET, act_e and bias_e */
static const char *elem_wgsl(bool v4) {
    return v4 ? "const V: u32 = 4u;\nalias ET = vec4<f32>;\n"
                "fn act_e(x: ET) -> ET { return act_by(ACT, x); }\n"
                "fn bias_e(b: u32, c: u32) -> ET { return vec4<f32>(BIAS[b], BIAS[b + c], BIAS[b + 2u * c], "
                "BIAS[b + 3u * c]); }\n"
              : "const V: u32 = 1u;\nalias ET = f32;\n"
                "fn act_e(x: ET) -> ET { return act_by(ACT, vec4<f32>(x)).x; }\n"
                "fn bias_e(b: u32, c: u32) -> ET { return BIAS[b]; }\n";
}

/* The tail plan for `tiles` output tiles of `ktiles` K tiles: the first *dp
 * (whole rounds of `units`) whole, the r others in *ts K slices each (as
 * many as fill the units, at least WAVE_MIN_TILES K tiles a slice, at most
 * WAVE_MAX_TS), one short workgroup an SM at the end: q / 2 + 1 / (2 ts)
 * waves plus p (ts - 1) r / tiles for the reduce's reads (p as in
 * wave_choose). -1: none (no whole round, no rest, or fewer than 2 slices). */
static double tail_cost(uint64_t tiles, uint64_t ktiles, uint32_t units, double p, uint32_t *dp, uint32_t *ts) {
    uint64_t q = tiles / units, r = tiles % units;
    if (q < 1 || r == 0) return -1;
    uint64_t s = units / r;
    if (s > ktiles / WAVE_MIN_TILES) s = ktiles / WAVE_MIN_TILES;
    if (s > WAVE_MAX_TS) s = WAVE_MAX_TS;
    if (s < 2) return -1;
    *dp = (uint32_t)(q * units);
    *ts = (uint32_t)s;
    return q / 2.0 + 0.5 / (double)s + p * (double)(s - 1) * r / tiles;
}

/* f32 elements a plan's operand may span in one binding (room to start it
 * at an aligned offset) */
static uint64_t bind_room(const wgnn_context *ctx) { return wgnn__gemm_binding_cap(ctx) / 4 - 64; }

/* whether g's A and B each fit one binding (a plan's products are not
 * split over rows) */
static bool ab_fit(const wgnn_context *ctx, const wgnn__gemm *g) {
    uint64_t room = bind_room(ctx);
    return wgnn__gemm_a_extent(g) <= room && wgnn__gemm_b_extent(g) * (g->b_f16 ? 2u : 4u) / 4u <= room;
}

/* g split in s uniform K slices as plan_split records it (batch entries) */
static wgnn__gemm sliced(const wgnn__gemm *g, uint32_t s) {
    wgnn__gemm h = *g;
    h.batch = s;
    h.k = g->k / s;
    h.bias = (wgnn__gemm_operand){NULL, -1, 0, 0};
    h.res = (wgnn__gemm_operand){NULL, -1, 0, 0};
    h.c = (wgnn__gemm_operand){NULL, 0, 0, 0};
    h.ln_y = (wgnn__gemm_operand){NULL, -1, 0, 0};
    return h;
}

/* The plan for g, which split_count gave s0 slices (1: a bias pass). In
 * waves of whole-K tiles: s slices cost waves(T s) / s plus p (s - 1) for
 * the reduce's reads, p = (T / units) (FLOP per byte) / K; the tail plan
 * q / 2 + 1 / (2 ts) + p (ts - 1) r / T (q = T / units whole rounds of
 * tiles, r the rest). A plan other than s0's is taken when it is 3% less. */
static wave_plan wave_choose(const wgnn_context *ctx, const wgnn__gemm *g, uint32_t s0, bool wide) {
    wave_plan w = {s0, 0, 0, false, 1};
    uint32_t units = ctx->knobs.compute_units;
    if (!units || ctx->knobs.gemm_split >= 1 || ctx->knobs.gemm_waves == 0 || g->batch != 1) return w;
    wgnn__gemm h0 = sliced(g, s0);
    wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, &h0);
    bool big = wgnn__gemm_is_big_tile(&t);
    if (!big && !(wide && !ctx->knobs.gemm_tile[0])) return w; /* the model is the 128 x 128 tile's */
    if (!big) t = wgnn__gemm_big_tile;
    if (!ab_fit(ctx, g)) return w; /* A and B must each fit one binding (no row splits) */
    uint64_t bm = (uint64_t)t.wy * t.tm, bn = (uint64_t)t.wx * t.tn;
    uint64_t tiles = wgnn__ceil_div(g->m, bm) * wgnn__ceil_div(g->n, bn), ktiles = wgnn__ceil_div(g->k, t.bk);
    double p = (double)tiles / units * WAVE_FLOP_PER_BYTE / g->k;
    double c0 = waves(tiles * s0, units) / s0 + p * (s0 - 1), best = c0;
    wave_plan pick = {s0, 0, 0, true, 1};
    for (uint32_t s = 1; s <= 8; s++) {
        if (s == s0 || g->k % s || (s > 1 && (g->k / s < SPLIT_MIN_SLICE || (g->k / s) % 4))) continue;
        double c = waves(tiles * s, units) / s + p * (s - 1);
        if (c < best) best = c, pick = (wave_plan){s, 0, 0, true, 1};
    }
    uint32_t dp, ts;
    double c = tail_cost(tiles, ktiles, units, p, &dp, &ts);
    if (c >= 0 && c < best) best = c, pick = (wave_plan){1, dp, ts, true, 1};
    return wide || best < 0.97 * c0 ? pick : w;
}

/* ---- the tail plan alone ------------------------------------------------------
 * A product that would run whole on the 128 x 128 tile, its epilogue in the
 * tile (a plain product, or a bias of one row in the accumulators and an
 * activation: ViT-B/16's fc1 at batch 32, 6304 x 3072 x 768, 1200 tiles,
 * 4.5 waves and 12 tiles on the H200's 132 SMs), takes the tail plan
 * without a reduce over its whole output: gemm.wgsl's SK in two
 * dispatches, the tail's K slices into scratch (alpha applied, nothing
 * else) and the whole tiles into C with their epilogue, then
 * gemm_tail.wgsl sums each tail tile's slices into C with the bias and the
 * activation. One dispatch for both parts would need the kernel to choose
 * its output binding and activation at run time, and that cost the 128 x
 * 128 tile its registers: the accumulators went to local memory, fc1
 * above 0.79 -> 15.1 ms on an H100 (docs/PERFORMANCE.md, session 30). */

/* Whether g takes the tail plan (*dp tiles whole, the rest in *ts K slices:
 * where the compute units are known and the plan models 3% under the whole
 * tiles' waves) */
bool wgnn__gemm_tail_plan(const wgnn_context *ctx, const wgnn__gemm *g, uint32_t *dp, uint32_t *ts) {
    uint32_t units = ctx->knobs.compute_units;
    bool has_bias = g->bias.buf != NULL || g->bias.scratch >= 0;
    if (!units || ctx->knobs.gemm_waves == 0 || ctx->knobs.gemm_split >= 1 || g->batch != 1 || g->trans_a ||
        g->cols || g->pre != WGNN__PRE_NONE || g->res.buf || g->ln_y.buf || g->kw > 1 || g->sk_ts ||
        (has_bias && !wgnn__gemm_bias_init_ok(ctx, g)))
        return false;
    wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, g);
    if (!wgnn__gemm_is_big_tile(&t)) return false;
    uint64_t bm = (uint64_t)t.wy * t.tm, bn = (uint64_t)t.wx * t.tn;
    uint64_t tx = wgnn__ceil_div(g->n, bn), tiles = wgnn__ceil_div(g->m, bm) * tx;
    double p = (double)tiles / units * WAVE_FLOP_PER_BYTE / g->k;
    double c = tail_cost(tiles, wgnn__ceil_div(g->k, t.bk), units, p, dp, ts);
    if (c < 0 || c >= 0.97 * waves(tiles, units)) return false;
    /* A, B, C and the slices each in one binding (no row splits), u32
     * offsets (the strides: plan_product checks them for both routes) */
    uint64_t room = bind_room(ctx);
    uint64_t x = (uint64_t)*ts * (g->m - wgnn__gemm_tail_m0(g, &t, *dp)) * g->ldc;
    return ab_fit(ctx, g) && wgnn__gemm_c_extent(g) <= room && x <= room && g->c.off <= 0xFFFFFFFFull &&
           g->bias.off <= 0xFFFFFFFFull;
}

wgnn_status wgnn__gemm_plan_tail(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, uint32_t dp, uint32_t ts,
                                 bool *skipped) {
    const wgnn__gemm_tile t = wgnn__gemm_big_tile;
    uint32_t bm = t.wy * t.tm, bn = t.wx * t.tn;
    uint32_t tx = (uint32_t)wgnn__ceil_div(g->n, bn), tiles = (uint32_t)(wgnn__ceil_div(g->m, bm) * tx);
    uint32_t m0 = wgnn__gemm_tail_m0(g, &t, dp);
    uint64_t x_bytes = (uint64_t)ts * (g->m - m0) * g->ldc * 4;
    int sc = wgnn__plan_scratch(p, x_bytes);
    *skipped = sc < 0; /* no scratch slot left: the whole tiles' route */
    if (sc < 0) return WGNN_OK;
    bool has_bias = g->bias.buf != NULL || g->bias.scratch >= 0;
    /* the tail's slices into scratch */
    wgnn__gemm h = sliced(g, 1);
    h.c = (wgnn__gemm_operand){NULL, sc, 0, 0};
    h.beta = 0;
    h.act = WGNN__ACT_NONE;
    h.sk_dp = dp, h.sk_ts = ts, h.sk_part = 2;
    wgnn_status s = wgnn__gemm_plan(ctx, p, &h);
    if (s != WGNN_OK) return s;
    /* the whole tiles into C */
    h = *g;
    h.sk_dp = dp, h.sk_ts = ts, h.sk_part = 1;
    if ((s = wgnn__gemm_plan(ctx, p, &h)) != WGNN_OK) return s;
    /* the tail tiles' sums, bias and activation */
    bool v4 = g->n % 4 == 0 && g->ldc % 4 == 0 && g->c.off % 4 == 0; /* aligned starts are multiples of 16 bytes */
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    char pre[1536];
    snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\nconst HAS_BIAS: bool = %s;\nconst ACT: u32 = %uu;\n%s",
             WGNN__PARAMS_WGSL(TAIL_PARAMS), wg, has_bias ? "true" : "false", (unsigned)g->act,
             elem_wgsl(v4));
    const wgnn__pipe *pipe;
    if ((s = wgnn__pipeline(ctx, "gemm_tail", pre, NULL, 0, &pipe)) != WGNN_OK) return s;
    uint64_t c_start = 0, b_start = 0, c_first = 0, b_first = 0;
    uint64_t c_n = wgnn__gemm_c_extent(g), b_n = wgnn__gemm_bias_extent(g);
    wgnn__gemm_binding_start(ctx, g->c.off, 4, &c_start, &c_first);
    if (has_bias) wgnn__gemm_binding_start(ctx, g->bias.off, 4, &b_start, &b_first);
    tail_params q = {g->m,
                     g->n,
                     (uint32_t)g->ldc,
                     (uint32_t)c_first,
                     (uint32_t)b_first,
                     (uint32_t)g->bias_rs,
                     (uint32_t)g->bias_cs,
                     g->beta,
                     m0,
                     dp,
                     ts,
                     tx,
                     tiles - dp,
                     bm,
                     bn};
    uint64_t threads = (uint64_t)q.t_tiles * bm * bn / (v4 ? 4 : 1);
    uint32_t gx, gy;
    if ((s = wgnn__compute_2d_workgroup_count(ctx, wgnn__ceil_div(threads, wg), ctx->limits.maxComputeWorkgroupsPerDimension,
                                              "gemm", &gx, &gy)) != WGNN_OK)
        return s;
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__gemm_bind(d, &g->c, c_start, (c_first + c_n) * 4);
    wgnn__plan_bind_scratch(d, (uint32_t)sc, 0, x_bytes);
    if (has_bias) wgnn__gemm_bind(d, &g->bias, b_start, (b_first + b_n) * 4);
    else wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, NULL, false), 0, 0);
    return WGNN_OK;
}

bool wgnn__gemm_bias_pass_alone(const wgnn_context *ctx, uint32_t m, uint32_t n, uint32_t k, bool trans_b, bool b_f16) {
    wgnn__gemm g = {.m = m, .n = n, .k = k, .batch = 1, .lda = k, .ldb = trans_b ? k : n, .ldc = n, .bias_cs = 1,
                    .trans_b = trans_b, .b_f16 = b_f16, .alpha = 1, .beta = 1};
    g.bias.scratch = g.res.scratch = -1;
    uint32_t sk = split_count_shape(ctx, &g, true);
    bool bias_pass = (sk & BIAS_PASS) != 0, wide = (sk & WAVE_WIDE) != 0;
    sk &= ~(BIAS_PASS | WAVE_WIDE);
    if (!bias_pass) return false;
    wave_plan w = wave_choose(ctx, &g, sk, wide);
    if ((wide && !w.big) || w.s != 1 || w.ts != 0) return false;
    /* and the product without its bias on the same tile: a wide plan moves
     * a product with a bias onto the 128 x 128 tile, a plain one stays on a
     * smaller tile (ViT-B/16's q|k|v at batch 8 on the H200: 0.185 ms with
     * the bias pass, 0.196 plain on 64 x 64) */
    wgnn__gemm plain = sliced(&g, 1);
    wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, &plain);
    return !wide || wgnn__gemm_is_big_tile(&t);
}

/* gemm_reduce_ln.wgsl's shape for g's rows, when it takes them (a
 * LayerNorm asked for, rows of whole quads, every binding within the
 * device's limits, a row's quads in K <= 8 registers a thread): L lanes a
 * row (about 4 quads each, as reduce_rows), R rows a workgroup of up to
 * 256 threads, fewer where the rows would not make two workgroups a
 * compute unit (ViT-B/16 at batch 1: 197 rows). */
typedef struct ln_shape {
    uint32_t l, r, k, sg;
} ln_shape;

static bool ln_fused_shape(const wgnn_context *ctx, const wgnn__gemm *g, bool v4, ln_shape *o) {
    const WGPULimits *lim = &ctx->limits;
    if (!g->ln_y.buf || !v4 || g->ldc != g->n || g->ln_y.off % 4 || lim->maxStorageBuffersPerShaderStage < 7 ||
        wgpuBufferGetSize(g->ln_y.buf) > wgnn__gemm_binding_cap(ctx))
        return false;
    uint32_t most = lim->maxComputeInvocationsPerWorkgroup < lim->maxComputeWorkgroupSizeX
                        ? lim->maxComputeInvocationsPerWorkgroup
                        : lim->maxComputeWorkgroupSizeX;
    /* lanes: the fewest quads a lane (K) with at most 256 lanes a row, a
     * power of 2 or (past one subgroup) whole subgroups of them. One quad a
     * lane (768 values: 192 lanes) against 3 (64 lanes): ViT-B/16's out
     * projection with its norm at batch 32 on the H200 0.2361 against
     * 0.2464 ms, at batch 1 0.0280 against 0.0301 (docs/PERFORMANCE.md,
     * session 10) */
    uint32_t nq = g->n / 4, l = 0, k = 0;
    uint32_t sg0 = wgnn__row_lanes_subgroup(ctx, 2, 1024); /* the adapter's fixed subgroup size, or 0 */
    for (uint32_t kk = 1; kk <= 8 && !l; kk++) {
        uint32_t want = (nq + kk - 1) / kk, c = 1;
        if (sg0 && want > sg0) c = (want + sg0 - 1) / sg0 * sg0;
        else
            while (c < want) c *= 2;
        if (c <= 256 && c <= most) l = c, k = kk;
    }
    if (ctx->knobs.ln_lanes && ctx->knobs.ln_lanes <= most) l = ctx->knobs.ln_lanes, k = (nq + l - 1) / l;
    if (!l || k * 4 > 32) return false;
    uint32_t r = l < 256 ? 256 / l : 1, target = ctx->knobs.compute_units ? 2 * ctx->knobs.compute_units : 0;
    while (r > 1 && ((uint64_t)l * r > most || wgnn__ceil_div(g->m, r) < target)) r /= 2;
    uint32_t sg = wgnn__row_lanes_subgroup(ctx, l, l * r);
    /* common/row_reduce: a power of 2 lanes, or whole subgroups of them */
    if ((l & (l - 1)) && !(sg && l % sg == 0)) return false;
    *o = (ln_shape){l, r, k, sg};
    return true;
}

/* *skipped: nothing recorded, the plain route must run (the partials do
 * not fit a binding, or the plan has no scratch slot left). *ln_done: g's
 * LayerNorm (ln_y) written by the reduce too. */
static wgnn_status plan_split(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, wave_plan w, bool has_bias,
                              bool *skipped, bool *ln_done) {
    uint64_t mn = (uint64_t)g->m * g->n, bytes;
    uint32_t s_count = w.s;
    /* the tail's slices past the first: [ts - 1][rows from t_m0][n] after the partials */
    uint32_t t_bm = 128, t_bn = 128, t_tx = 0, t_m0 = 0;
    uint64_t extra = 0;
    if (w.ts) {
        wgnn__gemm h = sliced(g, 1);
        h.sk_dp = w.dp, h.sk_ts = w.ts;
        wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, &h);
        t_bm = t.wy * t.tm;
        t_bn = t.wx * t.tn;
        t_tx = (uint32_t)wgnn__ceil_div(g->n, t_bn);
        t_m0 = w.dp / t_tx * t_bm;
        extra = (uint64_t)(w.ts - 1) * (g->m - t_m0) * g->n;
    }
    *skipped = true;
    if (!wgnn__mul_u64(mn * 4, s_count, &bytes) || bytes + extra * 4 > wgnn__gemm_binding_cap(ctx)) return WGNN_OK;
    bytes += extra * 4;
    int sc = wgnn__plan_scratch(p, bytes);
    if (sc < 0) return WGNN_OK;
    *skipped = false;
    uint32_t kc = g->k / s_count;
    wgnn__gemm h = *g;
    h.batch = s_count;
    h.k = kc;
    h.a.bs = g->trans_a ? (uint64_t)kc * g->lda : kc;
    h.b.bs = g->trans_b ? kc : (uint64_t)kc * g->ldb;
    h.sk_dp = w.dp;
    h.sk_ts = w.ts;
    h.big_tile = w.big;
    h.kw = w.kw;
    h.c = (wgnn__gemm_operand){NULL, sc, 0, mn};
    h.ldc = g->n;
    h.bias = (wgnn__gemm_operand){NULL, -1, 0, 0};
    h.res = (wgnn__gemm_operand){NULL, -1, 0, 0};
    h.beta = 0;
    h.act = WGNN__ACT_NONE;
    h.ln_y = (wgnn__gemm_operand){NULL, -1, 0, 0};
    wgnn_status s = wgnn__gemm_plan(ctx, p, &h);
    if (s != WGNN_OK) return s;

    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    /* quads of a row a thread where every row, offset and stride allows */
    bool v4 = g->n % 4 == 0 && g->ldc % 4 == 0 && g->c.off % 4 == 0 &&
              (!g->res.buf || (g->ldr % 4 == 0 && g->res.off % 4 == 0));
    ln_shape ls;
    bool ln = ln_fused_shape(ctx, g, v4, &ls);
    if (ln) wg = ls.l * ls.r;
    char pre[2048], lnc[320] = "";
    if (ln)
        snprintf(lnc, sizeof lnc, "const L: u32 = %uu;\nconst R: u32 = %uu;\nconst K: u32 = %uu;\nconst SG: u32 = %uu;\n%s",
                 ls.l, ls.r, ls.k, ls.sg, wgnn__lanes_reduce_wgsl(ls.sg));
    snprintf(pre, sizeof pre,
             "%s%sconst WG: u32 = %uu;\nconst HAS_BIAS: bool = %s;\nconst HAS_RES: bool = %s;\nconst ACT: u32 = %uu;\n%s%s",
             ln && ls.sg ? "enable subgroups;\n" : "", WGNN__PARAMS_WGSL(REDUCE_PARAMS), wg, has_bias ? "true" : "false",
             g->res.buf ? "true" : "false", (unsigned)g->act, lnc,
             elem_wgsl(v4));
    const wgnn__pipe *pipe;
    if ((s = wgnn__pipeline(ctx, ln ? "gemm_reduce_ln" : "gemm_reduce", pre, NULL, 0, &pipe)) != WGNN_OK) return s;
    reduce_params q = {g->m,
                       g->n,
                       s_count,
                       (uint32_t)g->ldc,
                       (uint32_t)g->c.off,
                       has_bias ? (uint32_t)g->bias.off : 0,
                       (uint32_t)g->bias_rs,
                       (uint32_t)g->bias_cs,
                       g->beta,
                       (uint32_t)g->res.off,
                       (uint32_t)g->ldr,
                       t_m0,
                       w.dp,
                       w.ts ? w.ts - 1 : 0,
                       t_tx,
                       t_bm,
                       t_bn,
                       ln ? (uint32_t)wgnn__ceil_div(g->m, ls.r) : 0,
                       ln ? (uint32_t)g->ln_y.off : 0,
                       g->ln_eps,
                       (float)g->n};
    uint32_t gx, gy;
    if ((s = wgnn__compute_2d_workgroup_count(ctx, ln ? q.n_groups : wgnn__ceil_div(mn / (v4 ? 4 : 1), wg),
                                              ctx->limits.maxComputeWorkgroupsPerDimension, "gemm", &gx, &gy)) != WGNN_OK)
        return s;
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind_scratch(d, (uint32_t)sc, 0, bytes);
    wgnn__plan_bind(d, g->c.buf, 0, 0);
    wgnn__plan_bind(d, has_bias ? g->bias.buf : wgnn__make_optional_binding(ctx, NULL, false), 0, 0);
    wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, g->res.buf, false), 0, 0);
    if (ln) {
        wgnn__plan_bind(d, g->ln_y.buf, 0, 0);
        wgnn__plan_bind(d, g->ln_w, 0, 0);
        wgnn__plan_bind(d, g->ln_b, 0, 0);
    }
    *ln_done = ln;
    return WGNN_OK;
}

/* the u32 offsets and strides of g's partial products */
static bool split_fits_u32(const wgnn__gemm *g) {
    return g->c.off <= 0xFFFFFFFFull && g->bias.off <= 0xFFFFFFFFull && g->res.off <= 0xFFFFFFFFull &&
           g->ldr <= 0xFFFFFFFFull && (uint64_t)g->k * (g->trans_a ? g->lda : 1) <= 0xFFFFFFFFull &&
           (uint64_t)g->k * (g->trans_b ? 1 : g->ldb) <= 0xFFFFFFFFull;
}

/* g's split route: split_count's slices (or a bias pass), wave_choose's
 * plan, plan_split's product into scratch and its reduce. *split: the
 * product was planned this way; else *plain is the product the plain
 * route runs: g, with K groups where they take every slice
 * (wgnn__gemm_kw: on the small-M tile, kw of the slices as groups inside
 * each workgroup; the epilogue then runs in the tile). */
wgnn_status wgnn__gemm_plan_split(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, bool *split, bool *ln_done,
                                  wgnn__gemm *plain) {
    *split = false;
    *plain = *g;
    /* a part of a plan made already (the tail plan's); gathered columns,
     * whose K slices no offset into B can express */
    if (g->sk_ts || g->cols) return WGNN_OK;
    bool hb = g->bias.buf != NULL || g->bias.scratch >= 0;
    uint32_t sk = split_count(ctx, g, hb);
    bool bias_pass = (sk & BIAS_PASS) != 0, wide = (sk & WAVE_WIDE) != 0;
    sk &= ~(BIAS_PASS | WAVE_WIDE);
    /* offsets and strides of the partial products must stay u32 */
    if ((sk > 1 || bias_pass) && split_fits_u32(g)) {
        /* a product moved onto the 128 x 128 tile for a wave plan that
         * then makes none goes the plain route (its tile and bias) */
        wave_plan w = wave_choose(ctx, g, sk, wide);
        if (!bias_pass && !w.big && !w.ts && w.s > 1) {
            w.kw = wgnn__gemm_kw(ctx, g, w.s);
            w.s /= w.kw;
            if (w.s == 1) {
                plain->kw = w.kw;
                return WGNN_OK;
            }
        }
        bool skipped = true;
        wgnn_status s = wide && !w.big ? WGNN_OK : plan_split(ctx, p, g, w, hb, &skipped, ln_done);
        if (s != WGNN_OK) return s;
        *split = !skipped;
    }
    return WGNN_OK;
}
