/* conv.c - the spatial family's conv2d row, its shared checks and binding
 * windows, and the im2col building block (src/ops/conv.h).
 *
 * conv2d has four routes (conv2d_plan picks one): groups == 1 through
 * the shared GEMM (conv2d_gemm), its B the im2col columns, gathered from
 * the input by the GEMM's own loads (gather_cols, conv2d_gathered) or, for
 * one sample whose product takes K slices, written by im2col into
 * scratch first; one input channel a group
 * (depthwise) on shaders/conv2d_dw.wgsl, which stages a 2-D output tile's
 * input region and the plane's weights in workgroup memory (conv2d_dw,
 * dw_config); other groups of 32 output channels or more through the
 * shared GEMM too, one product a sample with the groups as its batch
 * entries (conv2d_gathered); the rest on shaders/conv2d.wgsl, a direct (implicit-GEMM)
 * kernel for every groups value: per sample and group the output
 * [Og, Ho*Wo] is weight [Og, K] x columns [K, Ho*Wo], K = (C/groups)*kh*kw,
 * with the columns gathered from the input as they are needed, never
 * stored. A workgroup computes a TO x TP tile (output channels x output
 * pixels) of one sample and group, staging KC-deep slices of the weight and
 * of the columns through workgroup memory; each thread keeps RO x RP
 * outputs in registers. The tile shape follows the channels per group: 32 x
 * 64 for wide layers, a single channel x 256 pixels for depthwise ones (where
 * conv2d_dw.wgsl does not take them). The direct kernels split samples over
 * dispatches (offset bindings) where the input or output passes one storage
 * binding (conv_dispatches). float32 only. */
#include "conv.h"
#include "gemm.h"

#include "ref/spatial_ref.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define CONV_PARAMS(X, S)                                                   \
    X(S, u32x4, in_dims)  /* C, H, W, C/groups */                           \
    X(S, u32x4, out_dims) /* O, Ho, Wo, O/groups */                         \
    X(S, i32x4, win)      /* stride h, w, padding h, w */                   \
    X(S, u32x4, win2)     /* dilation h, w, kernel h, w */                  \
    X(S, u32, n_wg)       /* workgroups of this dispatch (2-D fold) */      \
    X(S, u32, ptiles)     /* pixel tiles per (sample, channel tile) */      \
    X(S, u32, ctiles)     /* channel tiles per group */                     \
    X(S, u32, k)          /* (C/groups) * kh * kw */                        \
    X(S, u32, groups)                                                       \
    X(S, u32, x_off)      /* element offset of the first sample in X's window */ \
    X(S, u32, y_off)
#define IM2COL_PARAMS(X, S)                                                 \
    X(S, u32x4, in_dims)  /* C, H, W, Wo */                                 \
    X(S, i32x4, win)                                                        \
    X(S, u32x4, win2)                                                       \
    X(S, u32, n_items)    /* columns elements of this dispatch */           \
    X(S, u32, k)          /* C * kh * kw */                                 \
    X(S, u32, npix)       /* Ho * Wo */                                     \
    X(S, u32, x_off) X(S, u32, y_off)
#define DW_PARAMS(X, S)                                                     \
    X(S, u32x4, in_dims)  /* C, H, W, M = O / C */                          \
    X(S, u32x4, out_dims) /* O, Ho, Wo, 0 */                                \
    X(S, i32x4, pad)      /* padding h, w, 0, 0 */                          \
    X(S, u32x4, tiles)    /* tiles across Wo, down Ho, 0, 0 */              \
    X(S, u32, n_wg)       /* workgroups of this dispatch (2-D fold) */      \
    X(S, u32, x_off)      /* element offset of the first sample in X's window */ \
    X(S, u32, y_off)
WGNN__PARAMS_STRUCT(conv_params, CONV_PARAMS);
WGNN__PARAMS_STRUCT(dw_params, DW_PARAMS);
WGNN__PARAMS_STRUCT(im2col_params, IM2COL_PARAMS);
WGNN__PARAMS_CHECK(conv_params, CONV_PARAMS)
WGNN__PARAMS_CHECK(dw_params, DW_PARAMS)
WGNN__PARAMS_CHECK(im2col_params, IM2COL_PARAMS)

#define I31 2147483647LL

/* ---- shared checks ------------------------------------------------------------ */

wgnn_status wgnn__spatial_need_f32(wgnn__node *n, int i, const char *name) {
    if (n->in[i].dtype == WGNN_F32) return WGNN_OK;
    return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; %s takes float32 only", name,
                          wgnn_dtype_name(n->in[i].dtype), n->op->info.name);
}

/* "2,3" (the values as given) */
static void ints_str(const wgnn__arg *a, char *buf, size_t cap) {
    size_t m = 0;
    buf[0] = '\0';
    for (int i = 0; i < a->n && m < cap; i++)
        m += (size_t)snprintf(buf + m, cap - m, "%s%lld", i ? "," : "", (long long)a->i[i]);
}

/* The pair an int[] argument stands for, without checks (def when empty). */
static void pair_of(const wgnn__arg *a, const int64_t *def, int64_t out[2]) {
    if (!a->set || a->n == 0) {
        out[0] = def[0];
        out[1] = def[1];
    } else {
        out[0] = a->i[0];
        out[1] = a->n > 1 ? a->i[1] : a->i[0];
    }
}

