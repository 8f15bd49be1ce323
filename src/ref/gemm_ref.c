/* gemm_ref.c - CPU references of mm, bmm, matmul, linear, addmm: one
 * double-accumulating triple loop over explicit strides. */
#include "gemm_ref.h"

#include "elementwise_ref.h"
#include "ops/gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* c[i*n + j] = alpha * sum_k A(i,k) B(k,j) + beta * bias(i, j), where
 * A(i,k) = a[i*ars + k*acs], B(k,j) = b[k*brs + j*bcs] (b16: b holds f16
 * bits), bias(i,j) = bias[i*rs + j*cs] (bias NULL: none). */
static void gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t ars, int64_t acs, const void *b, bool b16,
                 int64_t brs, int64_t bcs, float *c, double alpha, double beta, const float *bias, int64_t rs,
                 int64_t cs) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t q = 0; q < k; q++) {
                int64_t bi = q * brs + j * bcs;
                double bv = b16 ? wgnn__ref_f16_value(((const uint16_t *)b)[bi]) : ((const float *)b)[bi];
                s += (double)a[i * ars + q * acs] * bv;
            }
            double v = alpha * s;
            if (bias) v += beta * bias[i * rs + j * cs];
            c[i * n + j] = (float)v;
        }
}

wgnn_status wgnn__ref_mm(wgnn__node *n, const void *const *in, void *const *out) {
    int64_t m = n->in[0].dims[0], k = n->in[0].dims[1], nn = n->in[1].dims[1];
    gemm(m, nn, k, in[0], k, 1, in[1], n->in[1].dtype == WGNN_F16, nn, 1, out[0], 1, 0, NULL, 0, 0);
    return WGNN_OK;
}

wgnn_status wgnn__ref_bmm(wgnn__node *n, const void *const *in, void *const *out) {
    int64_t bt = n->in[0].dims[0], m = n->in[0].dims[1], k = n->in[0].dims[2], nn = n->in[1].dims[2];
    for (int64_t b = 0; b < bt; b++)
        gemm(m, nn, k, (const float *)in[0] + b * m * k, k, 1, (const float *)in[1] + b * k * nn, false, nn, 1,
             (float *)out[0] + b * m * nn, 1, 0, NULL, 0, 0);
    return WGNN_OK;
}

bool wgnn__matmul_layout_of(const wgnn_desc *a, const wgnn_desc *b, wgnn__matmul_layout *l) {
    memset(l, 0, sizeof *l);
    if (a->rank < 1 || b->rank < 1) return false;
    l->m = a->rank == 1 ? 1 : a->dims[a->rank - 2];
    l->k_a = a->dims[a->rank - 1];
    l->lda = l->k_a;
    l->k_b = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    l->n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    l->ldb = b->rank == 1 ? 1 : l->n;
    if (l->k_a != l->k_b) return false;
    int na = a->rank > 2 ? a->rank - 2 : 0, nb = b->rank > 2 ? b->rank - 2 : 0;
    l->nb = na > nb ? na : nb;
    int64_t astr = l->m * l->k_a, bstr = l->k_b * l->n; /* strides of the innermost batch dim */
    for (int i = l->nb - 1; i >= 0; i--) {
        int ia = i - (l->nb - na), ib = i - (l->nb - nb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        l->bsize[i] = da > db ? da : db;
        l->bsa[i] = da == 1 ? 0 : astr;
        l->bsb[i] = db == 1 ? 0 : bstr;
        astr *= da;
        bstr *= db;
    }
    int64_t cstr = l->m * l->n;
    for (int i = l->nb - 1; i >= 0; i--) {
        l->bsc[i] = cstr;
        cstr *= l->bsize[i];
    }
    l->out.dtype = WGNN_F32;
    l->out.rank = 0;
    for (int i = 0; i < l->nb; i++) l->out.dims[l->out.rank++] = l->bsize[i];
    if (a->rank >= 2) l->out.dims[l->out.rank++] = l->m;
    if (b->rank >= 2) l->out.dims[l->out.rank++] = l->n;
    return true;
}

wgnn_status wgnn__ref_matmul(wgnn__node *n, const void *const *in, void *const *out) {
    wgnn__matmul_layout l;
    wgnn__matmul_layout_of(&n->in[0], &n->in[1], &l);
    int64_t total = 1;
    for (int i = 0; i < l.nb; i++) total *= l.bsize[i];
    for (int64_t o = 0; o < total; o++) {
        int64_t r = o, oa = 0, ob = 0, oc = 0;
        for (int i = l.nb - 1; i >= 0; i--) {
            int64_t idx = r % l.bsize[i];
            r /= l.bsize[i];
            oa += idx * l.bsa[i];
            ob += idx * l.bsb[i];
            oc += idx * l.bsc[i];
        }
        gemm(l.m, l.n, l.k_a, (const float *)in[0] + oa, l.lda, 1, (const float *)in[1] + ob, false, l.ldb, 1,
             (float *)out[0] + oc, 1, 0, NULL, 0, 0);
    }
    return WGNN_OK;
}

float *wgnn__ref_prologue(const float *x, uint64_t rows, uint64_t k, int pre, double eps, const float *w) {
    float *y = malloc((size_t)(rows * k) * sizeof *y);
    if (!y) return NULL;
    for (uint64_t r = 0; r < rows; r++) {
        if (pre == 1 || pre == 3) {
            const float *xr = x + r * k;
            double ss = 0;
            for (uint64_t i = 0; i < k; i++) ss += (double)xr[i] * xr[i];
            double inv = 1.0 / sqrt(ss / (double)k + eps);
            for (uint64_t i = 0; i < k; i++) y[r * k + i] = (float)(xr[i] * inv * (pre == 3 ? w[i] : 1.0));
        } else {
            const float *xr = x + r * 2 * k;
            for (uint64_t i = 0; i < k; i++) {
                double g = xr[i];
                y[r * k + i] = (float)(g / (1 + exp(-g)) * xr[k + i]);
            }
        }
    }
    return y;
}

/* linear's and addmm's residual=true: y += r, after the activation */
static void add_residual(float *y, const float *r, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) y[i] += r[i];
}

