/* gemm_rows.c - the gemm family's op-table rows: mm, bmm, matmul, linear
 * (with its prologue, activation and residual arguments) and addmm. Each
 * checks shapes and turns its operands into a wgnn__gemm for the shared
 * planner (src/ops/gemm.c; kernels shaders/gemm*.wgsl, gemv*.wgsl).
 * References: src/ref/gemm_ref.c; cases: tests/cases/gemm.inc. */
#include "gemm.h"

#include "ref/gemm_ref.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static wgnn__gemm_operand operand(const wgnn_tensor *t) { return (wgnn__gemm_operand){t->buf, -1, 0, 0}; }
static const wgnn__gemm_operand k_none = {NULL, -1, 0, 0};

static wgnn_status need_dtype(wgnn__node *n, int i, const char *name, bool f16_ok) {
    wgnn_dtype d = n->in[i].dtype;
    if (d == WGNN_F32 || (f16_ok && d == WGNN_F16)) return WGNN_OK;
    return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; %s takes float32%s", name, wgnn_dtype_name(d),
                          n->op->info.name, f16_ok ? " (or float16 storage)" : " only");
}

static wgnn_status rank_err(wgnn__node *n, const char *name, int i, const char *want) {
    char s[160];
    wgnn__dims_str(&n->in[i], s, sizeof s);
    return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; it must be %s", name, s, want);
}

static wgnn_status inner_err(wgnn__node *n, const char *what) {
    char a[160], b[160];
    wgnn__dims_str(&n->in[0], a, sizeof a);
    wgnn__dims_str(&n->in[1], b, sizeof b);
    return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s %s and %s: %s", n->op->info.name, a, b, what);
}

/* mm */
static wgnn_status mm_check(wgnn__node *n) {
    for (int i = 0; i < 2; i++) { /* other may hold float16 (a model's weights, [K, N]) */
        wgnn_status s = need_dtype(n, i, i ? "other" : "self", i == 1);
        if (s != WGNN_OK) return s;
    }
    if (n->in[0].rank != 2) return rank_err(n, "self", 0, "[M, K]");
    if (n->in[1].rank != 2) return rank_err(n, "other", 1, "[K, N]");
    if (n->in[0].dims[1] != n->in[1].dims[0]) return inner_err(n, "the inner dims (K) differ");
    n->n_out = 1;
    n->out[0] = (wgnn_desc){WGNN_F32, 2, {n->in[0].dims[0], n->in[1].dims[1]}};
    return WGNN_OK;
}

static wgnn_status dims_u32(wgnn_context *ctx, const char *op, const int64_t *d, int nd) {
    for (int i = 0; i < nd; i++)
        if (d[i] > 0xFFFFFFFFll)
            return wgnn__err(ctx, WGNN_ERR_LIMIT, "%s: a dim of %lld passes 2^32 - 1", op, (long long)d[i]);
    return WGNN_OK;
}

static wgnn_status mm_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                           wgnn_tensor *const *out, wgnn__plan *p) {
    int64_t m = in[0]->dims[0], k = in[0]->dims[1], nn = in[1]->dims[1];
    int64_t d[3] = {m, k, nn};
    wgnn_status s = dims_u32(ctx, n->op->info.name, d, 3);
    if (s != WGNN_OK) return s;
    wgnn__gemm g = {.m = (uint32_t)m, .n = (uint32_t)nn, .k = (uint32_t)k, .batch = 1,
                    .a = operand(in[0]), .b = operand(in[1]), .c = operand(out[0]), .b_f16 = in[1]->dtype == WGNN_F16,
                    .bias = k_none,
                    .lda = (uint64_t)k, .ldb = (uint64_t)nn, .ldc = (uint64_t)nn, .alpha = 1, .beta = 0};
    return wgnn__gemm_plan(ctx, p, &g);
}