wgnn_status wgnn__pair_arg(wgnn__node *n, int idx, int64_t min, const int64_t *def, int64_t out[2]) {
    const wgnn__arg *a = &n->arg[idx];
    const char *name = n->op->info.args[idx].name;
    char v[200];
    ints_str(a, v, sizeof v);
    if (a->n == 0 && !def)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is empty; give 1 value (both dims) or 2 (h,w)", name);
    if (a->n > 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s=%s has %d values; give 1 (both dims) or 2 (h,w)", name,
                              v, a->n);
    for (int i = 0; i < a->n; i++)
        if (a->i[i] < min || a->i[i] > I31)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s=%s: each value must be >= %lld and < 2^31", name,
                                  v, (long long)min);
    pair_of(a, def ? def : (const int64_t[2]){0, 0}, out);
    return WGNN_OK;
}

wgnn_status wgnn__spatial_input(wgnn__node *n, const char *name, bool rank3_ok) {
    const wgnn_desc *x = &n->in[0];
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (x->rank != 4 && !(rank3_ok && x->rank == 3))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s (rank %d); it must be %s", name, xs, x->rank,
                              rank3_ok ? "[N, C, H, W] or [C, H, W]" : "[N, C, H, W]");
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] > I31)
            return wgnn__node_err(n, WGNN_ERR_LIMIT, "%s is %s; every dim must be < 2^31", name, xs);
    return WGNN_OK;
}

/* floor(a / b), b > 0 (aten's div_rtn) */
static int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* aten's pooling_output_shape: the last window must start inside the input
 * or its left padding when ceil_mode rounds up. */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    int64_t o = div_floor(in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) o--;
    return o;
}

bool wgnn__conv2d_geom_of(const wgnn__node *n, wgnn__conv2d_geom *g) {
    static const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
    const wgnn_desc *x = &n->in[0];
    bool conv = strcmp(n->op->info.name, "conv2d") == 0;
    if (!conv && strcmp(n->op->info.name, "max_pool2d") != 0) return false;
    memset(g, 0, sizeof *g);
    int b = x->rank == 4;
    g->n = b ? x->dims[0] : 1;
    g->c = x->dims[b];
    g->h = x->dims[b + 1];
    g->w = x->dims[b + 2];
    int64_t k[2], s[2], p[2], d[2];
    if (conv) {
        const wgnn_desc *w = &n->in[1];
        k[0] = w->dims[2];
        k[1] = w->dims[3];
        pair_of(&n->arg[WGNN__CONV_STRIDE], one, s);
        pair_of(&n->arg[WGNN__CONV_PADDING], zero, p);
        pair_of(&n->arg[WGNN__CONV_DILATION], one, d);
        g->groups = n->arg[WGNN__CONV_GROUPS].i[0];
        g->o = w->dims[0];
    } else {
        pair_of(&n->arg[WGNN__POOL_KERNEL], one, k);
        pair_of(&n->arg[WGNN__POOL_STRIDE], k, s);
        pair_of(&n->arg[WGNN__POOL_PADDING], zero, p);
        pair_of(&n->arg[WGNN__POOL_DILATION], one, d);
        g->groups = 1;
        g->o = g->c;
        g->ceil_mode = n->arg[WGNN__POOL_CEIL].i[0] != 0;
    }
    g->kh = k[0], g->kw = k[1], g->sh = s[0], g->sw = s[1];
    g->ph = p[0], g->pw = p[1], g->dh = d[0], g->dw = d[1];
    if (s[0] < 1 || s[1] < 1) return false; /* unchecked node */
    g->ho = pool_out(g->h, g->kh, g->sh, g->ph, g->dh, g->ceil_mode);
    g->wo = pool_out(g->w, g->kw, g->sw, g->pw, g->dw, g->ceil_mode);
    return true;
}

/* ---- binding windows --------------------------------------------------------- */

static uint64_t binding_cap(const wgnn_context *ctx) {
    uint64_t cap = ctx->limits.maxStorageBufferBindingSize;
    return cap > 0xFFFFFFFCull ? 0xFFFFFFFCull : cap;
}

static uint64_t offset_align(const wgnn_context *ctx) {
    return ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
}

uint32_t wgnn__bind_window(const wgnn_context *ctx, wgnn__dispatch *d, const wgnn__binding *b, uint64_t first,
                           uint64_t count) {
    uint64_t start = b->offset + first * 4u, align = offset_align(ctx);
    uint64_t base = start / align * align;
    uint64_t size = start - base + count * 4u;
    wgnn__binding whole = *b;
    whole.offset = 0; /* base is from the buffer's start */
    wgnn__plan_bind_range(d, &whole, base, size);
    return (uint32_t)((start - base) / 4u);
}

uint64_t wgnn__units_per_window(const wgnn_context *ctx, const uint64_t *unit_elems, int n, uint64_t total) {
    uint64_t cap = binding_cap(ctx), align = offset_align(ctx);
    bool fits = true;
    for (int i = 0; i < n; i++)
        if (unit_elems[i] && total > cap / 4u / unit_elems[i]) fits = false;
    if (fits) return total;
    if (cap <= align) return 0;
    uint64_t most = total;
    for (int i = 0; i < n; i++) {
        if (!unit_elems[i]) continue;
        uint64_t m = (cap - align) / 4u / unit_elems[i];
        if (m < most) most = m;
    }
    return most;
}

