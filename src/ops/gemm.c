/* gemm.c - the shared GEMM planner (shaders/gemm.wgsl, gemm_reduce.wgsl,
 * gemv.wgsl, gemv4.wgsl, gemvn.wgsl): wgnn__gemm_plan. The rows that run on it (mm,
 * bmm, matmul, linear, addmm) are in gemm_rows.c; conv2d's im2col route
 * calls it too (src/ops/conv.c).
 *
 * One kernel with variants (prelude consts): the register tile (threads
 * WX x WY, TM x TN values each, K depth BK), transposes, f16 B storage, a
 * bias epilogue with any row/column strides (beta * bias, PyTorch's addmm
 * and linear) and a fused activation; A and B loaded four floats at a time
 * (VA, VB) where their strides, offsets and extents are multiples of 4. The
 * tile is picked per problem: the 128 x 128 tile when the problem gives it
 * enough workgroups to fill a large GPU, else 128 x 64, else 64 x 64, else
 * 32 x 32 (K tiles of 16 but for 128 x 128 and 32 x 32: as measured on the
 * H200, docs/PERFORMANCE.md). WGNN_GEMM_TILE=WXxWYxTMxTN[xBK] forces one
 * (benchmarks, docs/PERFORMANCE.md). Large products with a bias, and
 * few-tile products with a long K, run through gemm_reduce.wgsl (the bias
 * pass, split-K); where the GPU's compute units are known, those are planned
 * in whole waves of them (the wave plan): src/ops/gemm_split.c, docs/OPS.md.
 * At most 4 rows run on a GEMV kernel instead: gemv.wgsl / gemv4.wgsl
 * against a transposed B (linear at decode), gemvn.wgsl against an
 * untransposed one whose rows are whole quads (wgnn__gemm_gemvn_ok).
 *
 * Operands larger than one storage binding are split: over the batch
 * (binding ranges start at aligned offsets, the remainder goes in the
 * params), and, for one matrix too large, over rows of A and C. */
#include "gemm.h"

#include "norm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GEMM_PARAMS(X, S)                                                                         \
    X(S, u32, m) X(S, u32, n) X(S, u32, k) X(S, u32, lda) X(S, u32, ldb) X(S, u32, ldc)           \
    X(S, u32, a_off) X(S, u32, b_off) X(S, u32, c_off) X(S, u32, bias_off) X(S, u32, a_bs)        \
    X(S, u32, b_bs) X(S, u32, c_bs) X(S, u32, bias_bs) X(S, u32, bias_rs) X(S, u32, bias_cs)      \
    X(S, f32, alpha) X(S, f32, beta) X(S, f32, eps) X(S, u32, res_off) X(S, u32, res_bs) X(S, u32, ldr)      \
    X(S, u32, sk_dp) X(S, u32, sk_ts) X(S, u32, sk_tx) X(S, u32, sk_total) X(S, u32, sk_m0) X(S, u32, sk_x)      \
    X(S, u32, sk_u0)
WGNN__PARAMS_STRUCT(gemm_params, GEMM_PARAMS);
WGNN__PARAMS_CHECK(gemm_params, GEMM_PARAMS)

#define BIG_TILE {16, 16, 8, 8, 8, 0, false} /* 128 x 128: k_tiles[0] and wgnn__gemm_big_tile */
static const wgnn__gemm_tile k_tiles[] = {
    BIG_TILE,              /* 128 x 128 (plain products only, see pick_tile) */
    {16, 16, 8, 4, 16, 0, false}, /* 128 x 64, K tiles of 16 */
    {16, 16, 4, 4, 16, 0, false}, /* 64 x 64, K tiles of 16 (whole vec4 loads a thread) */
    {8, 8, 4, 4, 8, 0, false}, /* 32 x 32 */
};


/* 32 x 64, K tiles of 16, 64 threads as 16 x 4 (8 x 4 a thread). Against
 * the 32 x 128 tile (16 x 8 threads) it first replaced, on the H200 at
 * ViT-B/16's batch 1 (M = 197, us fc1 / fc2 / q|k|v / out, session 10 call
 * 3): 55.7 / 53.3 / 49.1 / 27.6 -> 55.5 / 53.5 / 45.2 / 27.2 on 8 x 8
 * threads at 4 x 8 a thread (session 11). Its threads as 16 x 4 at 8 x 4 a
 * thread (each B value read from workgroup memory feeds 8 rows, not 4;
 * 105 registers against 101), session 14 calls 1 and 2: 53.2 / 53.8 / 42.2
 * / 26.7 -> 51.7 / 52.1 / 40.5 / 27.3, the whole encoder's GPU span 2.052
 * -> 1.989 ms (SigLIP-B/16 2.132 -> 2.075); eight other tiles of 32-64 rows
 * (BK 8, 16, 32) were slower or within 0.3% (docs/PERFORMANCE.md). Its K
 * slices: split_count (gemm_split.c). */
static const wgnn__gemm_tile k_small_tile = {16, 4, 8, 4, 16, 0, false};

const wgnn__gemm_tile wgnn__gemm_big_tile = BIG_TILE;

bool wgnn__gemm_small_tile_ok(const wgnn_context *ctx) {
    return ctx->limits.maxComputeInvocationsPerWorkgroup >= k_small_tile.wx * k_small_tile.wy &&
           ctx->limits.maxComputeWorkgroupSizeX >= k_small_tile.wx && ctx->limits.maxComputeWorkgroupSizeY >= k_small_tile.wy;
}


uint32_t wgnn__gemv_lanes(const wgnn_context *ctx, uint64_t pieces, uint64_t per_lane, uint32_t *wg) {
    *wg = wgnn__clamp_workgroup_size(ctx, ctx->knobs.gemv_wg ? ctx->knobs.gemv_wg : 256u);
    uint32_t lanes = 32;
    while (lanes < *wg && (uint64_t)lanes * per_lane < pieces) lanes *= 2;
    if (ctx->knobs.gemv_lanes) lanes = ctx->knobs.gemv_lanes;
    return lanes < *wg ? lanes : *wg;
}

