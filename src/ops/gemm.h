/* gemm.h - the shared GEMM (src/ops/gemm.c, shaders/gemm.wgsl): one
 * register-blocked, vec4, workgroup-tiled kernel with variants, used by mm,
 * bmm, matmul, linear, addmm (src/ops/gemm_rows.c) and conv2d's im2col route
 * (src/ops/conv.c).
 *
 *   C[b][i][j] = act(alpha * sum_k A[b](i, k) * B[b](k, j) + beta * bias(b, i, j)) + res(b, i, j)
 *
 * with A(i, k) = a[a_off + b*a_bs + i*lda + k] (or a[... + k*lda + i] when
 * trans_a), B(k, j) = b[b_off + b*b_bs + k*ldb + j] (or b[... + j*ldb + k]
 * when trans_b: a [N, K] weight as nn.Linear stores it), C(i, j) =
 * c[c_off + b*c_bs + i*ldc + j], and bias(b, i, j) =
 * bias[bias_off + b*bias_bs + i*bias_rs + j*bias_cs] (strides 0 broadcast:
 * [N] bias is rs=0 cs=1; addmm's self [M,1] is rs=1 cs=0), res(b, i, j) =
 * res[res_off + b*res_bs + i*ldr + j] (a residual added after the
 * activation; res.buf NULL: none, never a scratch). Offsets and
 * strides are in elements. b_f16: B holds float16 (IEEE half) storage,
 * read with unpack2x16float (no shader-f16 needed); everything else f32.
 * A buffer of NULL with a scratch index >= 0 names a plan scratch buffer
 * (conv2d's im2col columns).
 *
 * cols (conv2d's implicit route): B is the im2col columns of the geometry
 * *cols (conv.h), gathered by the kernel from the input as it loads them:
 * b is the input, each batch entry's cols->c planes of h*w contiguous from
 * b.off + b*b.bs (a sample's channels, or one group's), and
 * B(k, j) = plane[ci][oy*sh - ph + ky*dh][ox*sw - pw + kx*dw] (0 outside)
 * with k = (ci*kh + ky)*kw + kx, j = oy*wo + ox; ldb is unused. Such a
 * product takes gemm.wgsl's tiles alone: no GEMV kernel, K slices, bias
 * pass or wave plan (groups == 1 and float32 only). */
#ifndef WGNN_GEMM_H
#define WGNN_GEMM_H

#include "conv.h"
#include "op.h"

typedef enum wgnn__act {
    WGNN__ACT_NONE = 0,
    WGNN__ACT_RELU = 1,
    WGNN__ACT_GELU = 2,      /* exact (erf) */
    WGNN__ACT_GELU_TANH = 3,
    WGNN__ACT_SILU = 4,
    WGNN__ACT_TANH = 5
} wgnn__act;
/* The ops' `activation` argument: these names, in wgnn__act's order. */
#define WGNN__ACT_NAMES "none|relu|gelu|gelu_tanh|silu|tanh"

/* What is done to A's rows before the product (linear's `prologue`):
 * RMS: each row of A divided by sqrt(mean(row^2) + eps) (RMSNorm without its
 * weight, which the caller folds into B); RMS_W: the same times the
 * weight prew [k] (RMSNorm whole); SWIGLU: A's rows hold 2k values, and the
 * product takes silu(a[:k]) * a[k:]. */
typedef enum wgnn__pre { WGNN__PRE_NONE = 0, WGNN__PRE_RMS = 1, WGNN__PRE_SWIGLU = 2, WGNN__PRE_RMS_W = 3 } wgnn__pre;

typedef struct wgnn__gemm_operand {
    WGPUBuffer buf;      /* NULL: plan scratch buffer `scratch` */
    int scratch;
    uint64_t off;        /* elements */
    uint64_t bs;         /* batch stride, elements; 0 broadcasts over the batch */
} wgnn__gemm_operand;