/* bmm */
static wgnn_status bmm_check(wgnn__node *n) {
    for (int i = 0; i < 2; i++) {
        wgnn_status s = need_dtype(n, i, i ? "mat2" : "self", false);
        if (s != WGNN_OK) return s;
    }
    if (n->in[0].rank != 3) return rank_err(n, "self", 0, "[B, M, K]");
    if (n->in[1].rank != 3) return rank_err(n, "mat2", 1, "[B, K, N]");
    if (n->in[0].dims[0] != n->in[1].dims[0]) return inner_err(n, "the batch dims (B) differ");
    if (n->in[0].dims[2] != n->in[1].dims[1]) return inner_err(n, "the inner dims (K) differ");
    n->n_out = 1;
    n->out[0] = (wgnn_desc){WGNN_F32, 3, {n->in[0].dims[0], n->in[0].dims[1], n->in[1].dims[2]}};
    return WGNN_OK;
}

static wgnn_status bmm_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    int64_t bt = in[0]->dims[0], m = in[0]->dims[1], k = in[0]->dims[2], nn = in[1]->dims[2];
    int64_t d[4] = {bt, m, k, nn};
    wgnn_status s = dims_u32(ctx, n->op->info.name, d, 4);
    if (s != WGNN_OK) return s;
    wgnn__gemm g = {.m = (uint32_t)m, .n = (uint32_t)nn, .k = (uint32_t)k, .batch = (uint32_t)bt,
                    .a = operand(in[0]), .b = operand(in[1]), .c = operand(out[0]), .bias = k_none,
                    .lda = (uint64_t)k, .ldb = (uint64_t)nn, .ldc = (uint64_t)nn, .alpha = 1, .beta = 0};
    g.a.bs = (uint64_t)(m * k);
    g.b.bs = (uint64_t)(k * nn);
    g.c.bs = (uint64_t)(m * nn);
    return wgnn__gemm_plan(ctx, p, &g);
}

/* matmul: torch.matmul's rules (src/ref/gemm_ref.c has the same layout). */
static wgnn_status matmul_check(wgnn__node *n) {
    for (int i = 0; i < 2; i++) {
        wgnn_status s = need_dtype(n, i, i ? "other" : "self", false);
        if (s != WGNN_OK) return s;
    }
    wgnn__matmul_layout l;
    if (!wgnn__matmul_layout_of(&n->in[0], &n->in[1], &l)) {
        if (n->in[0].rank == 0 || n->in[1].rank == 0) return inner_err(n, "both arguments need at least 1 dim");
        if (l.k_a != l.k_b) return inner_err(n, "the inner dims (K) differ");
        return inner_err(n, "the batch dims do not broadcast");
    }
    n->n_out = 1;
    n->out[0] = l.out;
    return WGNN_OK;
}

