/* shape_ref.c - CPU references of the shape family: every output element is
 * found from its coordinates, one element at a time, the plain way. */
#include "ref/shape_ref.h"

#include <float.h>
#include <math.h>
#include <string.h>

void wgnn__slice_bounds(int64_t size, const wgnn__arg *start, const wgnn__arg *end, int64_t step, int64_t *first,
                        int64_t *len) {
    int64_t s = start->set ? start->i[0] : 0;
    int64_t e = end->set ? end->i[0] : size;
    if (s < 0) s += size;
    if (e < 0) e += size;
    if (s < 0) s = 0;
    else if (s > size) s = size;
    if (e < s) e = s;
    else if (e > size) e = size;
    *first = s;
    *len = step > 0 && e > s ? 1 + (e - s - 1) / step : 0; /* ceil((e - s) / step), no overflow at a huge step */
}

bool wgnn__pad_fill_bits(wgnn_dtype dt, double value, uint32_t *bits, const char **why) {
    *why = NULL;
    switch (dt) {
    case WGNN_F32: {
        if (isfinite(value) && fabs(value) > FLT_MAX) {
            *why = "cannot be converted to float32 without overflow";
            return false;
        }
        float f = (float)value;
        memcpy(bits, &f, 4);
        return true;
    }
    case WGNN_F16: {
        if (isfinite(value) && fabs(value) > 65504.0) {
            *why = "cannot be converted to float16 without overflow";
            return false;
        }
        float f = (float)value;
        uint16_t h;
        wgnn_f32_to_f16(&f, &h, 1);
        *bits = h;
        return true;
    }
    case WGNN_I32: {
        if (!isfinite(value) || value > 2147483647.0 || value < -2147483648.0) {
            *why = "cannot be converted to int32 without overflow";
            return false;
        }
        int32_t i = (int32_t)value; /* truncates toward zero, as a C++ cast (PyTorch's fill_) */
        memcpy(bits, &i, 4);
        return true;
    }
    }
    *why = "has an unknown dtype";
    return false;
}

/* ---- coordinates ---------------------------------------------------------- */

static void coords_of(uint64_t f, const wgnn_desc *d, int64_t *c) {
    for (int k = d->rank - 1; k >= 0; k--) {
        c[k] = (int64_t)(f % (uint64_t)d->dims[k]);
        f /= (uint64_t)d->dims[k];
    }
}

static uint64_t flat_of(const int64_t *c, const wgnn_desc *d) {
    uint64_t f = 0;
    for (int k = 0; k < d->rank; k++) f = f * (uint64_t)d->dims[k] + (uint64_t)c[k];
    return f;
}

static void copy_elem(void *dst, uint64_t di, const void *src, uint64_t si, size_t es) {
    memcpy((unsigned char *)dst + di * es, (const unsigned char *)src + si * es, es);
}

/* ---- the ops ---------------------------------------------------------------- */

wgnn_status wgnn__ref_slice(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *x = &n->in[0], *y = &n->out[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__SLICE_DIM].i[0], x->rank, &dim);
    int64_t step = n->arg[WGNN__SLICE_STEP].i[0], first, len;
    wgnn__slice_bounds(x->dims[dim], &n->arg[WGNN__SLICE_START], &n->arg[WGNN__SLICE_END], step, &first, &len);
    size_t es = wgnn_dtype_size(x->dtype);
    int64_t c[WGNN_MAX_RANK];
    uint64_t total = wgnn__desc_numel(y);
    for (uint64_t f = 0; f < total; f++) {
        coords_of(f, y, c);
        c[dim] = first + c[dim] * step;
        copy_elem(out[0], f, in[0], flat_of(c, x), es);
    }
    return WGNN_OK;
}

wgnn_status wgnn__ref_split_with_sizes(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *x = &n->in[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__SPLIT_DIM].i[0], x->rank, &dim);
    size_t es = wgnn_dtype_size(x->dtype);
    int64_t c[WGNN_MAX_RANK], off = 0;
    for (int i = 0; i < n->n_out; i++) {
        const wgnn_desc *y = &n->out[i];
        uint64_t total = wgnn__desc_numel(y);
        for (uint64_t f = 0; f < total; f++) {
            coords_of(f, y, c);
            c[dim] += off;
            copy_elem(out[i], f, in[0], flat_of(c, x), es);
        }
        off += y->dims[dim];
    }
    return WGNN_OK;
}