static wgnn_status window_err(wgnn_context *ctx, const char *what, const char *unit_name, uint64_t unit_elems) {
    return wgnn__err(ctx, WGNN_ERR_LIMIT,
                     "%s: one %s is %llu bytes, more than fits one storage binding "
                     "(maxStorageBufferBindingSize %llu bytes, less minStorageBufferOffsetAlignment %u)",
                     what, unit_name, (unsigned long long)(unit_elems * 4u),
                     (unsigned long long)ctx->limits.maxStorageBufferBindingSize,
                     ctx->limits.minStorageBufferOffsetAlignment);
}

/* ---- conv2d check ---------------------------------------------------------------- */

static wgnn_status conv2d_check(wgnn__node *n) {
    static const char *const names[3] = {"input", "weight", "bias"};
    for (int i = 0; i < n->n_in; i++) {
        wgnn_status s = wgnn__spatial_need_f32(n, i, names[i]);
        if (s != WGNN_OK) return s;
    }
    wgnn_status s = wgnn__spatial_input(n, "input", true);
    if (s != WGNN_OK) return s;
    const wgnn_desc *x = &n->in[0], *w = &n->in[1];
    char xs[160], ws[160];
    wgnn__dims_str(x, xs, sizeof xs);
    wgnn__dims_str(w, ws, sizeof ws);
    if (w->rank != 4)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "weight is %s (rank %d); it must be [O, C/groups, kh, kw]",
                              ws, w->rank);
    for (int i = 0; i < 4; i++)
        if (w->dims[i] > I31)
            return wgnn__node_err(n, WGNN_ERR_LIMIT, "weight is %s; every dim must be < 2^31", ws);
    int64_t st[2], pd[2], dl[2];
    /* an empty list is an error (aten wants 1 or 2 values); unset takes the default */
    if ((s = wgnn__pair_arg(n, WGNN__CONV_STRIDE, 1, NULL, st)) != WGNN_OK) return s;
    if ((s = wgnn__pair_arg(n, WGNN__CONV_PADDING, 0, NULL, pd)) != WGNN_OK) return s;
    if ((s = wgnn__pair_arg(n, WGNN__CONV_DILATION, 1, NULL, dl)) != WGNN_OK) return s;
    int64_t groups = n->arg[WGNN__CONV_GROUPS].i[0];
    if (groups < 1 || groups > I31)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "groups=%lld must be >= 1 (and < 2^31)", (long long)groups);
    int64_t c = x->dims[x->rank - 3];
    if (c % groups)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "input %s has C=%lld channels, which groups=%lld does not divide", xs, (long long)c,
                              (long long)groups);
    if (w->dims[0] % groups)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "weight %s has O=%lld output channels, which groups=%lld does not divide", ws,
                              (long long)w->dims[0], (long long)groups);
    if (w->dims[1] * groups != c)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "weight %s with groups=%lld expects input with %lld channels (weight dim 1 x groups), "
                              "but input %s has C=%lld",
                              ws, (long long)groups, (long long)(w->dims[1] * groups), xs, (long long)c);
    if (n->n_in > 2) {
        const wgnn_desc *b = &n->in[2];
        if (b->rank != 1 || b->dims[0] != w->dims[0]) {
            char bs[160];
            wgnn__dims_str(b, bs, sizeof bs);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "bias is %s; it must be [O] = [%lld] (weight dim 0)", bs,
                                  (long long)w->dims[0]);
        }
    }
    wgnn__conv2d_geom g;
    wgnn__conv2d_geom_of(n, &g);
    if (g.ho < 1 || g.wo < 1)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "the padded input (%lld x %lld, H x W with padding=%lld,%lld) is smaller than the dilated "
                              "kernel (%lld x %lld: kernel %lldx%lld, dilation=%lld,%lld); the output would be empty",
                              (long long)(g.h + 2 * g.ph), (long long)(g.w + 2 * g.pw),
                              (long long)g.ph, (long long)g.pw, (long long)(g.dh * (g.kh - 1) + 1),
                              (long long)(g.dw * (g.kw - 1) + 1), (long long)g.kh, (long long)g.kw, (long long)g.dh,
                              (long long)g.dw);
    n->n_out = 1;
    n->out[0] = *x;
    n->out[0].dims[x->rank - 3] = g.o;
    n->out[0].dims[x->rank - 2] = g.ho;
    n->out[0].dims[x->rank - 1] = g.wo;
    return WGNN_OK;
}

/* ---- conv2d plan: direct kernel ------------------------------------------------- */

typedef struct conv_cfg {
    uint32_t ty, tx, ro, rp, kc;
} conv_cfg;

/* Threads TY (channels) x TX (pixels), each RO channels x RP pixels, KC
 * deep slices of K; the tile shrinks to narrow groups and small images. */