static wgnn_status matmul_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                               wgnn_tensor *const *out, wgnn__plan *p) {
    wgnn__matmul_layout l;
    wgnn__matmul_layout_of(&n->in[0], &n->in[1], &l);
    int64_t d[3] = {l.m, l.k_a, l.n};
    wgnn_status s = dims_u32(ctx, n->op->info.name, d, 3);
    if (s != WGNN_OK) return s;
    /* collapse batch dims that are contiguous in every operand; the last
     * collapsed dim runs as the GEMM's batch, the others as a host loop */
    int nb = 0;
    int64_t size[WGNN_MAX_RANK], sa[WGNN_MAX_RANK], sb[WGNN_MAX_RANK], sc[WGNN_MAX_RANK];
    for (int i = 0; i < l.nb; i++) {
        if (l.bsize[i] == 1) continue;
        if (nb > 0 && sa[nb - 1] == l.bsa[i] * l.bsize[i] && sb[nb - 1] == l.bsb[i] * l.bsize[i] &&
            sc[nb - 1] == l.bsc[i] * l.bsize[i]) {
            size[nb - 1] *= l.bsize[i];
            sa[nb - 1] = l.bsa[i];
            sb[nb - 1] = l.bsb[i];
            sc[nb - 1] = l.bsc[i];
            continue;
        }
        size[nb] = l.bsize[i];
        sa[nb] = l.bsa[i];
        sb[nb] = l.bsb[i];
        sc[nb] = l.bsc[i];
        nb++;
    }
    wgnn__gemm g = {.m = (uint32_t)l.m, .n = (uint32_t)l.n, .k = (uint32_t)l.k_a, .batch = 1,
                    .a = operand(in[0]), .b = operand(in[1]), .c = operand(out[0]), .bias = k_none,
                    .lda = (uint64_t)l.lda, .ldb = (uint64_t)l.ldb, .ldc = (uint64_t)l.n, .alpha = 1, .beta = 0};
    /* [..., M, K] @ [K, N] with A contiguous: one GEMM of prod(...) * M rows */
    if (nb == 1 && sb[0] == 0 && sa[0] == l.m * l.k_a && l.m * size[0] <= 0xFFFFFFFFll) {
        g.m = (uint32_t)(l.m * size[0]);
        return wgnn__gemm_plan(ctx, p, &g);
    }
    if (nb > 0) {
        if (size[nb - 1] > 0xFFFFFFFFll) return dims_u32(ctx, n->op->info.name, &size[nb - 1], 1);
        g.batch = (uint32_t)size[nb - 1];
        g.a.bs = (uint64_t)sa[nb - 1];
        g.b.bs = (uint64_t)sb[nb - 1];
        g.c.bs = (uint64_t)sc[nb - 1];
    }
    int64_t outer = 1;
    for (int i = 0; i < nb - 1; i++) outer *= size[i];
    for (int64_t o = 0; o < outer; o++) {
        wgnn__gemm h = g;
        int64_t r = o;
        for (int i = nb - 2; i >= 0; i--) {
            int64_t idx = r % size[i];
            r /= size[i];
            h.a.off += (uint64_t)(idx * sa[i]);
            h.b.off += (uint64_t)(idx * sb[i]);
            h.c.off += (uint64_t)(idx * sc[i]);
        }
        s = wgnn__gemm_plan(ctx, p, &h);
        if (s != WGNN_OK) return s;
    }
    return WGNN_OK;
}

/* linear */
bool wgnn__linear_bias_ok(const wgnn_desc *bias, const wgnn_desc *out, int64_t n) {
    if (bias->rank == 1 && bias->dims[0] == n) return true;
    if (bias->rank != out->rank) return false;
    for (int i = 0; i < bias->rank; i++)
        if (bias->dims[i] != out->dims[i]) return false;
    return true;
}

enum { LIN_ACT, LIN_PRE, LIN_EPS, LIN_RES, LIN_LN, LIN_LN_EPS };

void wgnn__linear_inputs(const wgnn__node *n, int *bias, int *norm, int *res, int *ln) {
    int l = n->arg[LIN_LN].i[0] ? 2 : 0;
    int r = n->arg[LIN_RES].i[0] ? 1 : 0, w = n->arg[LIN_PRE].i[0] == WGNN__PRE_RMS_W ? 1 : 0;
    *ln = l ? n->n_in - 2 : -1;
    *res = r ? n->n_in - 1 - l : -1;
    *norm = w ? n->n_in - 1 - r - l : -1;
    *bias = n->n_in > 2 + w + r + l ? 2 : -1;
}

/* layer_norm=true's two inputs from `at` (after min_at inputs): float32
 * [n] each, and eps finite and >= 0; the second output, the first's shape. */
static wgnn_status ln_check(wgnn__node *n, int at, int min_at, int64_t nn, double eps) {
    for (int i = 0; i < 2; i++) {
        const wgnn_desc *d = at >= min_at ? &n->in[at + i] : NULL;
        if (!d || d->dtype != WGNN_F32 || d->rank != 1 || d->dims[0] != nn) {
            char ds[160] = "missing";
            if (d) wgnn__dims_str(d, ds, sizeof ds);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "layer_norm=true takes the norm's weight and bias, float32 [%lld] each, as the last "
                                  "two inputs; input %d is %s %s",
                                  (long long)nn, at + i, d ? wgnn_dtype_name(d->dtype) : "", ds);
        }
    }
    if (!(eps >= 0) || !isfinite(eps))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "ln_eps %g must be finite and >= 0", eps);
    n->n_out = 2;
    n->out[1] = n->out[0];
    return WGNN_OK;
}