typedef struct wgnn__gemm {
    uint32_t m, n, k, batch;
    wgnn__gemm_operand a, b, c, bias; /* bias.buf NULL and bias.scratch < 0: no bias */
    wgnn__gemm_operand res;           /* res.buf NULL: no residual (zero-initialised: none) */
    uint64_t lda, ldb, ldc, ldr;
    uint64_t bias_rs, bias_cs;
    bool trans_a, trans_b, b_f16;
    float alpha, beta;
    wgnn__act act;
    wgnn__pre pre; /* batch 1, A not transposed; lda counts A's stored row (2k for SWIGLU) */
    float eps;     /* RMS's */
    WGPUBuffer prew; /* RMS_W's weight [k] float32 */
    /* ln_y.buf not NULL: also y = LayerNorm(C) over each row of n, times
     * ln_w plus ln_b (float32 [n] each), into ln_y (n a row); batch 1, ldc
     * = n. Where the product ends in gemm_reduce (split-K, a bias pass) that
     * pass writes both (gemm_reduce_ln.wgsl), else a layer_norm pass over
     * C follows it (reduce_rows.wgsl). */
    wgnn__gemm_operand ln_y;
    WGPUBuffer ln_w, ln_b;
    float ln_eps;
    /* Set by the planner alone (a wave-balanced product, src/ops/gemm.c):
     * tiles below sk_dp whole, the rest in sk_ts K slices each; 0: off. */
    uint32_t sk_dp, sk_ts;
    /* planner alone, with sk_ts: which of those workgroups a dispatch runs
     * (the tail plan, gemm_split.c): 0 all (their extras after C), 1 the
     * whole tiles alone, 2 the tail's slices alone, C then [sk_ts][rows
     * from the first tail tile's on][ldc] from c.off */
    uint32_t sk_part;
    bool big_tile; /* planner alone: a wave plan's product, on the 128 x 128 tile */
    uint32_t kw;   /* planner alone: K groups inside a workgroup (gemm.wgsl's KW); 0 or 1: one */
    const wgnn__conv2d_geom *cols; /* not NULL: B gathered as these im2col columns (above) */
} wgnn__gemm;

/* Appends the dispatches of one GEMM to p (chunked over the batch or split
 * where a dimension passes the device's dispatch or binding limits). */
wgnn_status wgnn__gemm_plan(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g);

/* Whether a product of this shape with a bias of one row ([n]) would run
 * as the plain product and a pass over its output for the bias alone (no
 * K slices, no wave plan's tail to reduce): then a caller that can take the
 * bias elsewhere saves that pass (the encoders' q|k|v bias, taken by
 * sdpa_qkvpacked; src/models/vit.c). B is [k, n], or [n, k] when trans_b. */
bool wgnn__gemm_bias_pass_alone(const wgnn_context *ctx, uint32_t m, uint32_t n, uint32_t k, bool trans_b, bool b_f16);

/* The GEMV kernels' shape (gemv and gemv4 here, linear_q8 in quant.c): *wg
 * threads a workgroup (WGNN_GEMV_WG, default 256, within the device's
 * limits) and the lanes that walk one row of W together, returned: the
 * fewest from 32, doubling, with which a lane issues at most per_lane of
 * the row's `pieces` loads (a lane's loads wait on memory a step at a time,
 * so fewer, wider steps hide the latency), or WGNN_GEMV_LANES; at most *wg. */
uint32_t wgnn__gemv_lanes(const wgnn_context *ctx, uint64_t pieces, uint64_t per_lane, uint32_t *wg);

/* linear's and linear_q8's bias rule: [n], or the output's whole shape
 * (a residual added in the same pass). */
bool wgnn__linear_bias_ok(const wgnn_desc *bias, const wgnn_desc *out, int64_t n);

/* linear's and linear_q8's prologue argument: the row's input count without
 * it (n_fixed: 2 for linear, 3 for linear_q8), whether a bias is given, and
 * where the norm weight is (-1: none): prologue=rms_norm_weight takes it as
 * the last input. */
int wgnn__linear_norm_input(const wgnn__node *n, int n_fixed, int pre_arg, bool *has_bias);
/* linear's optional inputs (-1: not given): bias at 2, then norm_weight
 * (prologue=rms_norm_weight), the residual (residual=true) and the
 * LayerNorm's weight and bias (layer_norm=true; *ln is the weight's) last,
 * in that order. */