/* gemvn.wgsl's threads (*wg: WGNN_GEMV_WG or 512, halved until its
 * partial sums fit) and column quads a workgroup: the most from 8,
 * halving, that still give a workgroup a compute unit (256 workgroups
 * where the units are unknown), at least two; WGNN_GEMVN_QUADS forces
 * the quads (within *wg). Fewer quads mean more k-lanes a column, each
 * walking fewer rows of B, but each of a warp's k-lanes reads its own
 * row: one quad reads 16 bytes of a row, four 64. On an H100
 * (docs/PERFORMANCE.md, session 35), ms at 256 threads: 1 x 4096 x 4096
 * at 1 / 2 / 4 / 8 / 16 quads 0.086 / 0.046 / 0.043 / 0.051 / 0.079;
 * 4 x 4096 x 4096 0.085 / 0.056 / 0.058 / 0.077 / 0.104; 1 x 3072 x 768
 * (96 workgroups at two quads) at 1 / 2 / 4 / 8 0.017 / 0.014 / 0.017 /
 * 0.021. Four workgroups a unit, down to one quad (the rule before), took
 * one quad for all three. At 512 threads the three took 0.037 / 0.051 /
 * 0.014 at the quads this rule gives (4 / 4 / 2), against 0.044 / 0.057
 * / 0.014 at 256; 64 threads 0.059-0.092, 1024 0.038 / (4 rows do not
 * fit 48 KiB) / 0.013. */
static uint32_t gemvn_quads(const wgnn_context *ctx, const wgnn__gemm *g, uint32_t mr, uint32_t *wg) {
    /* a power of two (the k-lanes' tree) whose partial sums, WG * MR
     * vec4, fit workgroup memory (1024 threads at 4 rows are 64 KiB) */
    *wg = wgnn__pow2_floor(wgnn__clamp_workgroup_size(ctx, ctx->knobs.gemv_wg ? ctx->knobs.gemv_wg : 512u));
    while (*wg > 1 && (uint64_t)*wg * mr * 16u > ctx->limits.maxComputeWorkgroupStorageSize) *wg /= 2;
    uint64_t want = ctx->knobs.compute_units ? ctx->knobs.compute_units : 256, quads = g->n / 4;
    uint32_t cq = 8;
    while (cq > 2 && wgnn__ceil_div(quads, cq) * g->batch < want) cq /= 2;
    if (ctx->knobs.gemvn_quads) cq = ctx->knobs.gemvn_quads;
    return cq < *wg ? cq : *wg;
}

/* gemm.wgsl's BIAS_INIT: a bias of one row (bias_rs = 0) starts the
 * accumulators (as beta / alpha * bias), so the epilogue has none to add.
 * Every tile takes it: on the tiles other than 128 x 128 the unrolled bias
 * epilogue costs more (ViT-B/16's out projection at batch 32 on 128 x 64,
 * 6304 x 768 x 768, 0.260 -> 0.234 ms on the H200), and on 128 x 128 it
 * beats the plain product and a bias pass since the activation left the
 * store loop (gemm.wgsl; on an H100, 6304 x 3072 x 768 with bias and GELU
 * 0.842 -> 0.797 ms, the plain product 0.787; with the bias alone, 6304 x
 * 2304 x 768, 0.614 -> 0.572: docs/PERFORMANCE.md, session 24).
 * WGNN_GEMM_BIAS_INIT=0 turns it off (measurements). */
bool wgnn__gemm_bias_init_ok(const wgnn_context *ctx, const wgnn__gemm *g) {
    return g->bias_rs == 0 && g->alpha != 0.0f && ctx->knobs.gemm_bias_init != 0;
}

static bool bias_init_on(const wgnn_context *ctx, const wgnn__gemm *g) {
    return (g->bias.buf != NULL || g->bias.scratch >= 0) && wgnn__gemm_bias_init_ok(ctx, g);
}

/* Where the compute units are known, a plain product (no bias, residual
 * or activation: the tile's plain store loop) of more than 256 rows whose
 * 128 x 128 tiles make one whole wave of them (more than one a unit, at
 * most two: the tile runs two an SM) takes that tile. On the H200 (132
 * SMs; docs/PERFORMANCE.md, session 8): ViT-B/16's q|k|v without its bias
 * at batch 8 (1576 x 2304 x 768, 234 tiles) 0.196 ms on 64 x 64 -> 0.174;
 * outside the window it lost: 312 tiles (1576 x 3072 x 768) 0.233 ->
 * 0.259, 78 tiles (1576 x 768 x 768) 0.093 -> 0.099. */
bool wgnn__gemm_is_big_tile(const wgnn__gemm_tile *t) {
    const wgnn__gemm_tile *b = &wgnn__gemm_big_tile; /* any K depth (WGNN_GEMM_TILE) */
    return t->wx == b->wx && t->wy == b->wy && t->tm == b->tm && t->tn == b->tn && !t->gemv_mr;
}

static bool one_wave(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias) {
    uint32_t units = ctx->knobs.compute_units;
    if (!units || ctx->knobs.gemm_waves == 0 || has_bias || g->res.buf || g->act != WGNN__ACT_NONE || g->trans_a ||
        g->cols || g->pre != WGNN__PRE_NONE || g->m <= WGNN__GEMM_SMALL_M ||
        ctx->limits.maxComputeInvocationsPerWorkgroup < 256 || ctx->limits.maxComputeWorkgroupSizeX < 16 ||
        ctx->limits.maxComputeWorkgroupSizeY < 16)
        return false;
    uint64_t tiles = ((uint64_t)g->m + 127) / 128 * (((uint64_t)g->n + 127) / 128);
    if (tiles * 128 * 128 * 4 > (uint64_t)g->m * g->n * 5) return false; /* over a fifth padding */
    tiles *= g->batch;
    return tiles > units && tiles <= 2ull * units;
}