/* A residual input (at) of exactly the output's shape, float32. */
static wgnn_status residual_check(wgnn__node *n, int at, int min_at) {
    const wgnn_desc *r = &n->in[at], *o = &n->out[0];
    bool ok = at >= min_at && r->dtype == WGNN_F32 && r->rank == o->rank;
    for (int i = 0; ok && i < r->rank; i++) ok = r->dims[i] == o->dims[i];
    if (ok) return WGNN_OK;
    char rs[160], os[160];
    wgnn__dims_str(r, rs, sizeof rs);
    wgnn__dims_str(o, os, sizeof os);
    return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                          "residual=true takes the residual float32 of the output's shape %s as the last input; "
                          "input %d is %s %s",
                          os, at, wgnn_dtype_name(r->dtype), rs);
}

int wgnn__linear_norm_input(const wgnn__node *n, int n_fixed, int pre_arg, bool *has_bias) {
    bool w = n->arg[pre_arg].i[0] == WGNN__PRE_RMS_W;
    *has_bias = n->n_in > n_fixed + (w ? 1 : 0);
    return w ? n->n_in - 1 : -1;
}

/* in_features as the input stores it: twice the weight's with swiglu */
static int64_t linear_in_row(const wgnn__node *n, int64_t k) {
    return n->arg[LIN_PRE].i[0] == WGNN__PRE_SWIGLU ? 2 * k : k;
}

wgnn_status wgnn__linear_norm_weight_check(wgnn__node *n, int at, int n_fixed, int64_t k, const char *kname) {
    if (at < 0) return WGNN_OK;
    const wgnn_desc *g = &n->in[at];
    if (at < n_fixed || g->dtype != WGNN_F32 || g->rank != 1 || g->dims[0] != k) {
        char gs[160];
        wgnn__dims_str(g, gs, sizeof gs);
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "prologue=rms_norm_weight takes the norm's weight float32 [%s] = [%lld] as the last "
                              "input; input %d is %s %s",
                              kname, (long long)k, at, wgnn_dtype_name(g->dtype), gs);
    }
    return WGNN_OK;
}