void wgnn__linear_inputs(const wgnn__node *n, int *bias, int *norm, int *res, int *ln);
/* That input, when there is one (at >= 0), must be float32 [k] and come
 * after the n_fixed inputs; kname names k in the message. */
wgnn_status wgnn__linear_norm_weight_check(wgnn__node *n, int at, int n_fixed, int64_t k, const char *kname);

/* ---- between gemm.c (tiles, the product's kernels) and gemm_split.c
 * (K slices, wave plans, the reduce pass) ---- */

static inline uint64_t wgnn__ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* A register tile of gemm.wgsl: WX x WY threads, TM x TN values each, K
 * tiles of BK; gemv_mr > 0: shaders/gemv.wgsl with this many rows (wx =
 * threads, wy = lanes a column). */
typedef struct wgnn__gemm_tile {
    uint32_t wx, wy, tm, tn, bk;
    uint32_t gemv_mr;
    bool gemv_n; /* with gemv_mr: shaders/gemvn.wgsl (B untransposed; wx = threads, wy = column quads) */
} wgnn__gemm_tile;

/* The elements of each operand from its first: the extents a binding must
 * hold. A's rows are 2k wide with the SWIGLU prologue; B's elements are 2
 * bytes each where b_f16. */
static inline uint64_t wgnn__gemm_a_row(const wgnn__gemm *g) {
    return (uint64_t)g->k * (g->pre == WGNN__PRE_SWIGLU ? 2u : 1u);
}
static inline uint64_t wgnn__gemm_a_extent(const wgnn__gemm *g) {
    return g->trans_a ? (uint64_t)(g->k - 1) * g->lda + g->m : (uint64_t)(g->m - 1) * g->lda + wgnn__gemm_a_row(g);
}
static inline uint64_t wgnn__gemm_b_extent(const wgnn__gemm *g) {
    if (g->cols) return (uint64_t)(g->cols->c * g->cols->h * g->cols->w); /* one input sample */
    return g->trans_b ? (uint64_t)(g->n - 1) * g->ldb + g->k : (uint64_t)(g->k - 1) * g->ldb + g->n;
}
static inline uint64_t wgnn__gemm_c_extent(const wgnn__gemm *g) { return (uint64_t)(g->m - 1) * g->ldc + g->n; }
static inline uint64_t wgnn__gemm_bias_extent(const wgnn__gemm *g) {
    return (uint64_t)(g->m - 1) * g->bias_rs + (uint64_t)(g->n - 1) * g->bias_cs + 1;
}
static inline uint64_t wgnn__gemm_res_extent(const wgnn__gemm *g) { return (uint64_t)(g->m - 1) * g->ldr + g->n; }
/* the row a wave plan's first tail tile starts at (dp tiles whole before
 * it, on tile t): the tail's slices hold the rows from there on */
static inline uint32_t wgnn__gemm_tail_m0(const wgnn__gemm *g, const wgnn__gemm_tile *t, uint32_t dp) {
    return (uint32_t)(dp / wgnn__ceil_div(g->n, (uint64_t)t->wx * t->tn) * t->wy * t->tm);
}

#define WGNN__GEMM_SMALL_M 256u /* products of at most this many rows take the small-M tile (gemm.c) */
#define WGNN__GEMV_MAX_ROWS 4u  /* a few rows against B (linear at decode): the GEMV kernels */
/* Whether g runs on gemv.wgsl / gemv4.wgsl: at most WGNN__GEMV_MAX_ROWS
 * rows of an untransposed A against a transposed B */
static inline bool wgnn__gemm_gemv_ok(const wgnn__gemm *g) {
    return !g->cols && g->trans_b && !g->trans_a && g->m <= WGNN__GEMV_MAX_ROWS;
}
/* Whether g runs on gemvn.wgsl: at most WGNN__GEMV_MAX_ROWS rows against
 * an untransposed B whose rows are whole 16-byte quads (n, ldb, B's offset
 * and batch stride multiples of 4), no prologue */
