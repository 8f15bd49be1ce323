/* gemm.c - the shared GEMM planner (shaders/gemm.wgsl, gemm_reduce.wgsl,
 * gemv.wgsl, gemv4.wgsl): wgnn__gemm_plan. The rows that run on it (mm,
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
 * in whole waves of them (the wave plan, below; docs/OPS.md).
 *
 * Operands larger than one storage binding are split: over the batch
 * (binding ranges start at aligned offsets, the remainder goes in the
 * params), and, for one matrix too large, over rows of A and C. */
#include "gemm.h"

#include "norm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GEMM_PARAMS(X, S)                                                                         \
    X(S, u32, m) X(S, u32, n) X(S, u32, k) X(S, u32, lda) X(S, u32, ldb) X(S, u32, ldc)           \
    X(S, u32, a_off) X(S, u32, b_off) X(S, u32, c_off) X(S, u32, bias_off) X(S, u32, a_bs)        \
    X(S, u32, b_bs) X(S, u32, c_bs) X(S, u32, bias_bs) X(S, u32, bias_rs) X(S, u32, bias_cs)      \
    X(S, f32, alpha) X(S, f32, beta) X(S, f32, eps) X(S, u32, res_off) X(S, u32, res_bs) X(S, u32, ldr)      \
    X(S, u32, sk_dp) X(S, u32, sk_ts) X(S, u32, sk_tx) X(S, u32, sk_total) X(S, u32, sk_m0) X(S, u32, sk_x)
WGNN__PARAMS_STRUCT(gemm_params, GEMM_PARAMS);
WGNN__PARAMS_CHECK(gemm_params, GEMM_PARAMS)

typedef struct gemm_tile {
    uint32_t wx, wy, tm, tn, bk;
    uint32_t gemv_mr; /* > 0: shaders/gemv.wgsl with this many rows; wx = threads, wy = lanes a column */
} gemm_tile;

static const gemm_tile k_tiles[] = {
    {16, 16, 8, 8, 8, 0}, /* 128 x 128 (plain products only, see pick_tile) */
    {16, 16, 8, 4, 16, 0}, /* 128 x 64, K tiles of 16 */
    {16, 16, 4, 4, 16, 0}, /* 64 x 64, K tiles of 16 (whole vec4 loads a thread) */
    {8, 8, 4, 4, 8, 0},   /* 32 x 32 */
};

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

#define SMALL_M 256u
/* 32 x 64, K tiles of 16, 64 threads (4 x 8 a thread). Against the 32 x 128
 * tile (16 x 8 threads) it replaced, on the H200 at ViT-B/16's batch 1
 * (M = 197, us fc1 / fc2 / q|k|v / out, session 10 call 3): 55.7 / 53.3 /
 * 49.1 / 27.6 -> 55.5 / 53.5 / 45.2 / 27.2; the whole encoder 2.185 ->
 * 2.148 ms a pipelined run (session 11 call 1); its K slices: split_count. */
static const gemm_tile k_small_tile = {8, 8, 4, 8, 16, 0};

static bool small_tile_ok(const wgnn_context *ctx) {
    return ctx->limits.maxComputeInvocationsPerWorkgroup >= 64 && ctx->limits.maxComputeWorkgroupSizeX >= 8 &&
           ctx->limits.maxComputeWorkgroupSizeY >= 8;
}

/* A few rows against a transposed B (linear at decode): the GEMV kernel. */
#define GEMV_MAX_ROWS 4u

uint32_t wgnn__gemv_lanes(const wgnn_context *ctx, uint64_t pieces, uint64_t per_lane, uint32_t *wg) {
    *wg = wgnn__clamp_workgroup_size(ctx, ctx->knobs.gemv_wg ? ctx->knobs.gemv_wg : 256u);
    uint32_t lanes = 32;
    while (lanes < *wg && (uint64_t)lanes * per_lane < pieces) lanes *= 2;
    if (ctx->knobs.gemv_lanes) lanes = ctx->knobs.gemv_lanes;
    return lanes < *wg ? lanes : *wg;
}

/* gemm.wgsl's BIAS_INIT: a bias of one row (bias_rs = 0) starts the
 * accumulators (as beta / alpha * bias), so the epilogue has none to add.
 * Tiles other than 128 x 128 take it (their unrolled bias epilogue costs
 * more: ViT-B/16's out projection at batch 32 on 128 x 64, 6304 x 768 x
 * 768, 0.260 -> 0.234 ms on the H200). The 128 x 128 tile keeps its bias
 * pass: with the bias in its accumulators q|k|v (6304 x 2304 x 768) took
 * 0.654 against 0.637 ms, and an exact GELU in its epilogue loop put the
 * accumulators in local memory (fc1: 13.1 ms against 0.87;
 * docs/PERFORMANCE.md, session 6). WGNN_GEMM_BIAS_INIT=0 turns it off, =1
 * puts it on every tile (measurements). */