static wgnn_status linear_check(wgnn__node *n) {
    int bi, gw, ri, li;
    wgnn__linear_inputs(n, &bi, &gw, &ri, &li);
    bool has_bias = bi >= 0;
    wgnn_status s = need_dtype(n, 0, "input", false);
    if (s == WGNN_OK) s = need_dtype(n, 1, "weight", true);
    if (s == WGNN_OK && has_bias) s = need_dtype(n, 2, "bias", false);
    if (s != WGNN_OK) return s;
    const wgnn_desc *x = &n->in[0], *w = &n->in[1];
    if (x->rank < 1) return rank_err(n, "input", 0, "[..., in_features] (rank >= 1)");
    if (w->rank != 2) return rank_err(n, "weight", 1, "[out_features, in_features]");
    if (n->arg[LIN_PRE].i[0] == WGNN__PRE_SWIGLU) {
        if (x->dims[x->rank - 1] != 2 * w->dims[1])
            return inner_err(n, "with prologue=swiglu the input's last dim must be 2 * weight's in_features (dim 1)");
    } else if (x->dims[x->rank - 1] != w->dims[1]) {
        return inner_err(n, "input's last dim is not weight's in_features (dim 1)");
    }
    if (!(n->arg[LIN_EPS].f >= 0) || !isfinite(n->arg[LIN_EPS].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "eps %g must be finite and >= 0", n->arg[LIN_EPS].f);
    if ((s = wgnn__linear_norm_weight_check(n, gw, 2, w->dims[1], "in_features")) != WGNN_OK) return s;
    n->n_out = 1;
    n->out[0] = *x;
    n->out[0].dims[x->rank - 1] = w->dims[0];
    if (has_bias) {
        if (!wgnn__linear_bias_ok(&n->in[2], &n->out[0], w->dims[0])) {
            char want[400], os[160];
            wgnn__dims_str(&n->out[0], os, sizeof os);
            snprintf(want, sizeof want, "[out_features] = [%lld], or the output's shape %s", (long long)w->dims[0], os);
            return rank_err(n, "bias", 2, want);
        }
    }
    if (ri >= 0 && (s = residual_check(n, ri, 2)) != WGNN_OK) return s;
    if (n->arg[LIN_LN].i[0]) return ln_check(n, li, 2, w->dims[0], n->arg[LIN_LN_EPS].f);
    return WGNN_OK;
}

static wgnn_status linear_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                               wgnn_tensor *const *out, wgnn__plan *p) {
    int bi, gw, ri, li;
    wgnn__linear_inputs(n, &bi, &gw, &ri, &li);
    bool has_bias = bi >= 0;
    int64_t k = in[1]->dims[1], nn = in[1]->dims[0], row = linear_in_row(n, k);
    int64_t m = (int64_t)(in[0]->numel / (uint64_t)row);
    int64_t d[3] = {m, row, nn};
    wgnn_status s = dims_u32(ctx, n->op->info.name, d, 3);
    if (s != WGNN_OK) return s;
    wgnn__gemm g = {.m = (uint32_t)m, .n = (uint32_t)nn, .k = (uint32_t)k, .batch = 1,
                    .a = operand(in[0]), .b = operand(in[1]), .c = operand(out[0]),
                    .bias = has_bias ? operand(in[2]) : k_none,
                    .lda = (uint64_t)row, .ldb = (uint64_t)k, .ldc = (uint64_t)nn,
                    .bias_rs = has_bias && n->in[2].rank > 1 ? (uint64_t)nn : 0, .bias_cs = 1,
                    .trans_b = true, .b_f16 = in[1]->dtype == WGNN_F16, .alpha = 1, .beta = 1,
                    .act = (wgnn__act)n->arg[LIN_ACT].i[0], .pre = (wgnn__pre)n->arg[LIN_PRE].i[0],
                    .eps = (float)n->arg[LIN_EPS].f, .prew = gw >= 0 ? in[gw]->buf : NULL,
                    .res = ri >= 0 ? operand(in[ri]) : k_none, .ldr = (uint64_t)nn,
                    .ln_y = li >= 0 ? operand(out[1]) : k_none, .ln_w = li >= 0 ? in[li]->buf : NULL,
                    .ln_b = li >= 0 ? in[li + 1]->buf : NULL, .ln_eps = (float)n->arg[LIN_LN_EPS].f};
    return wgnn__gemm_plan(ctx, p, &g);
}

/* addmm */
enum { ADDMM_BETA, ADDMM_ALPHA, ADDMM_ACT, ADDMM_RES, ADDMM_LN, ADDMM_LN_EPS };

static wgnn_status addmm_check(wgnn__node *n) {
    static const char *const names[3] = {"self", "mat1", "mat2"};
    int res = n->arg[ADDMM_RES].i[0] ? 1 : 0, ln = n->arg[ADDMM_LN].i[0] ? 2 : 0;
    if (n->n_in != 3 + res + ln)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "addmm takes a fourth input (the residual) exactly when residual=true, and two more (the "
                              "norm's weight and bias) exactly when layer_norm=true; %d inputs given",
                              n->n_in);
    for (int i = 0; i < 3; i++) { /* mat2 may hold float16 (a model's weights, [K, N]) */
        wgnn_status s = need_dtype(n, i, names[i], i == 2);
        if (s != WGNN_OK) return s;
    }
    const wgnn_desc *a = &n->in[1], *b = &n->in[2], *c = &n->in[0];
    if (a->rank != 2) return rank_err(n, "mat1", 1, "[M, K]");
    if (b->rank != 2) return rank_err(n, "mat2", 2, "[K, N]");
    if (a->dims[1] != b->dims[0]) {
        char sa[160], sb[160];
        wgnn__dims_str(a, sa, sizeof sa);
        wgnn__dims_str(b, sb, sizeof sb);
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "mat1 %s and mat2 %s: the inner dims (K) differ", sa, sb);
    }
    int64_t mn[2] = {a->dims[0], b->dims[1]};
    bool ok = c->rank <= 2;
    for (int i = 0; ok && i < c->rank; i++) {
        int64_t d = c->dims[c->rank - 1 - i], want = mn[1 - i];
        ok = d == 1 || d == want;
    }
    if (!ok) {
        char want[64];
        snprintf(want, sizeof want, "broadcastable to [M, N] = [%lld, %lld]", (long long)mn[0], (long long)mn[1]);
        return rank_err(n, "self", 0, want);
    }
    double beta = n->arg[0].f, alpha = n->arg[1].f;
    if (!isfinite(beta) || !isfinite(alpha))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "beta=%g and alpha=%g must be finite", beta, alpha);
    n->n_out = 1;
    n->out[0] = (wgnn_desc){WGNN_F32, 2, {mn[0], mn[1]}};
    wgnn_status s = res ? residual_check(n, 3, 3) : WGNN_OK;
    if (s == WGNN_OK && ln) s = ln_check(n, 3 + res, 3, mn[1], n->arg[ADDMM_LN_EPS].f);
    return s;
}