static void conv_config(const wgnn_context *ctx, const wgnn__conv2d_geom *g, conv_cfg *c) {
    uint64_t og = (uint64_t)(g->o / g->groups), npix = (uint64_t)(g->ho * g->wo);
    c->ro = og >= 4 ? 4 : wgnn__pow2_ceil(og);
    c->ty = wgnn__pow2_ceil((og + c->ro - 1) / c->ro);
    if (c->ty > 8) c->ty = 8;
    uint32_t wg = wgnn__pow2_floor(wgnn__clamp_workgroup_size(ctx, og >= 32 ? 128 : 64));
    if (c->ty > wg) c->ty = wg;
    c->tx = wg / c->ty;
    c->rp = 4;
    while (c->tx > 1 && (uint64_t)(c->tx / 2) * c->rp >= npix) c->tx /= 2;
    uint64_t smem = ctx->limits.maxComputeWorkgroupStorageSize;
    c->kc = 16;
    while (c->kc > 1 && (uint64_t)(c->ty * c->ro + c->tx * c->rp) * c->kc * 4u > smem) c->kc /= 2;
}

static void geom_params(const wgnn__conv2d_geom *g, int32_t win[4], uint32_t win2[4]) {
    win[0] = (int32_t)g->sh, win[1] = (int32_t)g->sw, win[2] = (int32_t)g->ph, win[3] = (int32_t)g->pw;
    win2[0] = (uint32_t)g->dh, win2[1] = (uint32_t)g->dw, win2[2] = (uint32_t)g->kh, win2[3] = (uint32_t)g->kw;
}

/* The direct kernels' dispatches (conv2d.wgsl, conv2d_dw.wgsl): as many
 * samples a dispatch as one binding window of the input and one of the
 * output hold, per_sample workgroups each (folded into x*y). q is the
 * kernel's params (qsize bytes) with everything but n_wg, x_off and y_off
 * (u32s at those byte offsets), which are set here a dispatch. Bindings:
 * the X window, the weight (whole), the bias or a dummy, the Y window. */
static wgnn_status conv_dispatches(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe,
                                   const wgnn__conv2d_geom *g, const wgnn_tensor *x, const wgnn_tensor *w,
                                   const wgnn_tensor *bias, wgnn_tensor *y, uint64_t per_sample, void *q, size_t qsize,
                                   size_t n_wg_at, size_t x_off_at, size_t y_off_at) {
    uint64_t in_unit = (uint64_t)(g->c * g->h * g->w), out_unit = (uint64_t)g->o * (uint64_t)(g->ho * g->wo);
    if (w->buf_size > binding_cap(ctx))
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "conv2d: the weight (%llu bytes) passes the device's maxStorageBufferBindingSize (%llu bytes)",
                         (unsigned long long)w->buf_size, (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    uint64_t units[2] = {in_unit, out_unit};
    uint64_t per = wgnn__units_per_window(ctx, units, 2, (uint64_t)g->n);
    if (per == 0)
        return window_err(ctx, "conv2d", in_unit > out_unit ? "input sample" : "output sample",
                          in_unit > out_unit ? in_unit : out_unit);
    wgnn__binding xb = {x->buf, 0, 0, 0}, yb = {y->buf, 0, 0, 0};
    for (uint64_t n0 = 0; n0 < (uint64_t)g->n; n0 += per) {
        uint64_t cnt = (uint64_t)g->n - n0 < per ? (uint64_t)g->n - n0 : per;
        uint64_t groups = per_sample * cnt;
        uint32_t gx, gy;
        wgnn_status s = wgnn__compute_2d_workgroup_count(ctx, groups, ctx->limits.maxComputeWorkgroupsPerDimension,
                                                         "conv2d", &gx, &gy);
        if (s != WGNN_OK) return s;
        uint32_t n_wg = (uint32_t)groups;
        memcpy((char *)q + n_wg_at, &n_wg, sizeof n_wg);
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, q, qsize, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        /* the window offsets are known once bound */
        uint32_t x_off = wgnn__bind_window(ctx, d, &xb, n0 * in_unit, cnt * in_unit);
        wgnn__plan_bind(d, w->buf, 0, 0);
        wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, bias ? bias->buf : NULL, false), 0, 0);
        uint32_t y_off = wgnn__bind_window(ctx, d, &yb, n0 * out_unit, cnt * out_unit);
        memcpy((char *)d->params + x_off_at, &x_off, sizeof x_off);
        memcpy((char *)d->params + y_off_at, &y_off, sizeof y_off);
    }
    return WGNN_OK;
}

static wgnn_status conv2d_direct(wgnn_context *ctx, const wgnn__conv2d_geom *g, const wgnn_tensor *x,
                                 const wgnn_tensor *w, const wgnn_tensor *bias, wgnn_tensor *y, wgnn__plan *p) {
    conv_cfg c;
    conv_config(ctx, g, &c);
    char pre[1024];
    snprintf(pre, sizeof pre,
             "%sconst TY: u32 = %uu;\nconst TX: u32 = %uu;\nconst RO: u32 = %uu;\nconst RP: u32 = %uu;\n"
             "const KC: u32 = %uu;\nconst HAS_BIAS: bool = %s;\n",
             WGNN__PARAMS_WGSL(CONV_PARAMS), c.ty, c.tx, c.ro, c.rp, c.kc, bias ? "true" : "false");
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "conv2d", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t cg = (uint64_t)(g->c / g->groups), og = (uint64_t)(g->o / g->groups);
    uint64_t npix = (uint64_t)(g->ho * g->wo), k = cg * (uint64_t)(g->kh * g->kw);
    uint64_t to = (uint64_t)c.ty * c.ro, tp = (uint64_t)c.tx * c.rp;
    uint64_t ptiles = (npix + tp - 1) / tp, ctiles = (og + to - 1) / to;
    conv_params q;
    memset(&q, 0, sizeof q);
    q.in_dims[0] = (uint32_t)g->c, q.in_dims[1] = (uint32_t)g->h, q.in_dims[2] = (uint32_t)g->w;
    q.in_dims[3] = (uint32_t)cg;
    q.out_dims[0] = (uint32_t)g->o, q.out_dims[1] = (uint32_t)g->ho, q.out_dims[2] = (uint32_t)g->wo;
    q.out_dims[3] = (uint32_t)og;
    geom_params(g, q.win, q.win2);
    q.ptiles = (uint32_t)ptiles;
    q.ctiles = (uint32_t)ctiles;
    q.k = (uint32_t)k;
    q.groups = (uint32_t)g->groups;
    return conv_dispatches(ctx, p, pipe, g, x, w, bias, y, ptiles * ctiles * (uint64_t)g->groups, &q, sizeof q,
                           offsetof(conv_params, n_wg), offsetof(conv_params, x_off), offsetof(conv_params, y_off));
}