static bool bias_init_ok(const wgnn_context *ctx, const wgnn__gemm *g) {
    return (g->bias.buf != NULL || g->bias.scratch >= 0) && g->bias_rs == 0 && g->alpha != 0.0f &&
           ctx->knobs.gemm_bias_init != 0;
}

static bool bias_init_on(const wgnn_context *ctx, const wgnn__gemm *g, uint32_t tm, uint32_t tn) {
    return bias_init_ok(ctx, g) && (!(tm == 8 && tn == 8) || ctx->knobs.gemm_bias_init == 1);
}

/* Where the compute units are known, a plain product (no bias, residual
 * or activation: the tile's plain store loop) of more than 256 rows whose
 * 128 x 128 tiles make one whole wave of them (more than one a unit, at
 * most two: the tile runs two an SM) takes that tile. On the H200 (132
 * SMs; docs/PERFORMANCE.md, session 8): ViT-B/16's q|k|v without its bias
 * at batch 8 (1576 x 2304 x 768, 234 tiles) 0.196 ms on 64 x 64 -> 0.174;
 * outside the window it lost: 312 tiles (1576 x 3072 x 768) 0.233 ->
 * 0.259, 78 tiles (1576 x 768 x 768) 0.093 -> 0.099. */
/* the 128 x 128 tile (k_tiles[0]), which the wave plans are made for */
static bool is_big_tile(const gemm_tile *t) {
    return t->wx == 16 && t->wy == 16 && t->tm == 8 && t->tn == 8 && !t->gemv_mr;
}

static bool one_wave(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias) {
    uint32_t units = ctx->knobs.compute_units;
    if (!units || ctx->knobs.gemm_waves == 0 || has_bias || g->res.buf || g->act != WGNN__ACT_NONE || g->trans_a ||
        g->pre != WGNN__PRE_NONE || g->m <= SMALL_M || ctx->limits.maxComputeInvocationsPerWorkgroup < 256 ||
        ctx->limits.maxComputeWorkgroupSizeX < 16 || ctx->limits.maxComputeWorkgroupSizeY < 16)
        return false;
    uint64_t tiles = ((uint64_t)g->m + 127) / 128 * (((uint64_t)g->n + 127) / 128);
    if (tiles * 128 * 128 * 4 > (uint64_t)g->m * g->n * 5) return false; /* over a fifth padding */
    tiles *= g->batch;
    return tiles > units && tiles <= 2ull * units;
}

