/* reduce_ref.c - CPU references of the reduce family. */
#include "ref/reduce_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void wgnn__argmax_layout(const wgnn__node *n, uint64_t *outer, uint64_t *len, uint64_t *inner) {
    const wgnn_desc *x = &n->in[0];
    *outer = *len = *inner = 1;
    if (x->rank == 0) return;
    int d = 0;
    wgnn__norm_dim(n->arg[WGNN__ARGMAX_DIM].i[0], x->rank, &d);
    for (int i = 0; i < d; i++) *outer *= (uint64_t)x->dims[i];
    *len = (uint64_t)x->dims[d];
    for (int i = d + 1; i < x->rank; i++) *inner *= (uint64_t)x->dims[i];
}

/* torch.argmax: the first index of the maximum; NaN above every number (the
 * first NaN); -0.0 == +0.0 (a plain float compare). */
wgnn_status wgnn__ref_argmax(wgnn__node *n, const void *const *in, void *const *out) {
    bool is_int = n->in[0].dtype == WGNN_I32;
    const float *xf = in[0];
    const int32_t *xi = in[0];
    int32_t *y = out[0];
    uint64_t outer, len, inner;
    wgnn__argmax_layout(n, &outer, &len, &inner);
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            uint64_t at = o * len * inner + i, best = 0;
            for (uint64_t j = 1; j < len; j++) {
                uint64_t a = at + j * inner, b = at + best * inner;
                bool better;
                if (is_int) better = xi[a] > xi[b];
                else better = !isnan(xf[b]) && (isnan(xf[a]) || xf[a] > xf[b]);
                if (better) best = j;
            }
            y[o * inner + i] = (int32_t)best;
        }
    return WGNN_OK;
}

/* ---- sample ---------------------------------------------------------------- */

typedef struct tok {
    float x;
    double e;
} tok;

static int by_logit_desc(const void *a, const void *b) {
    float x = ((const tok *)a)->x, y = ((const tok *)b)->x;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* One row, the rule of the row's help and docs/OPS.md, in double:
 * e = exp((x - max) / T); t_k = the top_k-th largest logit (0 or >= V: no
 * threshold); t_p = the largest logit t (among x >= t_k) whose tokens
 * x >= t hold >= top_p of the mass of x >= t_k (rounding short of it: the
 * smallest kept logit of nonzero mass); kept: x >= max(t_k, t_p); the first
 * kept index whose running kept mass exceeds clamp(u, 0, 1) * total, else
 * the last kept index of nonzero mass. -0.0 == +0.0 throughout (float
 * compares). */
static int32_t sample_row(const float *x, uint64_t v, double u, double temp, int64_t top_k, double top_p,
                          tok *scratch) {
    float m = -INFINITY;
    for (uint64_t j = 0; j < v; j++) m = fmaxf(m, x[j]);
    for (uint64_t j = 0; j < v; j++) {
        scratch[j].x = x[j];
        scratch[j].e = exp(((double)x[j] - (double)m) / temp);
    }
    qsort(scratch, (size_t)v, sizeof *scratch, by_logit_desc);
    bool have_t = false;
    float t = 0;
    uint64_t kept = v; /* the first kept entries of scratch (descending) */
    if (top_k > 0 && (uint64_t)top_k < v) {
        t = scratch[top_k - 1].x;
        have_t = true;
        while (kept > 0 && !(scratch[kept - 1].x >= t)) kept--;
    }
    if (top_p < 1) {
        double total = 0;
        for (uint64_t j = 0; j < kept; j++) total += scratch[j].e;
        double need = top_p * total, cum = 0;
        uint64_t last_pos = 0;
        bool hit = false;
        for (uint64_t j = 0; j < kept && !hit; j++) {
            cum += scratch[j].e;
            if (scratch[j].e > 0) last_pos = j;
            if (scratch[j].e > 0 && cum >= need) {
                t = scratch[j].x;
                hit = true;
            }
        }
        if (!hit) t = scratch[last_pos].x;
        have_t = true;
    }
    double total = 0;
    for (uint64_t j = 0; j < v; j++)
        if (!have_t || x[j] >= t) total += exp(((double)x[j] - (double)m) / temp);
    double target = (u > 0 ? (u < 1 ? u : 1) : 0) * total, run = 0;
    int32_t last = -1; /* stays -1 where no token has mass: the row's error */
    for (uint64_t j = 0; j < v; j++) {
        if (have_t && !(x[j] >= t)) continue;
        double e = exp(((double)x[j] - (double)m) / temp);
        if (e > 0) last = (int32_t)j;
        run += e;
        if (e > 0 && run > target) return (int32_t)j;
    }
    return last;
}

wgnn_status wgnn__ref_sample(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0], *u = in[1];
    int32_t *y = out[0];
    uint64_t rows = (uint64_t)n->in[0].dims[0], v = (uint64_t)n->in[0].dims[1];
    tok *scratch = malloc((size_t)v * sizeof *scratch);
    if (!scratch) return wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory for the reference");
    uint64_t bad = rows;
    for (uint64_t r = 0; r < rows; r++) {
        y[r] = sample_row(x + r * v, v, u[r], n->arg[WGNN__SAMPLE_TEMPERATURE].f, n->arg[WGNN__SAMPLE_TOP_K].i[0],
                          n->arg[WGNN__SAMPLE_TOP_P].f, scratch);
        if (y[r] < 0) {
            y[r] = 0; /* as the kernel */
            if (bad == rows) bad = r;
        }
    }
    free(scratch);
    if (bad < rows)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "row %llu of the logits has no token of nonzero probability (every logit -inf, or NaN "
                              "or +inf ones)", (unsigned long long)bad);
    return WGNN_OK;
}