wgnn__gemm_tile wgnn__gemm_pick_tile(const wgnn_context *ctx, const wgnn__gemm *g) {
    bool has_bias = g->bias.buf != NULL || g->bias.scratch >= 0;
    uint32_t gemv_rows = g->m <= 1 ? 1u : g->m <= 2 ? 2u : 4u; /* the GEMV kernels' MR */
    if (wgnn__gemm_gemvn_ok(g)) {
        uint32_t wg;
        uint32_t cq = gemvn_quads(ctx, g, gemv_rows, &wg);
        return (wgnn__gemm_tile){wg, cq, 0, 0, 0, gemv_rows, true};
    }
    if (wgnn__gemm_gemv_ok(g)) {
        /* gemv.wgsl: each lane walks its row in about two steps of four
         * k's (gemv4 sets its own lanes below) */
        uint32_t wg, lanes = wgnn__gemv_lanes(ctx, g->k, 8, &wg);
        return (wgnn__gemm_tile){wg, lanes, 0, 0, 0, gemv_rows, false};
    }
    if (ctx->knobs.gemm_tile[0]) {
        const uint32_t *t = ctx->knobs.gemm_tile;
        return (wgnn__gemm_tile){t[0], t[1], t[2], t[3], t[4], 0, false};
    }
    if (g->sk_ts || g->big_tile) return k_tiles[0]; /* a wave plan is made for the 128 x 128 tile alone */
    if (one_wave(ctx, g, has_bias)) return k_tiles[0];
    /* few rows (a ViT block at batch 1: M = 197): 32-row tiles waste the
     * least padding and, with split-K, were fastest or within 5% of it in a
     * sweep of 9 tiles x 5 slice counts on the H200 (docs/PERFORMANCE.md;
     * 32 x 64 since session 11, k_small_tile) */
    if (g->m <= WGNN__GEMM_SMALL_M && wgnn__gemm_small_tile_ok(ctx) && !g->cols) return k_small_tile;
    uint32_t most = ctx->limits.maxComputeInvocationsPerWorkgroup;
    for (size_t i = 0; i < sizeof k_tiles / sizeof k_tiles[0]; i++) {
        const wgnn__gemm_tile *t = &k_tiles[i];
        if (t->wx * t->wy > most || t->wx > ctx->limits.maxComputeWorkgroupSizeX ||
            t->wy > ctx->limits.maxComputeWorkgroupSizeY)
            continue;
        /* The 128 x 128 tile with a bias in its epilogue (store_all) took
         * 4.58 ms at 4096^3 on the H200, the plain product 3.86 and with a
         * bias pass after it 3.93: it takes a bias only in its
         * accumulators (BIAS_INIT), else products with a bias take the
         * next tile, or (large ones) the plain product and a bias pass
         * (split_count, gemm_split.c). A transposed A and conv2d's
         * gathered columns on this tile are unmeasured: left out too. */
        if (t->tm == 8 && t->tn == 8 && (g->trans_a || g->cols || (has_bias && !wgnn__gemm_bias_init_ok(ctx, g))))
            continue;
        /* a 128-wide tile that would be over a quarter padding (conv2d's
         * 64 output channels: 3.13 ms on 128 x 64 against 2.37 on 64 x 64) */
        uint64_t bm = (uint64_t)t->wy * t->tm, bn = (uint64_t)t->wx * t->tn;
        if ((bm > 64 || bn > 64) &&
            wgnn__ceil_div(g->m, bm) * bm * wgnn__ceil_div(g->n, bn) * bn * 4 > (uint64_t)g->m * g->n * 5)
            continue;
        uint64_t groups = wgnn__ceil_div(g->m, (uint64_t)t->wy * t->tm) * wgnn__ceil_div(g->n, (uint64_t)t->wx * t->tn) * g->batch;
        if (groups >= 512 || i + 1 == sizeof k_tiles / sizeof k_tiles[0]) return *t;
        /* conv2d's gathered columns (cols): 128 x 64 where it gives a
         * workgroup a compute unit (128 where the units are unknown), else
         * 64 x 64, never smaller. On an H100 (docs/PERFORMANCE.md, session
         * 35), ms: 3x3 64 -> 64 at 224^2 / 56^2, batch 8 (128-row tiles
         * half padding): 1.05 / 0.080 on 64 x 64 against 1.25 / 0.094 on the
         * small-M tile; 3x3 128 -> 256 stride 2 at 56^2, batch 8 (196 tiles
         * of 128 x 64): 0.166 against 0.200 on 64 x 64 and 0.218 small-M;
         * grouped, 32 / 64 output channels a group: 0.083 / 0.151 on 64 x
         * 64 against 0.124 / 0.231 small-M and 0.094 / 0.197 on 32 x 32 */
        if (g->cols && (t == &k_tiles[2] || groups >= (ctx->knobs.compute_units ? ctx->knobs.compute_units : 128u)))
            return *t;
    }
    return k_tiles[2];
}

/* gemm.wgsl's DB: two staging buffers (one barrier a K tile) on the 128 x
 * 128 tile, where they fit the device's workgroup memory. On the H200
 * (docs/PERFORMANCE.md, session 10) ViT-B/16's products at batch 32 took
 * 0.5-1% less with it (q|k|v 6304 x 2304 x 768: 0.5703 -> 0.5648 ms), while
 * on the smaller tiles it lost: the batch-1 products on 32 x 128 (fc2 197 x
 * 768 x 3072: 0.0529 -> 0.0697 ms) and 1576 x 3072 x 768 (0.2325 ->
 * 0.2695). WGNN_GEMM_DB=0 turns it off, =1 puts it on every tile. */
/* bytes of one staging buffer pair (A's and B's K tile, rows padded by 4
 * floats) of tile t in gemm.wgsl */
static uint64_t staged_bytes(const wgnn__gemm_tile *t) {
    return (uint64_t)t->bk * ((uint64_t)t->wy * t->tm + 4 + (uint64_t)t->wx * t->tn + 4) * 4;
}

static bool double_buffer(const wgnn_context *ctx, const wgnn__gemm_tile *t, const wgnn__gemm *g) {
    uint64_t bytes = 2 * staged_bytes(t);
    /* not for a float16 B read along n (the encoders' f16 weights, [k, n]):
     * fc1 at batch 32 (6304 x 3072 x 768, bias, GELU) on an H100 took
     * 0.925 ms with two buffers, 0.894 with one (docs/PERFORMANCE.md,
     * session 24 call 9) */
    bool f16n = g->b_f16 && !g->trans_b;
    bool on = ctx->knobs.gemm_db == 1 || (ctx->knobs.gemm_db != 0 && wgnn__gemm_is_big_tile(t) && !f16n);
    return on && bytes <= ctx->limits.maxComputeWorkgroupStorageSize;
}

/* K groups inside a workgroup (gemm.wgsl's KW) on the small-M tile: of the
 * s K slices split_count gives a product, kw (a divisor of s, at most
 * WGNN_GEMM_KW, default 4) run as groups of one workgroup on the same
 * output tile, each with its own staging buffers, summed through workgroup
 * memory at the end; the other s / kw stay batch entries with a reduce
 * (none when kw = s). Where the compute units are known, kw is the one
 * with the fewest slices' worth of threads on the busiest unit,
 * ceil(tiles * s / kw / units) * kw, the largest of equals (fewer partial
 * products): a workgroup of kw groups is kw times the unit of work, and
 * too few of them leave units idle. On the H200 at ViT-B/16's batch 1
 * (session 17 call 1, us, kw = 1 -> the pick): q|k|v (252 tiles, s = 3)
 * 41.9 -> 38.4 at kw = 3; the out projection (84 tiles, s = 6) 27.5 ->
 * 24.8 at 2 (28.0 at 3); fc2 (84, 6) 50.9 -> 49.9 at 2 (66.5 at 3: 168
 * workgroups on 132 SMs); fc1 (336, 2) 52.2 -> 52.4. Unknown units: the
 * largest kw. Products of at most WGNN__GEMM_SMALL_M rows on a tile that
 * WGNN_GEMM_TILE forces take groups too (measurements: session 17 calls
 * 5-7, a 40 x 128 tile in 4 groups, one workgroup of 640 threads an SM,
 * took fc1 51.2 -> 48.5 us alone but the encoder's span 1.917 -> 1.929 ms:
 * not planned). */