static gemm_tile pick_tile(const wgnn_context *ctx, const wgnn__gemm *g) {
    bool has_bias = g->bias.buf != NULL || g->bias.scratch >= 0;
    if (g->trans_b && !g->trans_a && g->m <= GEMV_MAX_ROWS) {
        /* gemv.wgsl: each lane walks its row in about two steps of four
         * k's (gemv4 sets its own lanes below) */
        uint32_t wg, lanes = wgnn__gemv_lanes(ctx, g->k, 8, &wg);
        return (gemm_tile){wg, lanes, 0, 0, 0, g->m <= 1 ? 1u : g->m <= 2 ? 2u : 4u};
    }
    if (ctx->knobs.gemm_tile[0]) {
        const uint32_t *t = ctx->knobs.gemm_tile;
        return (gemm_tile){t[0], t[1], t[2], t[3], t[4], 0};
    }
    if (g->sk_ts || g->big_tile) return k_tiles[0]; /* a wave plan is made for the 128 x 128 tile alone */
    if (one_wave(ctx, g, has_bias)) return k_tiles[0];
    /* few rows (a ViT block at batch 1: M = 197): 32-row tiles waste the
     * least padding and, with split-K, were fastest or within 5% of it in a
     * sweep of 9 tiles x 5 slice counts on the H200 (docs/PERFORMANCE.md;
     * 32 x 64 since session 11, k_small_tile) */
    if (g->m <= SMALL_M && small_tile_ok(ctx)) return k_small_tile;
    uint32_t most = ctx->limits.maxComputeInvocationsPerWorkgroup;
    for (size_t i = 0; i < sizeof k_tiles / sizeof k_tiles[0]; i++) {
        const gemm_tile *t = &k_tiles[i];
        if (t->wx * t->wy > most || t->wx > ctx->limits.maxComputeWorkgroupSizeX ||
            t->wy > ctx->limits.maxComputeWorkgroupSizeY)
            continue;
        /* The 128 x 128 tile with a bias takes 4.58 ms at 4096^3 on the
         * H200 (59 ms before its epilogue was unrolled: acc was in local
         * memory), the plain product 3.86 and with a bias pass after it
         * 3.93 (ViT-B/16 at batch 32: 50.4 ms so, 53.4 with the bias in
         * this tile): products with a bias take the next tile, or (large
         * ones) the plain product and a bias pass (split_count). A
         * transposed A on this tile is unmeasured: left out too. */
        if (t->tm == 8 && t->tn == 8 && (g->trans_a || (has_bias && ctx->knobs.gemm_bias_init != 1))) continue;
        /* a 128-wide tile that would be over a quarter padding (conv2d's
         * 64 output channels: 3.13 ms on 128 x 64 against 2.37 on 64 x 64) */
        uint64_t bm = (uint64_t)t->wy * t->tm, bn = (uint64_t)t->wx * t->tn;
        if ((bm > 64 || bn > 64) &&
            ceil_div(g->m, bm) * bm * ceil_div(g->n, bn) * bn * 4 > (uint64_t)g->m * g->n * 5)
            continue;
        uint64_t groups = ceil_div(g->m, (uint64_t)t->wy * t->tm) * ceil_div(g->n, (uint64_t)t->wx * t->tn) * g->batch;
        if (groups >= 512 || i + 1 == sizeof k_tiles / sizeof k_tiles[0]) return *t;
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
static bool double_buffer(const wgnn_context *ctx, const gemm_tile *t) {
    uint64_t bytes = 2ull * t->bk * ((uint64_t)t->wy * t->tm + 4 + (uint64_t)t->wx * t->tn + 4) * 4;
    bool on = ctx->knobs.gemm_db == 1 || (ctx->knobs.gemm_db != 0 && is_big_tile(t));
    return on && bytes <= ctx->limits.maxComputeWorkgroupStorageSize;
}

/* One operand's footprint: elements from its offset that one batch entry
 * touches (extent), its batch stride, element size. */
typedef struct span {
    const wgnn__gemm_operand *o;
    uint64_t extent, esz;
} span;

static uint64_t binding_cap(const wgnn_context *ctx) {
    uint64_t cap = ctx->limits.maxStorageBufferBindingSize;
    if (cap > 0xFFFFFFFCull) cap = 0xFFFFFFFCull; /* u32 indices in the shader */
    return cap;
}

static void bind_range(wgnn__dispatch *d, const wgnn__gemm_operand *o, uint64_t start_bytes, uint64_t bytes) {
    if (o->buf) wgnn__plan_bind(d, o->buf, start_bytes, bytes);
    else wgnn__plan_bind_scratch(d, (uint32_t)o->scratch, start_bytes, bytes);
}

/* Records batches [b0, b0 + cnt) of g, each operand bound from an aligned
 * offset at or below its first element. */
static wgnn_status record(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe, const gemm_tile *t,
                          const wgnn__gemm *g, uint32_t b0, uint32_t cnt, const span sp[5], bool has_bias) {
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
    uint64_t start[5] = {0}, first[5] = {0}, bytes[5] = {0};
    bool has_res = g->res.buf != NULL;
    for (int i = 0; i < 5; i++) {
        if ((i == 3 && !has_bias) || (i == 4 && !has_res)) continue;
        uint64_t e0 = sp[i].o->off + (uint64_t)b0 * sp[i].o->bs;
        start[i] = e0 * sp[i].esz / align * align;
        first[i] = (e0 * sp[i].esz - start[i]) / sp[i].esz; /* element index inside the binding */
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
                     0, 0, 0, 0, 0, 0};
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    uint64_t gx, gy;
    if (g->sk_ts) { /* one batch entry, its workgroups counted flat (gemm.wgsl's SK) */
        uint64_t bm = (uint64_t)t->wy * t->tm, bn = (uint64_t)t->wx * t->tn;
        uint64_t tx = ceil_div(g->n, bn), tiles = tx * ceil_div(g->m, bm);
        q.sk_dp = g->sk_dp;
        q.sk_ts = g->sk_ts;
        q.sk_tx = (uint32_t)tx;
        q.sk_total = (uint32_t)(g->sk_dp + (tiles - g->sk_dp) * g->sk_ts);
        q.sk_m0 = (uint32_t)(g->sk_dp / tx * bm);
        q.sk_x = (uint32_t)(first[2] + (uint64_t)g->m * g->ldc);
        uint32_t x, y;
        wgnn_status s = wgnn__compute_2d_workgroup_count(ctx, q.sk_total, maxd, "gemm", &x, &y);
        if (s != WGNN_OK) return s;
        gx = x;
        gy = y;
    } else if (t->gemv_mr) {
        uint32_t x, y;
        wgnn_status s = wgnn__compute_2d_workgroup_count(ctx, ceil_div(g->n, t->wx / t->wy), maxd, "gemm", &x, &y);
        if (s != WGNN_OK) return s;
        gx = x;
        gy = y;
    } else {
        gx = ceil_div(g->n, (uint64_t)t->wx * t->tn);
        gy = ceil_div(g->m, (uint64_t)t->wy * t->tm);
    }
    if (gx > maxd || gy > maxd)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "gemm: a %u x %u output needs %llu x %llu workgroups, past the device's "
                         "maxComputeWorkgroupsPerDimension (%u)",
                         g->m, g->n, (unsigned long long)gx, (unsigned long long)gy, maxd);
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, (uint32_t)gx, (uint32_t)gy, cnt);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < 3; i++) bind_range(d, sp[i].o, start[i], bytes[i]);
    if (has_bias) bind_range(d, sp[3].o, start[3], bytes[3]);
    else bind_range(d, sp[0].o, start[0], bytes[0]); /* unused: any read-only buffer */
    if (has_res) bind_range(d, sp[4].o, start[4], bytes[4]);
    else wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, NULL, false), 0, 0);
    if (g->pre == WGNN__PRE_RMS_W) wgnn__plan_bind(d, g->prew, 0, 0); /* gemv4 only (others ran a pre-pass) */
    return WGNN_OK;
}