/* ---- conv2d plan: one input channel a group (depthwise) ------------------------ */

typedef struct dw_cfg {
    uint32_t tw, tyt, ry;
    uint64_t rr, rc; /* the input region a tile reads */
} dw_cfg;

/* TW output columns (a power of two from Wo, 4 to 32) x TYT thread rows,
 * RY outputs a thread down (up to 4 where Ho is tall; up to 2 at a
 * vertical stride over 1: on an H100, docs/PERFORMANCE.md session 35,
 * 3x3 stride 2, 144 channels at 112^2, batch 8, took 0.051 ms at RY 2
 * against 0.066 at 4, and 7x7 stride 1, 96 channels at 56^2, 0.030 at 4
 * against 0.034 at 2); the tile shrinks until its input region and the
 * weights fit workgroup memory. false where
 * even one output does not (a kernel too large or too dilated):
 * conv2d_direct runs it. WGNN_CONV_DW=TW,TYT,RY sets the tile before it
 * shrinks (measurements). */
static bool dw_config(const wgnn_context *ctx, const wgnn__conv2d_geom *g, dw_cfg *c) {
    uint32_t wg = wgnn__pow2_floor(wgnn__clamp_workgroup_size(ctx, 128));
    uint64_t room = ctx->limits.maxComputeWorkgroupStorageSize / 4u;
    uint64_t ho = (uint64_t)g->ho, kk = (uint64_t)(g->kh * g->kw);
    c->tw = wgnn__pow2_ceil((uint64_t)g->wo);
    if (c->tw < 4) c->tw = 4;
    if (c->tw > 32) c->tw = 32;
    if (c->tw > wg) c->tw = wg;
    c->tyt = wg / c->tw;
    while (c->tyt > 1 && c->tyt / 2 >= ho) c->tyt /= 2;
    c->ry = 1;
    while (c->ry < (g->sh > 1 ? 2u : 4u) && (uint64_t)c->tyt * c->ry < ho) c->ry *= 2;
    if (ctx->knobs.conv_dw[0]) { /* WGNN_CONV_DW (measurements), within the device's workgroup size */
        c->tw = ctx->knobs.conv_dw[0], c->tyt = ctx->knobs.conv_dw[1], c->ry = ctx->knobs.conv_dw[2];
        uint32_t lim = wgnn__clamp_workgroup_size(ctx, c->tw * c->tyt);
        while (c->tw * c->tyt > lim) c->tyt > 1 ? (c->tyt /= 2) : (c->tw /= 2);
    }
    for (;;) {
        /* each term < 2^32 * 2^31 (the node's checks): no overflow */
        c->rr = (uint64_t)(c->tyt * c->ry - 1) * (uint64_t)g->sh + (uint64_t)(g->kh - 1) * (uint64_t)g->dh + 1;
        c->rc = (uint64_t)(c->tw - 1) * (uint64_t)g->sw + (uint64_t)(g->kw - 1) * (uint64_t)g->dw + 1;
        if (kk <= room && c->rr <= room && c->rc <= room && c->rr * c->rc <= room - kk) return true;
        if (c->ry > 1) c->ry /= 2;
        else if (c->tyt > 1) c->tyt /= 2;
        else if (c->tw > 1) c->tw /= 2;
        else return false;
    }
}