uint32_t wgnn__gemm_kw(const wgnn_context *ctx, const wgnn__gemm *g, uint32_t s) {
    uint32_t most = ctx->knobs.gemm_kw < 0 ? 4u : (uint32_t)ctx->knobs.gemm_kw;
    if (s < 2 || most < 2 || g->sk_ts || g->big_tile || g->m > WGNN__GEMM_SMALL_M) return 1;
    wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, g); /* k_small_tile, or WGNN_GEMM_TILE's */
    if (t.gemv_mr || wgnn__gemm_is_big_tile(&t) || double_buffer(ctx, &t, g)) return 1;
    const WGPULimits *lim = &ctx->limits;
    uint32_t nt = t.wx * t.wy;
    uint64_t staged = staged_bytes(&t); /* bytes a group */
    uint64_t tiles = wgnn__ceil_div(g->m, (uint64_t)t.wy * t.tm) * wgnn__ceil_div(g->n, (uint64_t)t.wx * t.tn);
    uint32_t units = ctx->knobs.compute_units, best = 1;
    uint64_t best_cost = units ? wgnn__ceil_div(tiles * s, units) : 0;
    for (uint32_t kw = 2; kw <= most && kw <= s; kw++) {
        if (s % kw || nt * kw > lim->maxComputeInvocationsPerWorkgroup || nt * kw > lim->maxComputeWorkgroupSizeX ||
            kw * staged > lim->maxComputeWorkgroupStorageSize)
            continue;
        uint64_t cost = units ? wgnn__ceil_div(tiles * (s / kw), units) * kw : 0;
        if (cost <= best_cost) best = kw, best_cost = cost;
    }
    return best;
}

/* One operand's footprint: elements from its offset that one batch entry
 * touches (extent), its batch stride, element size. */
typedef struct span {
    const wgnn__gemm_operand *o;
    uint64_t extent, esz;
} span;

uint64_t wgnn__gemm_binding_cap(const wgnn_context *ctx) {
    uint64_t cap = ctx->limits.maxStorageBufferBindingSize;
    if (cap > 0xFFFFFFFCull) cap = 0xFFFFFFFCull; /* u32 indices in the shader */
    return cap;
}

void wgnn__gemm_bind(wgnn__dispatch *d, const wgnn__gemm_operand *o, uint64_t start_bytes, uint64_t bytes) {
    if (o->buf) wgnn__plan_bind(d, o->buf, start_bytes, bytes);
    else wgnn__plan_bind_scratch(d, (uint32_t)o->scratch, start_bytes, bytes);
}

/* The rows from a wave-balanced product's first tail tile's on */
static uint64_t sk_rows(const wgnn__gemm *g, const wgnn__gemm_tile *t) { return g->m - wgnn__gemm_tail_m0(g, t, g->sk_dp); }

/* C's elements from its first (at ldc) that a wave-balanced product's
 * dispatch writes: C and the extras after it (sk_ts - 1 copies of the tail
 * rows), C alone (the whole tiles), or sk_ts copies of the tail rows (the
 * slices alone: C is their scratch) */
static uint64_t c_extent(const wgnn__gemm *g, const wgnn__gemm_tile *t) {
    uint64_t c = wgnn__gemm_c_extent(g);
    if (!g->sk_ts || g->sk_part == 1) return c;
    if (g->sk_part == 2) return (uint64_t)g->sk_ts * sk_rows(g, t) * g->ldc;
    return c + (uint64_t)(g->sk_ts - 1) * sk_rows(g, t) * g->ldc;
}

void wgnn__gemm_binding_start(const wgnn_context *ctx, uint64_t e0, uint64_t esz, uint64_t *start, uint64_t *first) {
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
    *start = e0 * esz / align * align;
    *first = (e0 * esz - *start) / esz;
}

/* Records batches [b0, b0 + cnt) of g, each operand bound from an aligned
 * offset at or below its first element. */
static wgnn_status record(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe, const wgnn__gemm_tile *t,
                          const wgnn__gemm *g, uint32_t b0, uint32_t cnt, const span sp[5], bool has_bias) {
    uint64_t start[5] = {0}, first[5] = {0}, bytes[5] = {0};
    bool has_res = g->res.buf != NULL;
    for (int i = 0; i < 5; i++) {
        if ((i == 3 && !has_bias) || (i == 4 && !has_res)) continue;
        wgnn__gemm_binding_start(ctx, sp[i].o->off + (uint64_t)b0 * sp[i].o->bs, sp[i].esz, &start[i], &first[i]);
        bytes[i] = ((first[i] + (uint64_t)(cnt - 1) * sp[i].o->bs + sp[i].extent) * sp[i].esz + 3) & ~3ull;
    }
    gemm_params q = {g->m,
                     g->n,
                     g->k,
                     (uint32_t)g->lda,
                     (uint32_t)g->ldb,
                     (uint32_t)g->ldc,
                     (uint32_t)first[0],
                     (uint32_t)first[1],
                     (uint32_t)first[2],
                     has_bias ? (uint32_t)first[3] : 0,
                     (uint32_t)g->a.bs,
                     (uint32_t)g->b.bs,
                     (uint32_t)g->c.bs,
                     has_bias ? (uint32_t)g->bias.bs : 0,
                     (uint32_t)g->bias_rs,
                     (uint32_t)g->bias_cs,
                     g->alpha,
                     g->beta,
                     g->eps,
                     (uint32_t)first[4],
                     has_res ? (uint32_t)g->res.bs : 0,
                     (uint32_t)g->ldr,
                     0, 0, 0, 0, 0, 0, 0};
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    uint64_t gx, gy;
    if (g->sk_ts) { /* one batch entry, its workgroups counted flat (gemm.wgsl's SK) */
        uint64_t bm = (uint64_t)t->wy * t->tm, bn = (uint64_t)t->wx * t->tn;
        uint64_t tx = wgnn__ceil_div(g->n, bn), tiles = tx * wgnn__ceil_div(g->m, bm);
        q.sk_dp = g->sk_dp;
        q.sk_ts = g->sk_ts;
        q.sk_tx = (uint32_t)tx;
        q.sk_total = (uint32_t)(g->sk_dp + (tiles - g->sk_dp) * g->sk_ts);
        q.sk_m0 = wgnn__gemm_tail_m0(g, t, g->sk_dp);
        q.sk_x = (uint32_t)(first[2] + (uint64_t)g->m * g->ldc);
        uint64_t wgs = q.sk_total;
        if (g->sk_part == 1) q.sk_total = g->sk_dp, wgs = g->sk_dp;
        if (g->sk_part == 2) { /* C is [sk_ts][rows from sk_m0][ldc]: slice 0's rows at c_off - sk_m0 rows (u32 wraps back) */
            q.sk_u0 = g->sk_dp;
            wgs = q.sk_total - g->sk_dp;
            q.c_off = (uint32_t)(first[2] - (uint64_t)q.sk_m0 * g->ldc);
            q.sk_x = (uint32_t)(first[2] + sk_rows(g, t) * g->ldc);
        }
        uint32_t x, y;
        wgnn_status s = wgnn__compute_2d_workgroup_count(ctx, wgs, maxd, "gemm", &x, &y);
        if (s != WGNN_OK) return s;
        gx = x;
        gy = y;
    } else if (t->gemv_mr) {
        uint32_t x, y;
        uint64_t cols = t->gemv_n ? 4ull * t->wy : t->wx / t->wy; /* output columns a workgroup */
        wgnn_status s = wgnn__compute_2d_workgroup_count(ctx, wgnn__ceil_div(g->n, cols), maxd, "gemm", &x, &y);
        if (s != WGNN_OK) return s;
        gx = x;
        gy = y;
    } else {
        gx = wgnn__ceil_div(g->n, (uint64_t)t->wx * t->tn);
        gy = wgnn__ceil_div(g->m, (uint64_t)t->wy * t->tm);
    }
    if (gx > maxd || gy > maxd)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "gemm: a %u x %u output needs %llu x %llu workgroups, past the device's "
                         "maxComputeWorkgroupsPerDimension (%u)",
                         g->m, g->n, (unsigned long long)gx, (unsigned long long)gy, maxd);
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, (uint32_t)gx, (uint32_t)gy, cnt);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < 3; i++) wgnn__gemm_bind(d, sp[i].o, start[i], bytes[i]);
    if (has_bias) wgnn__gemm_bind(d, sp[3].o, start[3], bytes[3]);
    else wgnn__gemm_bind(d, sp[0].o, start[0], bytes[0]); /* unused: any read-only buffer */
    if (has_res) wgnn__gemm_bind(d, sp[4].o, start[4], bytes[4]);
    else wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, NULL, false), 0, 0);
    if (g->pre == WGNN__PRE_RMS_W) wgnn__plan_bind(d, g->prew, 0, 0); /* gemv4 only (others ran a pre-pass) */
    return WGNN_OK;
}