static wgnn_status addmm_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                              wgnn_tensor *const *out, wgnn__plan *p) {
    int64_t m = in[1]->dims[0], k = in[1]->dims[1], nn = in[2]->dims[1];
    int64_t d[3] = {m, k, nn};
    wgnn_status s = dims_u32(ctx, n->op->info.name, d, 3);
    if (s != WGNN_OK) return s;
    const wgnn_tensor *c = in[0];
    /* self's strides over [M, N]: 0 where it broadcasts */
    int64_t cd[2] = {1, 1};
    for (int i = 0; i < c->rank; i++) cd[2 - c->rank + i] = c->dims[i];
    double beta = n->arg[0].f;
    wgnn__gemm g = {.m = (uint32_t)m, .n = (uint32_t)nn, .k = (uint32_t)k, .batch = 1,
                    .a = operand(in[1]), .b = operand(in[2]), .c = operand(out[0]), .b_f16 = in[2]->dtype == WGNN_F16,
                    .bias = beta != 0 ? operand(c) : k_none, /* beta = 0: self is ignored (NaN too), as PyTorch */
                    .lda = (uint64_t)k, .ldb = (uint64_t)nn, .ldc = (uint64_t)nn,
                    .bias_rs = cd[0] == 1 ? 0 : (uint64_t)cd[1], .bias_cs = cd[1] == 1 ? 0 : 1,
                    .alpha = (float)n->arg[1].f, .beta = (float)beta, .act = (wgnn__act)n->arg[2].i[0],
                    .res = n->arg[ADDMM_RES].i[0] ? operand(in[3]) : k_none, .ldr = (uint64_t)nn};
    if (n->arg[ADDMM_LN].i[0]) {
        int li = n->n_in - 2;
        g.ln_y = operand(out[1]);
        g.ln_w = in[li]->buf;
        g.ln_b = in[li + 1]->buf;
        g.ln_eps = (float)n->arg[ADDMM_LN_EPS].f;
    }
    return wgnn__gemm_plan(ctx, p, &g);
}

const wgnn__op wgnn__op_mm = {
    {"mm", "matrix product self @ other", "self, other",
     "self [M, K], other [K, N] -> [M, N]; float32 (other float32 or float16 storage)", 2, 2, 0,
     NULL},
    mm_check,
    mm_plan,
    wgnn__ref_mm,
    false,
};

const wgnn__op wgnn__op_bmm = {
    {"bmm", "batched matrix product", "self, mat2", "self [B, M, K], mat2 [B, K, N] -> [B, M, N]; float32", 2, 2, 0,
     NULL},
    bmm_check,
    bmm_plan,
    wgnn__ref_bmm,
    false,
};

const wgnn__op wgnn__op_matmul = {
    {"matmul", "torch.matmul: 1-D operands (dot, vector-matrix), batch dims broadcast as NumPy", "self, other",
     "self [..., M, K] or [K], other [..., K, N] or [K] -> broadcast batch dims + [M, N] (1-D operands' dims "
     "dropped); float32",
     2, 2, 0, NULL},
    matmul_check,
    matmul_plan,
    wgnn__ref_matmul,
    false,
};