/* layer_norm=true's second output: y = LayerNorm(x) over rows of n, * w + b */
static void ref_row_ln(const float *x, float *y, int64_t rows, int64_t n, const float *w, const float *b, double eps) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < n; j++) mean += xr[j];
        mean /= (double)n;
        for (int64_t j = 0; j < n; j++) var += ((double)xr[j] - mean) * ((double)xr[j] - mean);
        double rstd = 1.0 / sqrt(var / (double)n + eps);
        for (int64_t j = 0; j < n; j++) y[r * n + j] = (float)(((double)xr[j] - mean) * rstd * w[j] + b[j]);
    }
}

wgnn_status wgnn__ref_linear(wgnn__node *n, const void *const *in, void *const *out) {
    int64_t k = n->in[1].dims[1], nn = n->in[1].dims[0];
    int pre = (int)n->arg[1].i[0];
    int bi, gw, ri, li;
    wgnn__linear_inputs(n, &bi, &gw, &ri, &li);
    bool has_bias = bi >= 0;
    int64_t m = (int64_t)(wgnn__desc_numel(&n->in[0]) / (uint64_t)(pre == 2 ? 2 * k : k));
    bool b16 = n->in[1].dtype == WGNN_F16;
    bool full = has_bias && n->in[2].rank > 1; /* a bias of the output's shape */
    float *xp = pre ? wgnn__ref_prologue(in[0], (uint64_t)m, (uint64_t)k, pre, n->arg[2].f, gw >= 0 ? in[gw] : NULL)
                    : NULL;
    if (pre && !xp) return wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
    /* B(k, j) = weight[j*K + k] */
    gemm(m, nn, k, pre ? xp : in[0], k, 1, in[1], b16, 1, k, out[0], 1, 1, has_bias ? in[2] : NULL, full ? nn : 0, 1);
    free(xp);
    wgnn__ref_act(out[0], (uint64_t)(m * nn), (int)n->arg[0].i[0]);
    if (ri >= 0) add_residual(out[0], in[ri], (uint64_t)(m * nn));
    if (li >= 0) ref_row_ln(out[0], out[1], m, nn, in[li], in[li + 1], n->arg[5].f);
    return WGNN_OK;
}

wgnn_status wgnn__ref_addmm(wgnn__node *n, const void *const *in, void *const *out) {
    int64_t m = n->in[1].dims[0], k = n->in[1].dims[1], nn = n->in[2].dims[1];
    const wgnn_desc *c = &n->in[0];
    int64_t cd[2] = {1, 1};
    for (int i = 0; i < c->rank; i++) cd[2 - c->rank + i] = c->dims[i];
    double beta = n->arg[0].f, alpha = n->arg[1].f;
    gemm(m, nn, k, in[1], k, 1, in[2], n->in[2].dtype == WGNN_F16, nn, 1, out[0], alpha, beta, beta != 0 ? in[0] : NULL,
         cd[0] == 1 ? 0 : cd[1], cd[1] == 1 ? 0 : 1);
    wgnn__ref_act(out[0], (uint64_t)(m * nn), (int)n->arg[2].i[0]);
    if (n->arg[3].i[0]) add_residual(out[0], in[3], (uint64_t)(m * nn));
    if (n->arg[4].i[0]) ref_row_ln(out[0], out[1], m, nn, in[n->n_in - 2], in[n->n_in - 1], n->arg[5].f);
    return WGNN_OK;
}

void wgnn__ref_act(float *y, uint64_t n, int act) {
    for (uint64_t i = 0; act && i < n; i++) {
        double v = y[i];
        if (act == 1) v = v > 0 ? v : (v != v ? v : 0);
        else if (act == 2) v = 0.5 * v * (1 + erf(v / sqrt(2.0)));
        else if (act == 3) v = 0.5 * v * (1 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
        else if (act == 4) v = v / (1 + exp(-v));
        else v = tanh(v);
        y[i] = (float)v;
    }
}