/* g with everything fitting one binding per batch entry. */
static wgnn_status plan_batches(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe, const wgnn__gemm_tile *t,
                                const wgnn__gemm *g, bool has_bias) {
    uint64_t cap = wgnn__gemm_binding_cap(ctx);
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
    bool has_res = g->res.buf != NULL;
    span sp[5] = {
        {&g->a, wgnn__gemm_a_extent(g), 4},
        {&g->b, wgnn__gemm_b_extent(g), g->b_f16 ? 2u : 4u},
        {&g->c, c_extent(g, t), 4},
        {&g->bias, wgnn__gemm_bias_extent(g), 4},
        {&g->res, wgnn__gemm_res_extent(g), 4},
    };
    uint64_t per = ctx->limits.maxComputeWorkgroupsPerDimension;
    if (per > g->batch) per = g->batch;
    for (int i = 0; i < 5; i++) {
        if ((i == 3 && !has_bias) || (i == 4 && !has_res)) continue;
        uint64_t room = cap / sp[i].esz;
        uint64_t need = sp[i].extent + align / sp[i].esz + 1;
        if (need > room)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "gemm: one %s matrix spans %llu bytes, past the device's maxStorageBufferBindingSize "
                             "(%llu bytes)",
                             i == 0 ? "A" : i == 1 ? "B" : i == 2 ? "C" : i == 3 ? "bias" : "residual",
                             (unsigned long long)(sp[i].extent * sp[i].esz),
                             (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
        if (sp[i].o->bs) {
            uint64_t c = (room - need) / sp[i].o->bs + 1;
            if (c < per) per = c;
        }
        /* u32 element indices inside the binding */
        if ((uint64_t)(per - 1) * sp[i].o->bs + sp[i].extent + align > 0xFFFFFFFFull) per = 1;
    }
    for (uint64_t b0 = 0; b0 < g->batch; b0 += per) {
        uint64_t cnt = g->batch - b0 < per ? g->batch - b0 : per;
        wgnn_status s = record(ctx, p, pipe, t, g, (uint32_t)b0, (uint32_t)cnt, sp, has_bias);
        if (s != WGNN_OK) return s;
    }
    return WGNN_OK;
}

/* 16-byte loads when every row and offset of A and W is a multiple of 4
 * elements (shaders/gemv4.wgsl) */
static bool gemv4_ok(const wgnn__gemm *g, const wgnn__gemm_tile *t) {
    return t->gemv_mr && !t->gemv_n && g->k % 4 == 0 && g->lda % 4 == 0 && g->ldb % 4 == 0 && g->a.off % 4 == 0 &&
           g->b.off % 4 == 0 && g->a.bs % 4 == 0 && g->b.bs % 4 == 0;
}

/* linear's prologue as a pass of its own: A's rows -> scratch, then the
 * product on it (where the GEMV kernel cannot take it on the fly). */
static wgnn_status plan_pre_pass(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g) {
    uint64_t row = wgnn__gemm_a_row(g);
    if (g->batch != 1 || g->trans_a || g->lda != row)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "gemm: a prologue needs one batch of contiguous rows of A");
    uint64_t bytes = (uint64_t)g->m * g->k * 4u;
    int sc = bytes <= wgnn__gemm_binding_cap(ctx) ? wgnn__plan_scratch(p, bytes) : -1;
    if (sc < 0)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "linear: the %s input (%llu bytes) passes the device's maxStorageBufferBindingSize (%llu)",
                         g->pre == WGNN__PRE_SWIGLU ? "gated" : "normalized", (unsigned long long)bytes,
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    wgnn__binding x = {g->a.buf, g->a.off * 4u, (uint64_t)g->m * row * 4u, g->a.buf ? 0u : (uint32_t)g->a.scratch + 1u};
    wgnn__binding y = {NULL, 0, bytes, (uint32_t)sc + 1u};
    wgnn_status s = g->pre == WGNN__PRE_SWIGLU
                        ? wgnn__plan_swiglu_rows(ctx, p, x, y, g->m, g->k)
                        : wgnn__plan_rms_rows(ctx, p, x, y, g->m, g->k, g->eps, g->pre == WGNN__PRE_RMS_W ? g->prew : NULL);
    if (s != WGNN_OK) return s;
    wgnn__gemm h = *g;
    h.pre = WGNN__PRE_NONE;
    h.a = (wgnn__gemm_operand){NULL, sc, 0, 0};
    h.lda = g->k;
    return wgnn__gemm_plan(ctx, p, &h);
}