static const wgnn_op_arg_info k_linear_args[] = {
    {"activation", WGNN__ACT_NAMES, "none",
     "applied to the result, bias included, in the same pass (wgnn's fused epilogue; not an argument of "
     "aten's linear)"},
    {"prologue", "none|rms_norm|swiglu|rms_norm_weight", "none",
     "done to the input first (not an argument of aten's linear): rms_norm divides each row by "
     "sqrt(mean(row^2) + eps) (RMSNorm without its weight: fold that into weight's columns); "
     "rms_norm_weight also multiplies by the norm's weight [in_features], given as the last input; swiglu "
     "takes an input [..., 2 * in_features] and uses silu(input[..., :in]) * input[..., in:]. Fused into the "
     "GEMV for up to 4 rows, else a pass of its own"},
    {"eps", "float", "1e-6", "rms_norm's epsilon"},
    {"residual", "bool", "false",
     "true: the last input is a residual of the output's shape, added after the activation in the same pass "
     "(wgnn's fused epilogue, e.g. a transformer block's x + o_proj(h); not an argument of aten's linear)"},
    {"layer_norm", "bool", "false",
     "true: a second output, layer_norm of the first over its last dim (biased variance, as torch's), with the "
     "norm's weight and bias [out_features] given as the last two inputs; written by the same pass where the product ends "
     "in a reduce (split-K, a bias pass; else a pass of its own): a pre-LN transformer's x + proj(h) and the "
     "next LayerNorm(x) at once (wgnn's fused epilogue; not an argument of aten's linear)"},
    {"ln_eps", "float", "1e-5", "the second output's LayerNorm epsilon"},
};

const wgnn__op wgnn__op_linear = {
    {"linear", "nn.Linear: input @ weight^T + bias [, then an activation] [+ a residual] [, and its LayerNorm]",
     "input, weight, [bias], [norm_weight], [residual], [ln_weight, ln_bias]",
     "input [..., in_features] ([..., 2 * in_features] with prologue=swiglu), weight [out_features, "
     "in_features] (float32, or float16 storage read as float32), bias [out_features], or the output's whole "
     "shape (then added before the activation), norm_weight [in_features] (prologue=rms_norm_weight only), "
     "residual of the output's shape (residual=true only), ln_weight and ln_bias [out_features] (layer_norm=true "
     "only) -> [..., out_features] (and with layer_norm=true its LayerNorm, the same shape); float32",
     2, 7, 6, k_linear_args},
    linear_check,
    linear_plan,
    wgnn__ref_linear,
    false,
};

static const wgnn_op_arg_info k_addmm_args[] = {
    {"beta", "float", "1", "multiplies self; 0 ignores self (NaN and inf in it too)"},
    {"alpha", "float", "1", "multiplies mat1 @ mat2"},
    {"activation", WGNN__ACT_NAMES, "none",
     "applied to the result in the same pass, as linear's (wgnn's; not an argument of aten's addmm)"},
    {"residual", "bool", "false",
     "true: a fourth input [M, N] added after the activation in the same pass (wgnn's; not an argument of "
     "aten's addmm)"},
    {"layer_norm", "bool", "false",
     "true: a second output, layer_norm of the first over its last dim (biased variance, as torch's), with the "
     "norm's weight and bias [N] given as the last two inputs; written by the same pass where the product ends "
     "in a reduce (split-K, a bias pass; else a pass of its own): a pre-LN transformer's x + proj(h) and the "
     "next LayerNorm(x) at once (wgnn's fused epilogue; not an argument of aten's addmm)"},
    {"ln_eps", "float", "1e-5", "the second output's LayerNorm epsilon"},
};

const wgnn__op wgnn__op_addmm = {
    {"addmm", "beta * self + alpha * (mat1 @ mat2) [, then an activation] [+ a residual] [, and its LayerNorm]",
     "self, mat1, mat2, [residual], [ln_weight, ln_bias]",
     "self broadcastable to [M, N], mat1 [M, K], mat2 [K, N], residual [M, N] (residual=true only), ln_weight and "
     "ln_bias [N] (layer_norm=true only) -> [M, N] (and with layer_norm=true its LayerNorm [M, N]); float32 (mat2 "
     "float32 or float16 storage)",
     3, 6, 6, k_addmm_args},
    addmm_check,
    addmm_plan,
    wgnn__ref_addmm,
    false,
};