static wgnn_status conv2d_dw(wgnn_context *ctx, const wgnn__conv2d_geom *g, const dw_cfg *c, const wgnn_tensor *x,
                             const wgnn_tensor *w, const wgnn_tensor *bias, wgnn_tensor *y, wgnn__plan *p) {
    char pre[1536];
    snprintf(pre, sizeof pre,
             "%sconst TW: u32 = %uu;\nconst TYT: u32 = %uu;\nconst RY: u32 = %uu;\nconst KH: u32 = %lluu;\n"
             "const KW: u32 = %lluu;\nconst SH: u32 = %lluu;\nconst SW: u32 = %lluu;\nconst DH: u32 = %lluu;\n"
             "const DW: u32 = %lluu;\nconst RR: u32 = %lluu;\nconst RC: u32 = %lluu;\nconst HAS_BIAS: bool = %s;\n",
             WGNN__PARAMS_WGSL(DW_PARAMS), c->tw, c->tyt, c->ry, (unsigned long long)g->kh,
             (unsigned long long)g->kw, (unsigned long long)g->sh, (unsigned long long)g->sw,
             (unsigned long long)g->dh, (unsigned long long)g->dw, (unsigned long long)c->rr,
             (unsigned long long)c->rc, bias ? "true" : "false");
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "conv2d_dw", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t tx = ((uint64_t)g->wo + c->tw - 1) / c->tw, ty = ((uint64_t)g->ho + c->tyt * c->ry - 1) / (c->tyt * c->ry);
    dw_params q;
    memset(&q, 0, sizeof q);
    q.in_dims[0] = (uint32_t)g->c, q.in_dims[1] = (uint32_t)g->h, q.in_dims[2] = (uint32_t)g->w;
    q.in_dims[3] = (uint32_t)(g->o / g->c);
    q.out_dims[0] = (uint32_t)g->o, q.out_dims[1] = (uint32_t)g->ho, q.out_dims[2] = (uint32_t)g->wo;
    q.pad[0] = (int32_t)g->ph, q.pad[1] = (int32_t)g->pw;
    q.tiles[0] = (uint32_t)tx, q.tiles[1] = (uint32_t)ty;
    return conv_dispatches(ctx, p, pipe, g, x, w, bias, y, tx * ty * (uint64_t)g->o, &q, sizeof q,
                           offsetof(dw_params, n_wg), offsetof(dw_params, x_off), offsetof(dw_params, y_off));
}

/* ---- conv2d plan: the shared GEMM ------------------------------------------------ */

/* whether the GEMM can gather columns from `elems` input elements (one
 * sample's channels, or one group's) bound from an aligned offset */
static bool gather_fits(const wgnn_context *ctx, uint64_t elems) {
    return elems * 4 + offset_align(ctx) <= binding_cap(ctx);
}

/* Whether conv2d_gemm's product gm (batch 1, columns in scratch) gathers
 * its columns from the input instead (wgnn__gemm's cols: no im2col pass,
 * no column buffer): where one input sample fits a binding, unless it is
 * one sample whose product would take K slices or a bias pass, which
 * gathered columns do not take (a few output tiles with a long K: ViT's
 * patch embedding). WGNN_CONV_ROUTE=im2col|implicit forces one. */
static bool gather_cols(const wgnn_context *ctx, const wgnn__conv2d_geom *g, const wgnn__gemm *gm) {
    if (ctx->knobs.conv_route == WGNN__CONV_IM2COL || !gather_fits(ctx, (uint64_t)(g->c * g->h * g->w))) return false;
    if (ctx->knobs.conv_route == WGNN__CONV_IMPLICIT) return true;
    return g->n > 1 || !wgnn__gemm_splits(ctx, gm);
}

/* The shared GEMM with columns it gathers itself (gemm.h's cols), for any
 * groups: out[s][gr] = weight_gr [Og, Kg] x cols [Kg, Ho*Wo],
 * Kg = (C/groups)*kh*kw, the columns of group gr's input channels gathered
 * from the input. One product a sample whose batch entries are the groups,
 * or, with fewer groups than samples (groups 1 above all), one a group
 * whose batch entries are the samples: whichever makes fewer products.
 * The caller has checked that one group's input channels fit a binding
 * (gather_fits). */
static wgnn_status conv2d_gathered(wgnn_context *ctx, const wgnn__conv2d_geom *g, const wgnn_tensor *x,
                                   const wgnn_tensor *w, const wgnn_tensor *bias, wgnn_tensor *y, wgnn__plan *p) {
    uint64_t cg = (uint64_t)(g->c / g->groups), og = (uint64_t)(g->o / g->groups);
    uint64_t kg = cg * (uint64_t)(g->kh * g->kw), npix = (uint64_t)(g->ho * g->wo), hw = (uint64_t)(g->h * g->w);
    wgnn__conv2d_geom gg = *g; /* one group's geometry: the columns the GEMM gathers */
    gg.c = (int64_t)cg;
    gg.o = (int64_t)og;
    gg.groups = 1;
    /* one product a sample (batch entries: the groups), or, with fewer
     * groups than samples, one a group (batch entries: the samples) */
    bool by_group = (uint64_t)g->groups < (uint64_t)g->n;
    uint64_t outer = by_group ? (uint64_t)g->groups : (uint64_t)g->n;
    for (uint64_t i = 0; i < outer; i++) {
        uint64_t gr = by_group ? i : 0, s = by_group ? 0 : i;
        wgnn__gemm gm = {.m = (uint32_t)og, .n = (uint32_t)npix, .k = (uint32_t)kg,
                         .batch = (uint32_t)(by_group ? g->n : g->groups),
                         .a = {w->buf, -1, gr * og * kg, by_group ? 0 : og * kg},
                         .b = {x->buf, -1, s * (uint64_t)g->c * hw + gr * cg * hw, by_group ? (uint64_t)g->c * hw : cg * hw},
                         .c = {y->buf, -1, s * (uint64_t)g->o * npix + gr * og * npix,
                               by_group ? (uint64_t)g->o * npix : og * npix},
                         .bias = {bias ? bias->buf : NULL, -1, gr * og, by_group ? 0 : og},
                         .lda = kg, .ldb = npix, .ldc = npix, .bias_rs = 1, .bias_cs = 0, .alpha = 1, .beta = 1,
                         .cols = &gg};
        wgnn_status st = wgnn__gemm_plan(ctx, p, &gm);
        if (st != WGNN_OK) return st;
    }
    return WGNN_OK;
}

