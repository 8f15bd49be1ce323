/* norm_ref.c - CPU references of the norm family in double precision. */
#include "ref/norm_ref.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

void wgnn__softmax_layout(const wgnn__node *n, uint64_t *outer, uint64_t *len, uint64_t *inner) {
    const wgnn_desc *x = &n->in[0];
    *outer = *len = *inner = 1;
    if (x->rank == 0) return;
    int d = 0;
    wgnn__norm_dim(n->arg[WGNN__SOFTMAX_DIM].i[0], x->rank, &d);
    for (int i = 0; i < d; i++) *outer *= (uint64_t)x->dims[i];
    *len = (uint64_t)x->dims[d];
    for (int i = d + 1; i < x->rank; i++) *inner *= (uint64_t)x->dims[i];
}

/* PyTorch's order of operations: m = max, e = exp(x - m), y = e / sum(e).
 * A row holding +inf or NaN, or -inf everywhere, comes out NaN, as there. */
wgnn_status wgnn__ref_softmax(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0];
    float *y = out[0];
    uint64_t outer, len, inner;
    wgnn__softmax_layout(n, &outer, &len, &inner);
    for (uint64_t o = 0; o < outer; o++) {
        for (uint64_t i = 0; i < inner; i++) {
            const float *xr = x + o * len * inner + i;
            float *yr = y + o * len * inner + i;
            double m = -INFINITY;
            for (uint64_t j = 0; j < len; j++) m = fmax(m, (double)xr[j * inner]);
            double s = 0;
            for (uint64_t j = 0; j < len; j++) s += exp((double)xr[j * inner] - m);
            for (uint64_t j = 0; j < len; j++) yr[j * inner] = (float)(exp((double)xr[j * inner] - m) / s);
        }
    }
    return WGNN_OK;
}

/* Biased variance, eps inside the square root; weight and bias (inputs 1
 * and 2) of the normalized shape when given. */
wgnn_status wgnn__ref_layer_norm(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0], *w = n->n_in > 1 ? in[1] : NULL, *b = n->n_in > 2 ? in[2] : NULL;
    float *y = out[0];
    uint64_t len = 1;
    const wgnn__arg *shape = &n->arg[WGNN__LN_SHAPE];
    for (int i = 0; i < shape->n; i++) len *= (uint64_t)shape->i[i];
    uint64_t rows = wgnn__desc_numel(&n->in[0]) / len;
    double eps = n->arg[WGNN__LN_EPS].f;
    for (uint64_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        double mean = 0, var = 0;
        for (uint64_t j = 0; j < len; j++) mean += xr[j];
        mean /= (double)len;
        for (uint64_t j = 0; j < len; j++) var += ((double)xr[j] - mean) * ((double)xr[j] - mean);
        var /= (double)len;
        double rstd = 1.0 / sqrt(var + eps);
        for (uint64_t j = 0; j < len; j++) {
            double v = ((double)xr[j] - mean) * rstd;
            if (w) v *= w[j];
            if (b) v += b[j];
            yr[j] = (float)v;
        }
    }
    return WGNN_OK;
}

/* y = x / sqrt(mean(x^2) + eps) * weight (input 1, when given); eps not
 * given: float32's machine epsilon, as PyTorch. */
wgnn_status wgnn__ref_rms_norm(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0], *w = n->n_in > 1 ? in[1] : NULL;
    float *y = out[0];
    uint64_t len = 1;
    const wgnn__arg *shape = &n->arg[WGNN__LN_SHAPE];
    for (int i = 0; i < shape->n; i++) len *= (uint64_t)shape->i[i];
    uint64_t rows = wgnn__desc_numel(&n->in[0]) / len;
    double eps = n->arg[WGNN__LN_EPS].set ? n->arg[WGNN__LN_EPS].f : (double)FLT_EPSILON;
    for (uint64_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        double ss = 0;
        for (uint64_t j = 0; j < len; j++) ss += (double)xr[j] * xr[j];
        /* the kernel (and PyTorch's float32 rms_norm) sums the squares in
         * float32: past FLT_MAX the sum is inf and the row 0 */
        if (ss > FLT_MAX) ss = INFINITY;
        double rstd = 1.0 / sqrt(ss / (double)len + eps);
        for (uint64_t j = 0; j < len; j++) yr[j] = (float)(w ? (double)xr[j] * rstd * w[j] : (double)xr[j] * rstd);
    }
    return WGNN_OK;
}

/* Inference: running statistics, channel dim 1. */
wgnn_status wgnn__ref_batch_norm(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0], *w = in[1], *b = in[2], *mean = in[3], *var = in[4];
    float *y = out[0];
    const wgnn_desc *d = &n->in[0];
    uint64_t c = (uint64_t)d->dims[1], s = 1;
    for (int i = 2; i < d->rank; i++) s *= (uint64_t)d->dims[i];
    uint64_t batch = (uint64_t)d->dims[0];
    double eps = n->arg[WGNN__BN_EPS].f;
    for (uint64_t nb = 0; nb < batch; nb++)
        for (uint64_t ch = 0; ch < c; ch++) {
            double rstd = 1.0 / sqrt((double)var[ch] + eps);
            uint64_t o = (nb * c + ch) * s;
            for (uint64_t i = 0; i < s; i++)
                y[o + i] = (float)(((double)x[o + i] - mean[ch]) * rstd * w[ch] + b[ch]);
        }
    return WGNN_OK;
}

/* out = x * cos + rotate_half(x) * sin, cos/sin broadcast to x (NumPy
 * rules, aligned from the right). */
wgnn_status wgnn__ref_rope_hf(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0], *cs = in[1], *sn = in[2];
    float *y = out[0];
    const wgnn_desc *xd = &n->in[0], *cd = &n->in[1];
    int rx = xd->rank, rc = cd->rank;
    uint64_t d = (uint64_t)xd->dims[rx - 1], h = d / 2;
    uint64_t rows = wgnn__desc_numel(xd) / d;
    for (uint64_t r = 0; r < rows; r++) {
        /* the cos row: x's row index digit by digit, broadcast dims dropped */
        uint64_t rem = r, crow = 0, cstride = 1;
        for (int k = rx - 2; k >= 0; k--) {
            uint64_t e = (uint64_t)xd->dims[k], idx = rem % e;
            rem /= e;
            int kc = k - (rx - rc);
            if (kc < 0) continue;
            uint64_t f = (uint64_t)cd->dims[kc];
            if (f != 1) crow += idx * cstride;
            cstride *= f;
        }
        const float *xr = x + r * d, *cr = cs + crow * d, *sr = sn + crow * d;
        float *yr = y + r * d;
        for (uint64_t j = 0; j < d; j++) {
            double rot = j < h ? -(double)xr[j + h] : (double)xr[j - h];
            yr[j] = (float)((double)xr[j] * cr[j] + rot * sr[j]);
        }
    }
    return WGNN_OK;
}