/* gemm.wgsl's binding for operand A or B (name 'a' or 'b') and its loads:
 * fn a_at(i) -> f32 and a4(i) -> vec4<f32> (elements i .. i + 3) over f32
 * elements, vec4s (i a multiple of 4), or f16 halves two a u32. Returns
 * what snprintf does. */
enum { OPERAND_F32, OPERAND_VEC4, OPERAND_F16, OPERAND_F16X4 };
static int operand_wgsl(char *buf, size_t size, char name, int binding, int kind) {
    char up = (char)(name - 'a' + 'A');
    static const char *const k_elem[4] = {"f32", "vec4<f32>", "u32", "vec2<u32>"};
    int n = snprintf(buf, size, "@group(0) @binding(%d) var<storage, read> %c: array<%s>;\n", binding, up, k_elem[kind]);
    if (kind == OPERAND_F16X4) /* four halves a load (8 bytes) */
        return n + snprintf(buf + n, size - (size_t)n,
                            "fn %c_at(i: u32) -> f32 { return unpack2x16float(%c[i / 4u][(i / 2u) %% 2u])[i %% 2u]; }\n"
                            "fn %c4(i: u32) -> vec4<f32> { let w = %c[i / 4u]; "
                            "return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }\n",
                            name, up, name, up);
    if (kind == OPERAND_VEC4)
        return n + snprintf(buf + n, size - (size_t)n,
                            "fn %c_at(i: u32) -> f32 { return %c[i / 4u][i %% 4u]; }\n"
                            "fn %c4(i: u32) -> vec4<f32> { return %c[i / 4u]; }\n",
                            name, up, name, up);
    if (kind == OPERAND_F16)
        n += snprintf(buf + n, size - (size_t)n, "fn %c_at(i: u32) -> f32 { return unpack2x16float(%c[i >> 1u])[i & 1u]; }\n",
                      name, up);
    else
        n += snprintf(buf + n, size - (size_t)n, "fn %c_at(i: u32) -> f32 { return %c[i]; }\n", name, up);
    return n + snprintf(buf + n, size - (size_t)n,
                        "fn %c4(i: u32) -> vec4<f32> { return vec4<f32>(%c_at(i), %c_at(i + 1u), %c_at(i + 2u), "
                        "%c_at(i + 3u)); }\n",
                        name, name, name, name, name);
}

/* gemm.wgsl's B as conv2d's im2col columns of geometry c, gathered from
 * the input sample at base (wgnn__gemm's cols): fn b_kj(base, k, j) ->
 * B(k, j), and b4_kj for j .. j + 3 (one output row: wo a multiple of 4).
 * The geometry is constant in the pipeline, so that the divisions by the
 * kernel's and the output's widths are by constants. */
static int cols_wgsl(char *buf, size_t size, const wgnn__conv2d_geom *c) {
    return snprintf(
        buf, size,
        "@group(0) @binding(2) var<storage, read> B: array<f32>;\n"
        "const CV_H: i32 = %lld;\nconst CV_W: i32 = %lld;\nconst CV_WO: u32 = %lldu;\nconst CV_KH: u32 = %lldu;\n"
        "const CV_KW: u32 = %lldu;\nconst CV_SH: u32 = %lldu;\nconst CV_SW: u32 = %lldu;\nconst CV_PH: i32 = %lld;\n"
        "const CV_PW: i32 = %lld;\nconst CV_DH: u32 = %lldu;\nconst CV_DW: u32 = %lldu;\n"
        "fn cv_at(k: u32, j: u32) -> vec3<i32> { // (ci, iy, ix0) of B(k, j)\n"
        "    let r = k %% (CV_KH * CV_KW);\n"
        "    return vec3<i32>(i32(k / (CV_KH * CV_KW)), i32((j / CV_WO) * CV_SH + (r / CV_KW) * CV_DH) - CV_PH,\n"
        "                     i32((j %% CV_WO) * CV_SW + (r %% CV_KW) * CV_DW) - CV_PW);\n"
        "}\n"
        "fn b_kj(base: u32, k: u32, j: u32) -> f32 {\n"
        "    let c = cv_at(k, j);\n"
        "    if (c.y < 0 || c.y >= CV_H || c.z < 0 || c.z >= CV_W) { return 0.0; }\n"
        "    return B[base + (u32(c.x) * u32(CV_H) + u32(c.y)) * u32(CV_W) + u32(c.z)];\n"
        "}\n"
        "fn b4_kj(base: u32, k: u32, j: u32) -> vec4<f32> {\n"
        "    let c = cv_at(k, j);\n"
        "    var v = vec4<f32>(0.0);\n"
        "    if (c.y < 0 || c.y >= CV_H) { return v; }\n"
        "    let row = base + (u32(c.x) * u32(CV_H) + u32(c.y)) * u32(CV_W);\n"
        "    for (var q = 0u; q < 4u; q++) {\n"
        "        let x = c.z + i32(q * CV_SW);\n"
        "        if (x >= 0 && x < CV_W) { v[q] = B[row + u32(x)]; }\n"
        "    }\n"
        "    return v;\n"
        "}\n",
        (long long)c->h, (long long)c->w, (long long)c->wo, (long long)c->kh, (long long)c->kw, (long long)c->sh,
        (long long)c->sw, (long long)c->ph, (long long)c->pw, (long long)c->dh, (long long)c->dw);
}

static wgnn_status plan_product(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, bool *ln_done);

/* where the n-th byte of a prelude being built goes, and the room from
 * there: a prelude that outgrows its buffer is truncated, never written
 * past (plan_product refuses it by its length) */
static size_t pre_off(int n, size_t cap) { return n >= 0 && (size_t)n < cap ? (size_t)n : cap - 1; }
#define PRE_AT(n) (pre + pre_off((n), sizeof pre))
#define PRE_ROOM(n) (sizeof pre - pre_off((n), sizeof pre))
/* appends to a prelude of n bytes so far; returns its length as if the
 * buffer were large enough (as snprintf) */
__attribute__((format(printf, 4, 5))) static int pre_add(char *buf, size_t cap, int n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + pre_off(n, cap), cap - pre_off(n, cap), fmt, ap);
    va_end(ap);
    return k < 0 ? (int)cap : n + k;
}