/* Elements a wave-balanced product's tail slices take after C (at C's
 * ldc): sk_ts - 1 copies of the rows from the first tail tile's on. */
static uint64_t sk_extra(const wgnn__gemm *g, const gemm_tile *t) {
    if (!g->sk_ts) return 0;
    uint64_t bm = (uint64_t)t->wy * t->tm, tx = ceil_div(g->n, (uint64_t)t->wx * t->tn);
    return (uint64_t)(g->sk_ts - 1) * (g->m - g->sk_dp / tx * bm) * g->ldc;
}

/* g with everything fitting one binding per batch entry. */
static wgnn_status plan_batches(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe, const gemm_tile *t,
                                const wgnn__gemm *g, bool has_bias) {
    uint64_t cap = binding_cap(ctx);
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
    bool has_res = g->res.buf != NULL;
    span sp[5] = {
        {&g->a,
         g->trans_a ? (uint64_t)(g->k - 1) * g->lda + g->m
                    : (uint64_t)(g->m - 1) * g->lda + (uint64_t)g->k * (g->pre == WGNN__PRE_SWIGLU ? 2u : 1u),
         4},
        {&g->b, g->trans_b ? (uint64_t)(g->n - 1) * g->ldb + g->k : (uint64_t)(g->k - 1) * g->ldb + g->n,
         g->b_f16 ? 2u : 4u},
        {&g->c, (uint64_t)(g->m - 1) * g->ldc + g->n + sk_extra(g, t), 4},
        {&g->bias, (uint64_t)(g->m - 1) * g->bias_rs + (uint64_t)(g->n - 1) * g->bias_cs + 1, 4},
        {&g->res, (uint64_t)(g->m - 1) * g->ldr + g->n, 4},
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

#define SPLIT_MIN_SLICE 128u  /* K values per slice, at least */
#define SPLIT_TARGET_GROUPS 512u
#define BIAS_PASS 0x10000u  /* flag in split_count's result: one slice, bias in gemm_reduce */
#define WAVE_WIDE 0x20000u  /* flag in split_count's result: a wave plan's product, not a bias pass's */

static uint32_t split_count_shape(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias);

/* Slices for g: 1 (no split) unless the problem is one product with few
 * tiles, its K long enough, and its output and bias bindable whole. */
static uint32_t split_count(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias) {
    if (g->batch != 1 || !g->c.buf || (has_bias && !g->bias.buf)) return 1;
    uint64_t cap = binding_cap(ctx);
    if (wgpuBufferGetSize(g->c.buf) > cap || (has_bias && wgpuBufferGetSize(g->bias.buf) > cap) ||
        (g->res.buf && wgpuBufferGetSize(g->res.buf) > cap))
        return 1;
    return split_count_shape(ctx, g, has_bias);
}

/* split_count for g's shape, its buffers taken to fit one binding each */
static uint32_t split_count_shape(const wgnn_context *ctx, const wgnn__gemm *g, bool has_bias) {
    if (g->batch != 1) return 1;
    if (g->trans_b && !g->trans_a && g->m <= GEMV_MAX_ROWS) return 1; /* the GEMV kernel */
    if (ctx->knobs.gemm_split >= 1) {
        uint32_t s = (uint32_t)ctx->knobs.gemm_split;
        while (s > 1 && g->k % s) s--;
        return s;
    }
    /* a large product with a bias: the plain product on the 128 x 128
     * tile into scratch, then the bias pass (one "slice"), beats the 64 x 64
     * tile with the bias (addmm 4096^3 on the H200: 5.0 ms on 64 x 64,
     * 3.85 ms for the plain product) */
    if (has_bias && !g->trans_a && ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 &&
        ceil_div(g->m, 128) * ceil_div(g->n, 128) >= SPLIT_TARGET_GROUPS)
        return ctx->knobs.gemm_bias_init == 1 ? 1 : 1 | BIAS_PASS;
    /* fewer 128 x 128 tiles than that, but still a few waves of them, and a
     * long K: four K slices on that tile, the bias in the reduce. ViT-B/16's
     * fc2 at batch 32 (6304 x 768 x 3072) on the H200: 0.961 -> 0.883 ms
     * (two slices: 0.994; its out projection, K = 768, got slower split:
     * 0.258 -> 0.314, docs/PERFORMANCE.md) */
    if (has_bias && !g->trans_a && ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 &&
        ceil_div(g->m, 128) * ceil_div(g->n, 128) >= SPLIT_TARGET_GROUPS / 2 && g->k >= 2048 && g->k % 4 == 0)
        return 4;
    /* where the compute units are known, a product with a bias and more
     * than 256 rows that gives a wave or more of 128 x 128 tiles (two a
     * compute unit), counting up to 8 K slices of 128 or more, takes the
     * bias pass and the wave plan too: ViT-B/16's out projection at batch
     * 32 (6304 x 768 x 768, 300 tiles) 0.236 -> 0.222 ms on the H200 (264
     * whole, 36 in 3 K slices), against the 128 x 64 tile with the bias in
     * it (docs/PERFORMANCE.md, session 7) */
    uint64_t t128 = ceil_div(g->m, 128) * ceil_div(g->n, 128);
    uint64_t smax = g->k / SPLIT_MIN_SLICE < 8 ? g->k / SPLIT_MIN_SLICE : 8;
    if (ctx->knobs.gemm_waves != 0 && has_bias && !g->trans_a && ctx->knobs.compute_units && g->m > SMALL_M &&
        ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 && t128 * 128 * 128 * 4 <= (uint64_t)g->m * g->n * 5 &&
        t128 * (smax > 1 ? smax : 1) >= 2ull * ctx->knobs.compute_units)
        return 1 | BIAS_PASS | WAVE_WIDE;
    /* tiles of the kernel small problems get: for few rows k_small_tile
     * (32 x 64), at most 768 of its workgroups and 8 slices, else 64 x 64,
     * at least SPLIT_TARGET_GROUPS / 2. The small tile runs 9 workgroups
     * an SM on the H200 (101 registers): past 1188 a product takes a
     * second wave. Its slices at ViT-B/16's batch 1 (M = 197, session 11
     * call 2, us): fc1 (K = 768) S = 4 55.3, 3 52.9, 2 53.1; q|k|v (K =
     * 768) S = 6 45.2, 4 42.7, 3 41.4; fc2 (K = 3072) S = 6, 8, 12 53.0,
     * 53.9, 53.1; the out projection S = 3, 6 25.6, 25.9. */
    bool small = g->m <= SMALL_M && small_tile_ok(ctx);
    uint64_t groups = small ? ceil_div(g->m, 32) * ceil_div(g->n, 64) : ceil_div(g->m, 64) * ceil_div(g->n, 64);
    uint32_t target = small ? 768u : SPLIT_TARGET_GROUPS, most = small ? 8u : 64u;
    if (groups >= target / 2 || g->k < 2 * SPLIT_MIN_SLICE) return 1;
    uint32_t want = (uint32_t)(small ? target / groups : ceil_div(target, groups)), best = 1;
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
} wave_plan;

#define WAVE_MIN_TILES 2u       /* K tiles in a tail slice, at least */
#define WAVE_MAX_TS 16u         /* tail slices, at most */
#define WAVE_FLOP_PER_BYTE 13.0 /* the tile's FLOP rate over the reduce's read rate (H200: ~40 TFLOP/s, ~3 TB/s) */

/* waves (of two workgroups on each of `units`) that `wgs` workgroups take */
static double waves(uint64_t wgs, uint32_t units) {
    uint64_t full = wgs / (2ull * units), rem = wgs % (2ull * units);
    return (double)full + (rem == 0 ? 0.0 : rem <= units ? 0.5 : 1.0);
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
    wave_plan w = {s0, 0, 0, false};
    uint32_t units = ctx->knobs.compute_units;
    if (!units || ctx->knobs.gemm_split >= 1 || ctx->knobs.gemm_waves == 0 || g->batch != 1) return w;
    wgnn__gemm h0 = sliced(g, s0);
    gemm_tile t = pick_tile(ctx, &h0);
    bool big = is_big_tile(&t);
    if (!big && !(wide && !ctx->knobs.gemm_tile[0])) return w; /* the model is the 128 x 128 tile's */
    if (!big) t = k_tiles[0];
    /* A and B must each fit one binding (no row splits) */
    uint64_t room = binding_cap(ctx) / 4 - 64;
    uint64_t a_ext = g->trans_a ? (uint64_t)(g->k - 1) * g->lda + g->m : (uint64_t)(g->m - 1) * g->lda + g->k;
    uint64_t b_ext = g->trans_b ? (uint64_t)(g->n - 1) * g->ldb + g->k : (uint64_t)(g->k - 1) * g->ldb + g->n;
    if (a_ext > room || b_ext * (g->b_f16 ? 2u : 4u) / 4u > room) return w;
    uint64_t bm = (uint64_t)t.wy * t.tm, bn = (uint64_t)t.wx * t.tn;
    uint64_t tiles = ceil_div(g->m, bm) * ceil_div(g->n, bn), ktiles = ceil_div(g->k, t.bk);
    double p = (double)tiles / units * WAVE_FLOP_PER_BYTE / g->k;
    double c0 = waves(tiles * s0, units) / s0 + p * (s0 - 1), best = c0;
    wave_plan pick = {s0, 0, 0, true};
    for (uint32_t s = 1; s <= 8; s++) {
        if (s == s0 || g->k % s || (s > 1 && (g->k / s < SPLIT_MIN_SLICE || (g->k / s) % 4))) continue;
        double c = waves(tiles * s, units) / s + p * (s - 1);
        if (c < best) best = c, pick = (wave_plan){s, 0, 0, true};
    }
    uint64_t q = tiles / units, r = tiles % units;
    if (q >= 1 && r > 0) {
        uint64_t ts = units / r;
        if (ts > ktiles / WAVE_MIN_TILES) ts = ktiles / WAVE_MIN_TILES;
        if (ts > WAVE_MAX_TS) ts = WAVE_MAX_TS;
        double c = q / 2.0 + 0.5 / (double)ts + p * (double)(ts - 1) * r / tiles;
        if (ts >= 2 && c < best) best = c, pick = (wave_plan){1, (uint32_t)(q * units), (uint32_t)ts, true};
    }
    return wide || best < 0.97 * c0 ? pick : w;
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
    gemm_tile t = pick_tile(ctx, &plain);
    return !wide || is_big_tile(&t);
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
        wgpuBufferGetSize(g->ln_y.buf) > binding_cap(ctx))
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
    while (r > 1 && ((uint64_t)l * r > most || ceil_div(g->m, r) < target)) r /= 2;
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
        gemm_tile t = pick_tile(ctx, &h);
        t_bm = t.wy * t.tm;
        t_bn = t.wx * t.tn;
        t_tx = (uint32_t)ceil_div(g->n, t_bn);
        t_m0 = w.dp / t_tx * t_bm;
        extra = (uint64_t)(w.ts - 1) * (g->m - t_m0) * g->n;
    }
    *skipped = true;
    if (!wgnn__mul_u64(mn * 4, s_count, &bytes) || bytes + extra * 4 > binding_cap(ctx)) return WGNN_OK;
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
             v4 ? "const V: u32 = 4u;\nalias ET = vec4<f32>;\n"
                  "fn act_e(x: ET) -> ET { return act_by(ACT, x); }\n"
                  "fn bias_e(b: u32, c: u32) -> ET { return vec4<f32>(BIAS[b], BIAS[b + c], BIAS[b + 2u * c], "
                  "BIAS[b + 3u * c]); }\n"
                : "const V: u32 = 1u;\nalias ET = f32;\n"
                  "fn act_e(x: ET) -> ET { return act_by(ACT, vec4<f32>(x)).x; }\n"
                  "fn bias_e(b: u32, c: u32) -> ET { return BIAS[b]; }\n");
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
                       ln ? (uint32_t)ceil_div(g->m, ls.r) : 0,
                       ln ? (uint32_t)g->ln_y.off : 0,
                       g->ln_eps,
                       (float)g->n};
    uint32_t gx, gy;
    if ((s = wgnn__compute_2d_workgroup_count(ctx, ln ? q.n_groups : ceil_div(mn / (v4 ? 4 : 1), wg),
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

/* 16-byte loads when every row and offset of A and W is a multiple of 4
 * elements (shaders/gemv4.wgsl) */
static bool gemv4_ok(const wgnn__gemm *g, const gemm_tile *t) {
    return t->gemv_mr && g->k % 4 == 0 && g->lda % 4 == 0 && g->ldb % 4 == 0 && g->a.off % 4 == 0 &&
           g->b.off % 4 == 0 && g->a.bs % 4 == 0 && g->b.bs % 4 == 0;
}

/* linear's prologue as a pass of its own: A's rows -> scratch, then the
 * product on it (where the GEMV kernel cannot take it on the fly). */
static wgnn_status plan_pre_pass(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g) {
    uint64_t row = (uint64_t)g->k * (g->pre == WGNN__PRE_SWIGLU ? 2u : 1u);
    if (g->batch != 1 || g->trans_a || g->lda != row)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "gemm: a prologue needs one batch of contiguous rows of A");
    uint64_t bytes = (uint64_t)g->m * g->k * 4u;
    int sc = bytes <= binding_cap(ctx) ? wgnn__plan_scratch(p, bytes) : -1;
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

static wgnn_status plan_product(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, bool *ln_done);

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
        gemm_tile t = pick_tile(ctx, g);
        bool fused = gemv4_ok(g, &t) && g->batch == 1 && !g->trans_a;
        if (!fused) {
            *ln_done = true; /* the product on the normalized rows goes through wgnn__gemm_plan, LayerNorm and all */
            return plan_pre_pass(ctx, p, g);
        }
    }
    {
        bool hb = g->bias.buf != NULL || g->bias.scratch >= 0;
        uint32_t sk = split_count(ctx, g, hb);
        bool bias_pass = (sk & BIAS_PASS) != 0, wide = (sk & WAVE_WIDE) != 0;
        sk &= ~(BIAS_PASS | WAVE_WIDE);
        /* offsets and strides of the partial products must stay u32 */
        if ((sk > 1 || bias_pass) && g->c.off <= 0xFFFFFFFFull && g->bias.off <= 0xFFFFFFFFull &&
            g->res.off <= 0xFFFFFFFFull && g->ldr <= 0xFFFFFFFFull &&
            (uint64_t)g->k * (g->trans_a ? g->lda : 1) <= 0xFFFFFFFFull &&
            (uint64_t)g->k * (g->trans_b ? 1 : g->ldb) <= 0xFFFFFFFFull) {
            /* a product moved onto the 128 x 128 tile for a wave plan that
             * then makes none goes the plain route (its tile and bias) */
            wave_plan w = wave_choose(ctx, g, sk, wide);
            bool skipped = true;
            wgnn_status s = wide && !w.big ? WGNN_OK : plan_split(ctx, p, g, w, hb, &skipped, ln_done);
            if (!skipped || s != WGNN_OK) return s;
        }
    }
    if (g->lda > 0xFFFFFFFFull || g->ldb > 0xFFFFFFFFull || g->ldc > 0xFFFFFFFFull || g->bias_rs > 0xFFFFFFFFull ||
        g->bias_cs > 0xFFFFFFFFull || g->ldr > 0xFFFFFFFFull)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "gemm: a row stride passes 2^32 elements");
    bool has_bias = g->bias.buf != NULL || g->bias.scratch >= 0;
    gemm_tile t = pick_tile(ctx, g);
    char pre[4096];
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
    } else if (t.gemv_mr)
        snprintf(pre, sizeof pre,
                 "%sconst WG: u32 = %uu;\nconst LANES: u32 = %uu;\nconst MR: u32 = %uu;\nconst B_F16: bool = %s;\n"
                 "alias BT = %s;\nconst HAS_BIAS: bool = %s;\nconst HAS_RES: bool = %s;\nconst ACT: u32 = %uu;\n",
                 WGNN__PARAMS_WGSL(GEMM_PARAMS), t.wx, t.wy, t.gemv_mr, g->b_f16 ? "true" : "false",
                 g->b_f16 ? "u32" : "f32", has_bias ? "true" : "false", g->res.buf ? "true" : "false", (unsigned)g->act);
    else {
        /* vec4 loads of A / B: rows, offsets, batch strides and the extent
         * along the loaded dim multiples of 4, the tile whole vec4s a thread */
        uint64_t nt = (uint64_t)t.wx * t.wy, bm = (uint64_t)t.wy * t.tm, bn = (uint64_t)t.wx * t.tn;
        bool va = g->lda % 4 == 0 && g->a.off % 4 == 0 && (g->batch == 1 || g->a.bs % 4 == 0) &&
                  (g->trans_a ? g->m % 4 == 0 && bm % 4 == 0 : g->k % 4 == 0 && t.bk % 4 == 0) &&
                  bm * t.bk % (4 * nt) == 0;
        bool vb = g->ldb % 4 == 0 && g->b.off % 4 == 0 && (g->batch == 1 || g->b.bs % 4 == 0) &&
                  (g->trans_b ? g->k % 4 == 0 && t.bk % 4 == 0 : g->n % 4 == 0 && bn % 4 == 0) &&
                  bn * t.bk % (4 * nt) == 0;
        bool binit = bias_init_on(ctx, g, t.tm, t.tn);
        int n = snprintf(pre, sizeof pre,
                         "%sconst WX: u32 = %uu;\nconst WY: u32 = %uu;\nconst TM: u32 = %uu;\nconst TN: u32 = %uu;\n"
                         "const BK: u32 = %uu;\nconst TRANS_A: bool = %s;\nconst TRANS_B: bool = %s;\n"
                         "const VA: bool = %s;\nconst VB: bool = %s;\nconst HAS_BIAS: bool = %s;\nconst BIAS_INIT: bool = %s;\n"
                         "const HAS_RES: bool = %s;\nconst SK: bool = %s;\nconst DB: bool = %s;\nconst ACT: u32 = %uu;\n",
                         WGNN__PARAMS_WGSL(GEMM_PARAMS), t.wx, t.wy, t.tm, t.tn, t.bk, g->trans_a ? "true" : "false",
                         g->trans_b ? "true" : "false", va ? "true" : "false", vb ? "true" : "false",
                         has_bias && !binit ? "true" : "false", binit ? "true" : "false",
                         g->res.buf ? "true" : "false", g->sk_ts ? "true" : "false",
                         double_buffer(ctx, &t) ? "true" : "false", (unsigned)g->act);
        n += operand_wgsl(pre + n, sizeof pre - (size_t)n, 'a', 1, va ? OPERAND_VEC4 : OPERAND_F32);
        n += operand_wgsl(pre + n, sizeof pre - (size_t)n, 'b', 2,
                          vb ? (g->b_f16 ? OPERAND_F16X4 : OPERAND_VEC4) : g->b_f16 ? OPERAND_F16 : OPERAND_F32);
        /* the epilogue with every accumulator named by a constant (see
         * gemm.wgsl's store_all): written out here so that no compiler
         * has to unroll a loop to keep them in registers */
        n += snprintf(pre + n, sizeof pre - (size_t)n,
                      "fn store_all(acc: array<vec4<f32>, %uu>, i0: u32, j0: u32, c_base: u32, bias_base: u32) {\n",
                      t.tm * t.tn / 4u);
        for (uint32_t r = 0; r < t.tm; r++)
            for (uint32_t c = 0; c < t.tn / 4u; c++)
                n += snprintf(pre + n, sizeof pre - (size_t)n,
                              "    put(i0 + %uu, j0 + %uu, acc[%uu], c_base, bias_base);\n", r, c * t.wx * 4u,
                              r * (t.tn / 4u) + c);
        n += snprintf(pre + n, sizeof pre - (size_t)n, "}\n");
        if ((size_t)n >= sizeof pre)
            return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "gemm: a %u x %u register tile is more than the kernel takes",
                             t.tm, t.tn);
    }
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, v4 ? "gemv4" : t.gemv_mr ? "gemv" : "gemm", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;

    /* does one batch entry fit a binding (with room to start it at an
     * aligned offset)? if not, split rows of A and C */
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
    uint64_t room = binding_cap(ctx) / 4, slack = align / 4 + 1;
    room = room > slack ? room - slack : 0;
    uint64_t a_row = (uint64_t)g->k * (g->pre == WGNN__PRE_SWIGLU ? 2u : 1u);
    uint64_t a_ext = g->trans_a ? (uint64_t)(g->k - 1) * g->lda + g->m : (uint64_t)(g->m - 1) * g->lda + a_row;
    uint64_t c_ext = (uint64_t)(g->m - 1) * g->ldc + g->n;
    uint64_t bias_ext = (uint64_t)(g->m - 1) * g->bias_rs + (uint64_t)(g->n - 1) * g->bias_cs + 1;
    uint64_t bias_row = (uint64_t)(g->n - 1) * g->bias_cs + 1;
    bool has_res = g->res.buf != NULL;
    uint64_t res_ext = (uint64_t)(g->m - 1) * g->ldr + g->n;
    if (a_ext <= room && c_ext <= room && (!has_bias || bias_ext <= room) && (!has_res || res_ext <= room))
        return plan_batches(ctx, p, pipe, &t, g, has_bias);
    if (g->sk_ts) /* wave_choose makes no plan whose operands do not fit */
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