wgnn_status wgnn__ref_permute(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *x = &n->in[0], *y = &n->out[0];
    const wgnn__arg *a = &n->arg[WGNN__PERMUTE_DIMS];
    int perm[WGNN_MAX_RANK];
    for (int i = 0; i < y->rank; i++) wgnn__norm_dim(a->i[i], x->rank, &perm[i]);
    size_t es = wgnn_dtype_size(x->dtype);
    int64_t c[WGNN_MAX_RANK], ci[WGNN_MAX_RANK];
    uint64_t total = wgnn__desc_numel(y);
    for (uint64_t f = 0; f < total; f++) {
        coords_of(f, y, c);
        for (int i = 0; i < y->rank; i++) ci[perm[i]] = c[i];
        copy_elem(out[0], f, in[0], flat_of(ci, x), es);
    }
    return WGNN_OK;
}

wgnn_status wgnn__ref_cat(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *y = &n->out[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__CAT_DIM].i[0], y->rank, &dim);
    size_t es = wgnn_dtype_size(y->dtype);
    int64_t c[WGNN_MAX_RANK];
    uint64_t total = wgnn__desc_numel(y);
    for (uint64_t f = 0; f < total; f++) {
        coords_of(f, y, c);
        int k = 0;
        while (c[dim] >= n->in[k].dims[dim]) c[dim] -= n->in[k++].dims[dim];
        copy_elem(out[0], f, in[k], flat_of(c, &n->in[k]), es);
    }
    return WGNN_OK;
}

wgnn_status wgnn__ref_constant_pad_nd(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *x = &n->in[0], *y = &n->out[0];
    const wgnn__arg *pad = &n->arg[WGNN__PAD_PAD];
    uint32_t bits;
    const char *why;
    if (!wgnn__pad_fill_bits(x->dtype, n->arg[WGNN__PAD_VALUE].f, &bits, &why))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "value=%g %s", n->arg[WGNN__PAD_VALUE].f, why);
    uint16_t bits16 = (uint16_t)bits;
    size_t es = wgnn_dtype_size(x->dtype);
    const void *fill = es == 2 ? (const void *)&bits16 : (const void *)&bits;
    int64_t lo[WGNN_MAX_RANK] = {0}, c[WGNN_MAX_RANK];
    for (int j = 0; j < pad->n / 2; j++) lo[x->rank - 1 - j] = pad->i[2 * j];
    uint64_t total = wgnn__desc_numel(y);
    for (uint64_t f = 0; f < total; f++) {
        coords_of(f, y, c);
        bool inside = true;
        for (int k = 0; k < x->rank; k++) {
            c[k] -= lo[k];
            inside = inside && c[k] >= 0 && c[k] < x->dims[k];
        }
        if (inside) copy_elem(out[0], f, in[0], flat_of(c, x), es);
        else copy_elem(out[0], f, fill, 0, es);
    }
    return WGNN_OK;
}

wgnn_status wgnn__ref_embedding(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *w = &n->in[0];
    const int32_t *idx = in[1];
    uint64_t count = wgnn__desc_numel(&n->in[1]);
    size_t row = (size_t)w->dims[1] * wgnn_dtype_size(w->dtype);
    for (uint64_t i = 0; i < count; i++) {
        if (idx[i] < 0 || idx[i] >= w->dims[0])
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "indices[%llu] = %d is out of range for weight with %lld rows", (unsigned long long)i,
                                  idx[i], (long long)w->dims[0]);
        memcpy((unsigned char *)out[0] + i * row, (const unsigned char *)in[0] + (size_t)idx[i] * row, row);
    }
    return WGNN_OK;
}

wgnn_status wgnn__ref_index_copy(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *x = &n->in[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__INDEX_COPY_DIM].i[0], x->rank, &dim);
    const int32_t *idx = in[1];
    int64_t count = n->in[1].dims[0], rows = x->dims[dim];
    uint64_t outer = 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= (uint64_t)x->dims[d];
    for (int d = dim + 1; d < x->rank; d++) inner *= (uint64_t)x->dims[d];
    for (int64_t i = 0; i < count; i++)
        if (idx[i] < 0 || idx[i] >= rows)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "index[%lld] = %d is out of range for dim %d of size %lld",
                                  (long long)i, idx[i], dim, (long long)rows);
    size_t es = wgnn_dtype_size(x->dtype), row = (size_t)inner * es;
    /* out is self (the op framework copied self into out first when they
     * are two buffers): only the indexed rows written */
    for (uint64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < count; i++)
            memcpy((unsigned char *)out[0] + (o * (uint64_t)rows + (uint64_t)idx[i]) * row,
                   (const unsigned char *)in[2] + (o * (uint64_t)count + (uint64_t)i) * row, row);
    return WGNN_OK;
}