wgnn_status wgnn__gemm_plan(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g) {
    if (g->m == 0 || g->n == 0 || g->k == 0 || g->batch == 0)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "gemm: m, n, k and batch must be >= 1");
    if (!g->ln_y.buf) {
        bool unused = false;
        return plan_product(ctx, p, g, &unused);
    }
    if (g->batch != 1 || g->ldc != g->n || !g->c.buf || !g->ln_w || !g->ln_b)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "gemm: a LayerNorm of the output takes one batch of contiguous rows and its weight and bias");
    bool done = false;
    wgnn_status s = plan_product(ctx, p, g, &done);
    if (s != WGNN_OK || done) return s;
    wgnn__binding c = {g->c.buf, g->c.off * 4u, (uint64_t)g->m * g->n * 4u, 0};
    wgnn__binding y = {g->ln_y.buf, g->ln_y.off * 4u, (uint64_t)g->m * g->n * 4u, 0};
    return wgnn__plan_layer_norm_rows(ctx, p, c, y, g->m, g->n, g->ln_eps, g->ln_w, g->ln_b);
}

/* g's product, its LayerNorm too where the reduce writes it (*ln_done) */
static wgnn_status plan_product(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, bool *ln_done) {
    if (g->pre != WGNN__PRE_NONE) {
        wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, g);
        bool fused = gemv4_ok(g, &t) && g->batch == 1 && !g->trans_a;
        if (!fused) {
            *ln_done = true; /* the product on the normalized rows goes through wgnn__gemm_plan, LayerNorm and all */
            return plan_pre_pass(ctx, p, g);
        }
    }
    bool split = false;
    wgnn__gemm gk; /* g, with the K groups the split route chose for it */
    wgnn_status s0 = wgnn__gemm_plan_split(ctx, p, g, &split, ln_done, &gk);
    if (s0 != WGNN_OK || split) return s0;
    g = &gk;
    /* both routes below pass the strides to their kernels as u32 */
    if (g->lda > 0xFFFFFFFFull || g->ldb > 0xFFFFFFFFull || g->ldc > 0xFFFFFFFFull || g->bias_rs > 0xFFFFFFFFull ||
        g->bias_cs > 0xFFFFFFFFull || g->ldr > 0xFFFFFFFFull)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "gemm: a row stride passes 2^32 elements");
    uint32_t dp, ts;
    if (wgnn__gemm_tail_plan(ctx, g, &dp, &ts)) {
        bool skipped = false;
        wgnn_status st = wgnn__gemm_plan_tail(ctx, p, g, dp, ts, &skipped);
        if (st != WGNN_OK || !skipped) return st;
    }
    bool has_bias = g->bias.buf != NULL || g->bias.scratch >= 0;
    wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, g);
    char pre[6144];
    /* gemv4: each lane walks its row of k / 4 pieces in at most two steps
     * of U pieces (U in flight a lane, WGNN_GEMV_UNROLL) */
    bool v4 = gemv4_ok(g, &t);
    if (v4) {
        uint32_t u = ctx->knobs.gemv_unroll ? ctx->knobs.gemv_unroll : 4u;
        t.wy = wgnn__gemv_lanes(ctx, g->k / 4u, 2u * u, &t.wx);
        snprintf(pre, sizeof pre,
                 "%sconst WG: u32 = %uu;\nconst LANES: u32 = %uu;\nconst MR: u32 = %uu;\nconst U: u32 = %uu;\n%s"
                 "const HAS_BIAS: bool = %s;\nconst HAS_RES: bool = %s;\nconst ACT: u32 = %uu;\nconst PRE: u32 = %uu;\n%s",
                 WGNN__PARAMS_WGSL(GEMM_PARAMS), t.wx, t.wy, t.gemv_mr, u,
                 g->b_f16 ? "alias BT4 = vec2<u32>;\n"
                            "fn ldw(x: BT4) -> vec4<f32> { return vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y)); }\n"
                          : "alias BT4 = vec4<f32>;\nfn ldw(x: BT4) -> vec4<f32> { return x; }\n",
                 has_bias ? "true" : "false", g->res.buf ? "true" : "false", (unsigned)g->act, (unsigned)g->pre,
                 g->pre == WGNN__PRE_RMS_W ? "@group(0) @binding(6) var<storage, read> NW: array<vec4<f32>>;\n"
                                             "fn norm_w(i: u32) -> vec4<f32> { return NW[i]; }\n"
                                           : "fn norm_w(i: u32) -> vec4<f32> { return vec4<f32>(1.0); }\n");
    } else if (t.gemv_n) {
        /* B in quads (wgnn__gemm_gemvn_ok); A four k's a load where its rows and offsets allow */
        bool va = g->lda % 4 == 0 && g->a.off % 4 == 0 && (g->batch == 1 || g->a.bs % 4 == 0);
        int n = snprintf(pre, sizeof pre,
                         "%sconst WG: u32 = %uu;\nconst CQ: u32 = %uu;\nconst MR: u32 = %uu;\n"
                         "const HAS_BIAS: bool = %s;\nconst HAS_RES: bool = %s;\nconst ACT: u32 = %uu;\n",
                         WGNN__PARAMS_WGSL(GEMM_PARAMS), t.wx, t.wy, t.gemv_mr, has_bias ? "true" : "false",
                         g->res.buf ? "true" : "false", (unsigned)g->act);
        n += operand_wgsl(PRE_AT(n), PRE_ROOM(n), 'a', 1, va ? OPERAND_VEC4 : OPERAND_F32);
        operand_wgsl(PRE_AT(n), PRE_ROOM(n), 'b', 2, g->b_f16 ? OPERAND_F16X4 : OPERAND_VEC4);
    } else if (t.gemv_mr)
        snprintf(pre, sizeof pre,
                 "%sconst WG: u32 = %uu;\nconst LANES: u32 = %uu;\nconst MR: u32 = %uu;\nconst B_F16: bool = %s;\n"
                 "alias BT = %s;\nconst HAS_BIAS: bool = %s;\nconst HAS_RES: bool = %s;\nconst ACT: u32 = %uu;\n",
                 WGNN__PARAMS_WGSL(GEMM_PARAMS), t.wx, t.wy, t.gemv_mr, g->b_f16 ? "true" : "false",
                 g->b_f16 ? "u32" : "f32", has_bias ? "true" : "false", g->res.buf ? "true" : "false", (unsigned)g->act);
    else {
        /* vec4 loads of A / B: rows, offsets, batch strides and the extent
         * along the loaded dim multiples of 4 (a tile's vec4s need not
         * divide among the threads: gemm.wgsl skips the last ones) */
        uint64_t bm = (uint64_t)t.wy * t.tm, bn = (uint64_t)t.wx * t.tn;
        bool va = g->lda % 4 == 0 && g->a.off % 4 == 0 && (g->batch == 1 || g->a.bs % 4 == 0) &&
                  (g->trans_a ? g->m % 4 == 0 && bm % 4 == 0 : g->k % 4 == 0 && t.bk % 4 == 0);
        bool vb = g->ldb % 4 == 0 && g->b.off % 4 == 0 && (g->batch == 1 || g->b.bs % 4 == 0) &&
                  (g->trans_b ? g->k % 4 == 0 && t.bk % 4 == 0 : g->n % 4 == 0 && bn % 4 == 0);
        if (g->cols) vb = g->cols->wo % 4 == 0 && bn % 4 == 0; /* four pixels of one output row a gather */
        bool binit = bias_init_on(ctx, g);
        int n = snprintf(pre, sizeof pre,
                         "%sconst WX: u32 = %uu;\nconst WY: u32 = %uu;\nconst TM: u32 = %uu;\nconst TN: u32 = %uu;\n"
                         "const BK: u32 = %uu;\nconst KW: u32 = %uu;\nconst TRANS_A: bool = %s;\nconst TRANS_B: bool = %s;\n"
                         "const VA: bool = %s;\nconst VB: bool = %s;\nconst HAS_BIAS: bool = %s;\nconst BIAS_INIT: bool = %s;\n"
                         "const HAS_RES: bool = %s;\nconst SK: bool = %s;\nconst DB: bool = %s;\nconst ACT: u32 = %uu;\n",
                         WGNN__PARAMS_WGSL(GEMM_PARAMS), t.wx, t.wy, t.tm, t.tn, t.bk, g->kw > 1 ? g->kw : 1u,
                         g->trans_a ? "true" : "false",
                         g->trans_b ? "true" : "false", va ? "true" : "false", vb ? "true" : "false",
                         has_bias && !binit ? "true" : "false", binit ? "true" : "false",
                         g->res.buf ? "true" : "false", g->sk_ts ? "true" : "false",
                         double_buffer(ctx, &t, g) ? "true" : "false", (unsigned)g->act);
        n += operand_wgsl(PRE_AT(n), PRE_ROOM(n), 'a', 1, va ? OPERAND_VEC4 : OPERAND_F32);
        if (g->cols) n += cols_wgsl(PRE_AT(n), PRE_ROOM(n), g->cols);
        else {
            n += operand_wgsl(PRE_AT(n), PRE_ROOM(n), 'b', 2,
                              vb ? (g->b_f16 ? OPERAND_F16X4 : OPERAND_VEC4) : g->b_f16 ? OPERAND_F16 : OPERAND_F32);
            n = pre_add(pre, sizeof pre, n,
                          "fn b_kj(base: u32, k: u32, j: u32) -> f32 { return b_at(base + %s); }\n"
                          "fn b4_kj(base: u32, k: u32, j: u32) -> vec4<f32> { return b4(base + %s); }\n",
                          g->trans_b ? "j * P.ldb + k" : "k * P.ldb + j", g->trans_b ? "j * P.ldb + k" : "k * P.ldb + j");
        }
        /* the epilogue with every accumulator named by a constant (see
         * gemm.wgsl's store_all): written out here so that no compiler
         * has to unroll a loop to keep them in registers */
        n = pre_add(pre, sizeof pre, n,
                      "fn store_all(acc: array<vec4<f32>, %uu>, i0: u32, j0: u32, c_base: u32, bias_base: u32) {\n",
                      t.tm * t.tn / 4u);
        for (uint32_t r = 0; r < t.tm; r++)
            for (uint32_t c = 0; c < t.tn / 4u; c++)
                n = pre_add(pre, sizeof pre, n,
                              "    put(i0 + %uu, j0 + %uu, acc[%uu], c_base, bias_base);\n", r, c * t.wx * 4u,
                              r * (t.tn / 4u) + c);
        n = pre_add(pre, sizeof pre, n, "}\n");
        if ((size_t)n >= sizeof pre)
            return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "gemm: a %u x %u register tile is more than the kernel takes",
                             t.tm, t.tn);
    }
    if (!memchr(pre, '\0', sizeof pre - 1)) /* truncated */
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "gemm: the kernel's prelude passes its %zu bytes", sizeof pre);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, v4 ? "gemv4" : t.gemv_n ? "gemvn" : t.gemv_mr ? "gemv" : "gemm", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;

    /* does one batch entry fit a binding (with room to start it at an
     * aligned offset)? if not, split rows of A and C */
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
    uint64_t room = wgnn__gemm_binding_cap(ctx) / 4, slack = align / 4 + 1;
    room = room > slack ? room - slack : 0;
    uint64_t a_row = wgnn__gemm_a_row(g);
    uint64_t a_ext = wgnn__gemm_a_extent(g);
    uint64_t c_ext = wgnn__gemm_c_extent(g);
    uint64_t bias_ext = wgnn__gemm_bias_extent(g);
    uint64_t bias_row = (uint64_t)(g->n - 1) * g->bias_cs + 1;
    bool has_res = g->res.buf != NULL;
    uint64_t res_ext = wgnn__gemm_res_extent(g);
    if (a_ext <= room && c_ext <= room && (!has_bias || bias_ext <= room) && (!has_res || res_ext <= room))
        return plan_batches(ctx, p, pipe, &t, g, has_bias);
    if (g->sk_ts) /* gemm_split.c's wave_choose makes no plan whose operands do not fit */
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "gemm: a wave-balanced product does not fit one binding");
    if (g->trans_a || a_row > room || g->n > room || (has_bias && bias_row > room))
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "gemm: one %s of a %u x %u x %u product passes the device's maxStorageBufferBindingSize "
                         "(%llu bytes)",
                         g->trans_a ? "transposed A" : "row", g->m, g->k, g->n,
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    uint64_t rows = g->m;
    if (a_ext > room) rows = (room - a_row) / g->lda + 1;
    if (c_ext > room && (room - g->n) / g->ldc + 1 < rows) rows = (room - g->n) / g->ldc + 1;
    if (has_bias && g->bias_rs && bias_ext > room && (room - bias_row) / g->bias_rs + 1 < rows)
        rows = (room - bias_row) / g->bias_rs + 1;
    if (has_res && res_ext > room && (room - g->n) / g->ldr + 1 < rows) rows = (room - g->n) / g->ldr + 1;
    for (uint64_t b = 0; b < g->batch; b++)
        for (uint64_t r0 = 0; r0 < g->m; r0 += rows) {
            wgnn__gemm h = *g;
            h.batch = 1;
            h.m = (uint32_t)(g->m - r0 < rows ? g->m - r0 : rows);
            h.a.off = g->a.off + b * g->a.bs + r0 * g->lda;
            h.b.off = g->b.off + b * g->b.bs;
            h.c.off = g->c.off + b * g->c.bs + r0 * g->ldc;
            h.bias.off = g->bias.off + b * g->bias.bs + r0 * g->bias_rs;
            h.res.off = g->res.off + b * g->res.bs + r0 * g->ldr;
            s = plan_batches(ctx, p, pipe, &t, &h, has_bias);
            if (s != WGNN_OK) return s;
        }
    return WGNN_OK;
}