/* groups == 1 through the shared GEMM (see the route below). */
static wgnn_status conv2d_gemm(wgnn_context *ctx, const wgnn__conv2d_geom *g, const wgnn_tensor *x,
                               const wgnn_tensor *w, const wgnn_tensor *bias, wgnn_tensor *y, wgnn__plan *p) {
    uint64_t k = (uint64_t)(g->c * g->kh * g->kw), npix = (uint64_t)(g->ho * g->wo);
    uint64_t in_unit = (uint64_t)(g->c * g->h * g->w), out_unit = (uint64_t)g->o * npix;
    if (k > 0xFFFFFFFFull || npix > 0xFFFFFFFFull)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "conv2d: C*kh*kw or Ho*Wo passes 2^32");
    wgnn__gemm gm = {.m = (uint32_t)g->o, .n = (uint32_t)npix, .k = (uint32_t)k, .batch = 1,
                     .a = {w->buf, -1, 0, 0}, .c = {y->buf, -1, 0, out_unit},
                     .bias = {bias ? bias->buf : NULL, -1, 0, 0},
                     .lda = k, .ldb = npix, .ldc = npix, .bias_rs = 1, .bias_cs = 0, .alpha = 1, .beta = 1};
    bool direct_cols = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
    if (direct_cols) { /* the input's [C, H*W] planes are the columns */
        gm.batch = (uint32_t)g->n;
        gm.b = (wgnn__gemm_operand){x->buf, -1, 0, in_unit};
        return wgnn__gemm_plan(ctx, p, &gm);
    }
    if (gather_cols(ctx, g, &gm)) return conv2d_gathered(ctx, g, x, w, bias, y, p);
    /* columns for as many samples as fit one binding and 256 MiB, one
     * scratch buffer reused by every chunk (dispatches in a pass run in order) */
    uint64_t per = wgnn__im2col_max_samples(ctx, g);
    uint64_t cap = ((uint64_t)256 << 20) / (k * npix * 4);
    if (cap < 1) cap = 1;
    if (per > cap) per = cap;
    /* im2col's grid: one thread an element, folded into maxd x maxd */
    uint64_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    uint64_t grid = maxd * maxd * wgnn__clamp_workgroup_size(ctx, 256) / (k * npix);
    if (per > grid) per = grid;
    if (per == 0) return conv2d_direct(ctx, g, x, w, bias, y, p); /* columns of one sample do not fit */
    if (per > (uint64_t)g->n) per = (uint64_t)g->n;
    int sc = wgnn__plan_scratch(p, per * k * npix * 4);
    if (sc < 0) return wgnn__err(ctx, WGNN_ERR_LIMIT, "conv2d: too many scratch buffers");
    for (uint64_t n0 = 0; n0 < (uint64_t)g->n; n0 += per) {
        uint64_t cnt = (uint64_t)g->n - n0 < per ? (uint64_t)g->n - n0 : per;
        wgnn_status s = wgnn__im2col_plan(ctx, p, x, g, n0, cnt, (wgnn__binding){NULL, 0, 0, (uint32_t)sc + 1});
        if (s != WGNN_OK) return s;
        wgnn__gemm h = gm;
        h.batch = (uint32_t)cnt;
        h.b = (wgnn__gemm_operand){NULL, sc, 0, k * npix};
        h.c.off = n0 * out_unit;
        s = wgnn__gemm_plan(ctx, p, &h);
        if (s != WGNN_OK) return s;
    }
    return WGNN_OK;
}

/* groups > 1 takes conv2d_gathered where a group has at least
 * GROUPED_GEMM_OG output channels (a tile's rows) and its input channels
 * fit one binding. */
#define GROUPED_GEMM_OG 32
static bool grouped_gemm_ok(const wgnn_context *ctx, const wgnn__conv2d_geom *g) {
    uint64_t cg = (uint64_t)(g->c / g->groups), og = (uint64_t)(g->o / g->groups);
    if (!gather_fits(ctx, cg * (uint64_t)(g->h * g->w)) || cg * (uint64_t)(g->kh * g->kw) > 0xFFFFFFFFull ||
        (uint64_t)(g->ho * g->wo) > 0xFFFFFFFFull)
        return false;
    int route = ctx->knobs.conv_route;
    return route == WGNN__CONV_GEMM || (route != WGNN__CONV_DIRECT && og >= GROUPED_GEMM_OG);
}