static inline bool wgnn__gemm_gemvn_ok(const wgnn__gemm *g) {
    return !g->cols && !g->trans_a && !g->trans_b && g->m <= WGNN__GEMV_MAX_ROWS && g->pre == WGNN__PRE_NONE && !g->sk_ts &&
           g->n % 4 == 0 && g->ldb % 4 == 0 && g->b.off % 4 == 0 && (g->batch == 1 || g->b.bs % 4 == 0);
}

/* the 128 x 128 tile, which the wave plans are made for */
extern const wgnn__gemm_tile wgnn__gemm_big_tile;
/* the tile g runs on (gemm.c: measured on the H200, or WGNN_GEMM_TILE) */
wgnn__gemm_tile wgnn__gemm_pick_tile(const wgnn_context *ctx, const wgnn__gemm *g);
bool wgnn__gemm_is_big_tile(const wgnn__gemm_tile *t);
/* whether g's bias (if it has one) can start the accumulators (gemm.wgsl's
 * BIAS_INIT: one row of it, alpha != 0; not with WGNN_GEMM_BIAS_INIT=0) */
bool wgnn__gemm_bias_init_ok(const wgnn_context *ctx, const wgnn__gemm *g);
/* whether the device takes the small-M tile (32 x 64 at 64 threads) */
bool wgnn__gemm_small_tile_ok(const wgnn_context *ctx);
/* the largest binding the kernels index (u32 element indices) */
uint64_t wgnn__gemm_binding_cap(const wgnn_context *ctx);

/* gemm_split.c: g through K slices or a bias pass and a reduce, where its
 * shape asks for that; *split false: nothing recorded, the plain route
 * runs it. *ln_done: g's LayerNorm (ln_y) written by the reduce too. */
wgnn_status wgnn__gemm_plan_split(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, bool *split, bool *ln_done,
                                  wgnn__gemm *plain);
/* gemm_split.c: whether g (B not gathered) would take K slices or a bias
 * pass: the route that conv2d's gathered columns (cols) do not take. */
bool wgnn__gemm_splits(const wgnn_context *ctx, const wgnn__gemm *g);
/* gemm_split.c: whether g, which would run whole on the 128 x 128 tile with
 * its epilogue in the tile (no residual, LayerNorm, K groups or prologue;
 * a bias of one row in the accumulators or none), takes the tail plan: *dp
 * tiles whole, the rest in *ts K slices (the compute units known, and the
 * plan modelled 3% under whole waves). wgnn__gemm_plan_tail plans g so:
 * the slices into scratch, the whole tiles into C, then gemm_tail.wgsl. */
bool wgnn__gemm_tail_plan(const wgnn_context *ctx, const wgnn__gemm *g, uint32_t *dp, uint32_t *ts);
/* *skipped: nothing recorded (no scratch slot left), g must take its whole tiles' route */
wgnn_status wgnn__gemm_plan_tail(wgnn_context *ctx, wgnn__plan *p, const wgnn__gemm *g, uint32_t dp, uint32_t ts,
                                 bool *skipped);
/* an operand's binding from its element e0 (esz bytes each): from the
 * aligned byte offset at or below it (*start), e0 at element *first inside */
void wgnn__gemm_binding_start(const wgnn_context *ctx, uint64_t e0, uint64_t esz, uint64_t *start, uint64_t *first);
/* binds bytes of operand o from start_bytes (a buffer, or a plan scratch) */
void wgnn__gemm_bind(wgnn__dispatch *d, const wgnn__gemm_operand *o, uint64_t start_bytes, uint64_t bytes);
/* K groups inside a workgroup that a product of at most
 * WGNN__GEMM_SMALL_M rows takes on its tile (the small-M tile, or
 * WGNN_GEMM_TILE's) where split_count would cut it into s K slices (a
 * divisor of s, 1: none), within WGNN_GEMM_KW and the device's limits. */
uint32_t wgnn__gemm_kw(const wgnn_context *ctx, const wgnn__gemm *g, uint32_t s);

#endif /* WGNN_GEMM_H */