static wgnn_status conv2d_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                               wgnn_tensor *const *out, wgnn__plan *p) {
    wgnn__conv2d_geom g;
    wgnn__conv2d_geom_of(n, &g);
    const wgnn_tensor *bias = n->n_in > 2 ? in[2] : NULL;
    /* ---- ROUTE: the one place conv2d picks its kernel. ----------------------
     * groups == 1: the shared GEMM, out[s] = weight [O, K] x cols[s] [K, Ho*Wo]
     * (K = C*kh*kw) with the bias in its epilogue; cols: the input itself for
     * a 1x1 kernel with stride 1 and no padding, else gathered from the
     * input by the GEMM's loads (gather_cols), else from im2col into a
     * plan scratch buffer. One input channel a group (depthwise, C = groups > 1):
     * conv2d_dw.wgsl where its tile's input region fits workgroup memory.
     * Other groups > 1: the shared GEMM with gathered columns, the groups
     * its batch entries, where a group has 32 output channels or more
     * (conv2d_gathered); else the direct kernel, conv2d.wgsl.
     * WGNN_CONV_ROUTE=direct|gemm forces one (benchmarks); =im2col or
     * =implicit also forces how groups == 1 gets its columns. */
    int route = ctx->knobs.conv_route;
    if (g.groups == 1 && route != WGNN__CONV_DIRECT) return conv2d_gemm(ctx, &g, in[0], in[1], bias, out[0], p);
    dw_cfg c;
    if (route != WGNN__CONV_DIRECT && route != WGNN__CONV_GEMM && g.groups > 1 && g.groups == g.c &&
        dw_config(ctx, &g, &c))
        return conv2d_dw(ctx, &g, &c, in[0], in[1], bias, out[0], p);
    if (g.groups > 1 && grouped_gemm_ok(ctx, &g)) return conv2d_gathered(ctx, &g, in[0], in[1], bias, out[0], p);
    return conv2d_direct(ctx, &g, in[0], in[1], bias, out[0], p);
}

/* ---- im2col ----------------------------------------------------------------------- */

uint64_t wgnn__im2col_max_samples(const wgnn_context *ctx, const wgnn__conv2d_geom *g) {
    uint64_t units[2] = {(uint64_t)(g->c * g->h * g->w), (uint64_t)(g->c * g->kh * g->kw) * (uint64_t)(g->ho * g->wo)};
    return wgnn__units_per_window(ctx, units, 2, (uint64_t)g->n);
}

wgnn_status wgnn__im2col_plan(wgnn_context *ctx, wgnn__plan *p, const wgnn_tensor *input, const wgnn__conv2d_geom *g,
                              uint64_t n0, uint64_t count, wgnn__binding dst) {
    if (count == 0 || n0 + count > (uint64_t)g->n || dst.offset % 4)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "im2col: samples [%llu, %llu) are not within the input's %lld, or dst offset %llu is not a "
                         "multiple of 4",
                         (unsigned long long)n0, (unsigned long long)(n0 + count), (long long)g->n,
                         (unsigned long long)dst.offset);
    uint64_t in_unit = (uint64_t)(g->c * g->h * g->w), npix = (uint64_t)(g->ho * g->wo);
    uint64_t k = (uint64_t)(g->c * g->kh * g->kw), out_unit = k * npix;
    uint64_t units[2] = {in_unit, out_unit};
    if (wgnn__units_per_window(ctx, units, 2, count) < count)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "im2col: %llu samples (%llu bytes of input, %llu bytes of columns) do not fit one storage "
                         "binding (maxStorageBufferBindingSize %llu bytes); take fewer (wgnn__im2col_max_samples)",
                         (unsigned long long)count, (unsigned long long)(count * in_unit * 4u),
                         (unsigned long long)(count * out_unit * 4u),
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    char pre[512];
    snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\n", WGNN__PARAMS_WGSL(IM2COL_PARAMS), wg);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "im2col", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t items = count * out_unit;
    uint32_t gx, gy;
    s = wgnn__compute_2d_workgroup_count(ctx, (items + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                         "im2col", &gx, &gy);
    if (s != WGNN_OK) return s;
    im2col_params q;
    memset(&q, 0, sizeof q);
    q.in_dims[0] = (uint32_t)g->c, q.in_dims[1] = (uint32_t)g->h, q.in_dims[2] = (uint32_t)g->w;
    q.in_dims[3] = (uint32_t)g->wo;
    geom_params(g, q.win, q.win2);
    q.n_items = (uint32_t)items;
    q.k = (uint32_t)k;
    q.npix = (uint32_t)npix;
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    im2col_params *qd = (im2col_params *)d->params;
    wgnn__binding xb = {input->buf, 0, 0, 0};
    qd->x_off = wgnn__bind_window(ctx, d, &xb, n0 * in_unit, count * in_unit);
    qd->y_off = wgnn__bind_window(ctx, d, &dst, 0, items);
    return WGNN_OK;
}

/* ---- row ---------------------------------------------------------------------------- */

static const wgnn_op_arg_info k_conv2d_args[] = {
    {"stride", "int[]", "1,1", "step of the window: one value (both dims) or h,w; >= 1"},
    {"padding", "int[]", "0,0", "zeros added on both sides: one value or h,w; >= 0"},
    {"dilation", "int[]", "1,1", "spacing of the kernel taps: one value or h,w; >= 1"},
    {"groups", "int", "1", "input and output channels split into this many groups (C for depthwise)"},
};

const wgnn__op wgnn__op_conv2d = {
    {"conv2d", "2-D convolution (cross-correlation, as torch.nn.functional.conv2d), grouped and depthwise included",
     "input, weight, [bias]",
     "input [N, C, H, W] or [C, H, W], weight [O, C/groups, kh, kw], bias [O] -> [N, O, Ho, Wo], "
     "Ho = (H + 2*padding - dilation*(kh-1) - 1) / stride + 1; float32",
     2, 3, 4, k_conv2d_args},
    conv2d_check,
    conv2d_plan,
    wgnn__ref_conv2d,
    false,
};
