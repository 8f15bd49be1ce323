/* shape.c - the shape family's rows: slice, split_with_sizes, permute, cat,
 * constant_pad_nd, embedding, index_copy.
 *
 * Every op is one or more gather jobs: a domain of rank <= 8 walked with a
 * src and a dst stride per dim, run by one kernel, shaders/gather.wgsl, in
 * three variants: copy, pad (a constant outside a box of coordinates) and
 * index (embedding: dim 0's coordinate looked up in the indices). Data move
 * as bits: 32-bit elements (float32, int32) or 16-bit ones (float16, without
 * shader-f16: a thread writes one whole u32 word).
 *
 * A job is first simplified (size-1 dims dropped, dims that are contiguous
 * on both sides merged), 16-bit jobs whose innermost run is word-aligned
 * become 32-bit ones, and it is then cut along dim 0 into dispatches whose
 * src and dst windows each fit one storage binding (offsets rounded down to
 * minStorageBufferOffsetAlignment) and whose thread counts fit u32; an
 * embedding weight past one binding is cut into row ranges. What cannot be
 * cut so (one slice of dim 0 alone past the binding size) is refused with
 * WGNN_ERR_LIMIT naming maxStorageBufferBindingSize. */
#include "op.h"
#include "ref/shape_ref.h"

#include <stdio.h>
#include <string.h>

/* Params of shaders/gather.wgsl, written once. */
#define GATHER_PARAMS(X, S)                                                                          \
    X(S, u32x4, dims0) X(S, u32x4, dims1) /* domain dims of this dispatch, outermost first */        \
    X(S, u32x4, sstr0) X(S, u32x4, sstr1) /* src element stride per dim */                           \
    X(S, u32x4, dstr0) X(S, u32x4, dstr1) /* dst element stride per dim */                           \
    X(S, u32x4, lo0) X(S, u32x4, lo1) X(S, u32x4, hi0) X(S, u32x4, hi1) /* pad: coords read */       \
    X(S, u32, rank) X(S, u32, n_threads)                                                             \
    X(S, u32, src_base) X(S, u32, dst_base) /* element offsets in the bound windows (wrapping) */    \
    X(S, u32, inner) X(S, u32, blk_len) X(S, u32, blk_words) /* 16-bit: dst-contiguous blocks */     \
    X(S, u32, fill)                                                                                  \
    X(S, u32, idx_base) X(S, u32, row_stride) X(S, u32, row_lo) X(S, u32, row_hi) X(S, u32, n_rows) \
    X(S, u32, oob_zero)
WGNN__PARAMS_STRUCT(gather_params, GATHER_PARAMS);
WGNN__PARAMS_CHECK(gather_params, GATHER_PARAMS)

/* Params of shaders/index_copy.wgsl (in 32-bit words). */
#define INDEX_COPY_PARAMS(X, S) X(S, u32, n_threads) X(S, u32, n) X(S, u32, n_idx) X(S, u32, inner_w)
WGNN__PARAMS_STRUCT(index_copy_params, INDEX_COPY_PARAMS);
WGNN__PARAMS_CHECK(index_copy_params, INDEX_COPY_PARAMS)

#define MAXR WGNN_MAX_RANK
#define MAX_THREADS (1ull << 31)

enum { G_COPY = 0, G_PAD = 1, G_INDEX = 2 };

/* One gather job, in elements. */
typedef struct gjob {
    int mode;
    bool half;              /* 16-bit elements */
    int vec;                /* copy: a thread takes this many elements of the innermost dim (1 or 4) */
    int rank;               /* >= 1 */
    int64_t dims[MAXR];
    int64_t sstr[MAXR], dstr[MAXR];
    int64_t lo[MAXR], hi[MAXR];   /* pad: the coordinates that read src; else [0, dims) */
    int64_t soff, doff;     /* offsets of coordinate (0, ..., 0); soff may be < 0 (pad) */
    uint32_t fill;          /* pad: the value's bits */
    int64_t n_rows, row_stride; /* index: weight rows, elements a row */
    const wgnn_tensor *src, *dst, *idx;
} gjob;

/* A job over dims (rank 0: one element) with a contiguous dst; the caller
 * sets the src strides. */
static void job_init(gjob *j, int mode, int rank, const int64_t *dims, const wgnn_tensor *src,
                     const wgnn_tensor *dst) {
    memset(j, 0, sizeof *j);
    j->mode = mode;
    j->half = dst->dtype == WGNN_F16;
    j->rank = rank ? rank : 1;
    int64_t st = 1;
    for (int d = j->rank - 1; d >= 0; d--) {
        j->dims[d] = rank ? dims[d] : 1;
        j->hi[d] = j->dims[d];
        j->dstr[d] = st;
        st *= j->dims[d];
    }
    j->src = src;
    j->dst = dst;
}

static void contiguous_strides(const wgnn_desc *d, int64_t *st) {
    int64_t s = 1;
    for (int k = d->rank - 1; k >= 0; k--) {
        st[k] = s;
        s *= d->dims[k];
    }
}

/* Drops size-1 dims whose one coordinate is read (any strides do), merges a
 * dim into the one outside it where both sides are contiguous across them
 * (and, for pad, the inner one is read whole). Index jobs keep dim 0. */
static void simplify(gjob *j) {
    gjob o = *j;
    int r = 0;
    for (int d = 0; d < j->rank; d++) {
        bool keep = !(j->dims[d] == 1 && j->lo[d] == 0 && j->hi[d] == 1) || (j->mode == G_INDEX && d == 0);
        if (!keep) continue;
        bool merge = r > 0 && !(j->mode == G_INDEX && r == 1) && o.sstr[r - 1] == j->sstr[d] * j->dims[d] &&
                     o.dstr[r - 1] == j->dstr[d] * j->dims[d] && j->lo[d] == 0 && j->hi[d] == j->dims[d];
        if (merge) {
            o.lo[r - 1] *= j->dims[d];
            o.hi[r - 1] *= j->dims[d];
            o.dims[r - 1] *= j->dims[d];
            o.sstr[r - 1] = j->sstr[d];
            o.dstr[r - 1] = j->dstr[d];
            continue;
        }
        o.dims[r] = j->dims[d];
        o.sstr[r] = j->sstr[d];
        o.dstr[r] = j->dstr[d];
        o.lo[r] = j->lo[d];
        o.hi[r] = j->hi[d];
        r++;
    }
    if (r == 0) { /* one element */
        o.dims[0] = o.hi[0] = o.sstr[0] = o.dstr[0] = 1;
        o.lo[0] = 0;
        r = 1;
    }
    o.rank = r;
    *j = o;
}

/* A 16-bit job whose innermost dim is a word-aligned run on both sides is a
 * 32-bit job over half as many elements. */
static void widen(gjob *j) {
    int r = j->rank, in = r - 1;
    if (!j->half || j->sstr[in] != 1 || j->dstr[in] != 1 || j->dims[in] % 2 || j->soff % 2 || j->doff % 2) return;
    if (j->mode == G_PAD && (j->lo[in] % 2 || j->hi[in] % 2)) return;
    if (j->mode == G_INDEX && (in == 0 || j->row_stride % 2)) return;
    for (int d = 0; d < in; d++)
        if (j->sstr[d] % 2 || j->dstr[d] % 2) return;
    for (int d = 0; d < in; d++) {
        j->sstr[d] /= 2;
        j->dstr[d] /= 2;
    }
    j->dims[in] /= 2;
    j->lo[in] /= 2;
    j->hi[in] /= 2;
    j->soff /= 2;
    j->doff /= 2;
    j->row_stride /= 2;
    j->fill = (j->fill & 0xffffu) | (j->fill << 16);
    j->half = false;
}

/* A 32-bit copy whose innermost dim is a run on both sides, a multiple of
 * four long: a thread copies four elements (the innermost dim counted in
 * fours). On the H200 the per-element coordinate walk, not the memory,
 * bounded these copies (ViT-B/16's heads merge at batch 32: 65 us for 39 MB). */
static void vectorize(gjob *j) {
    int in = j->rank - 1;
    j->vec = 1;
    if (j->half || j->mode != G_COPY || j->sstr[in] != 1 || j->dstr[in] != 1 || j->dims[in] % 4)
        return;
    j->dims[in] /= 4;
    j->hi[in] = j->dims[in];
    j->sstr[in] = j->dstr[in] = 4;
    j->vec = 4;
}

static bool dense_dst(const gjob *j) {
    int64_t st = 1;
    for (int d = j->rank - 1; d >= 0; d--) {
        if (j->dstr[d] != st) return false;
        st *= j->dims[d];
    }
    return true;
}

/* The binding covering elements [first, last] of t (es bytes each): offset
 * rounded down to the alignment, size up to 4 bytes. */
typedef struct window {
    uint64_t offset, size;
} window;

static uint64_t offset_align(const wgnn_context *ctx) {
    uint64_t a = ctx->limits.minStorageBufferOffsetAlignment;
    return a < 4 ? 4 : a;
}

static window window_of(const wgnn_context *ctx, int64_t first, int64_t last, uint64_t es) {
    uint64_t align = offset_align(ctx);
    window w;
    w.offset = (uint64_t)first * es / align * align;
    w.size = (((uint64_t)last + 1) * es + 3u) / 4u * 4u - w.offset;
    return w;
}

static uint64_t binding_limit(const wgnn_context *ctx) {
    uint64_t lim = ctx->limits.maxStorageBufferBindingSize;
    if (ctx->limits.maxBufferSize < lim) lim = ctx->limits.maxBufferSize;
    if (lim > 0xFFFFFFFCull) lim = 0xFFFFFFFCull; /* element offsets are u32 in the kernel */
    return lim & ~(uint64_t)3u;
}

/* Sum over dims d >= 1 of (dims_d - 1) * str_d: the extent of one slice of dim 0. */
static int64_t inner_extent(const gjob *j, const int64_t *str) {
    int64_t e = 0;
    for (int d = 1; d < j->rank; d++) e += (j->dims[d] - 1) * str[d];
    return e;
}

static void put4(uint32_t *a, uint32_t *b, const int64_t *v, int rank) {
    for (int d = 0; d < MAXR; d++) {
        uint32_t x = d < rank ? (uint32_t)v[d] : 0; /* wraps: offsets are mod 2^32 in the kernel */
        if (d < 4) a[d] = x;
        else b[d - 4] = x;
    }
}

/* Adds the dispatches of job j to p. what names the op in limit messages. */
static wgnn_status emit(wgnn_context *ctx, wgnn__plan *p, gjob *j, const char *what) {
    simplify(j);
    widen(j);
    vectorize(j);
    int r = j->rank;
    const uint64_t es = j->half ? 2 : 4, lim = binding_limit(ctx);
    const uint64_t align = offset_align(ctx);
    const bool dense = dense_dst(j);
    if (j->half && !dense && j->dstr[r - 1] != 1 && r < MAXR) { /* blocks of one element (cat of a size-1 run) */
        j->dims[r] = j->hi[r] = j->sstr[r] = j->dstr[r] = 1;
        j->lo[r] = 0;
        j->rank = ++r;
    }
    if (j->half && !dense && !(r == 2 && j->dstr[1] == 1 && j->dstr[0] > j->dims[1]))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: internal: a 16-bit job whose dst blocks may share words",
                         what);
    const int inner = dense ? 0 : r - 1;

    /* Weight rows a dispatch binds (index jobs): all, or ranges that fit. */
    int64_t rows_per = j->n_rows;
    if (j->mode == G_INDEX) {
        uint64_t row_bytes = (uint64_t)j->row_stride * es;
        if (j->src->buf_size > lim) {
            uint64_t step = align / wgnn__gcd_u64(row_bytes, align);
            rows_per = (int64_t)(lim / row_bytes / step * step);
            if (rows_per == 0)
                return wgnn__err(ctx, WGNN_ERR_LIMIT,
                                 "%s: one weight row (%llu bytes, %llu rows at an aligned offset) passes the "
                                 "device's maxStorageBufferBindingSize (%llu bytes)",
                                 what, (unsigned long long)row_bytes, (unsigned long long)step,
                                 (unsigned long long)lim);
        }
    }

    /* Rows of dim 0 a dispatch takes: windows within the limit, threads
     * within MAX_THREADS. */
    int64_t slice = 1;
    for (int d = 1; d < r; d++) slice *= j->dims[d];
    const int64_t ext_s = inner_extent(j, j->sstr) + j->vec - 1, ext_d = inner_extent(j, j->dstr) + j->vec - 1;
    const uint64_t slack = align + 8;
    int64_t k = j->dims[0];
    if ((uint64_t)slice > MAX_THREADS / 2) k = 0;
    else if ((int64_t)(MAX_THREADS / 2 / (uint64_t)slice) < k) k = (int64_t)(MAX_THREADS / 2 / (uint64_t)slice);
    /* per side: elements one slice of dim 0 spans, elements dim 0 steps, bytes an element */
    const int64_t side[2][3] = {
        {j->mode == G_INDEX ? 0 : ext_s, j->mode == G_INDEX ? 1 : j->sstr[0], j->mode == G_INDEX ? 4 : (int64_t)es},
        {ext_d, j->dstr[0], (int64_t)es}}; /* src (indices for index jobs), dst */
    if (k < 1)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "%s: one slice of the copy along dim 0 has %lld elements, more than the %llu threads a "
                         "dispatch takes", what, (long long)slice, (unsigned long long)(MAX_THREADS / 2));
    for (int i = 0; i < 2; i++) {
        uint64_t base = ((uint64_t)side[i][0] + 1) * (uint64_t)side[i][2] + slack;
        if (base > lim)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "%s: one slice of the copy along dim 0 (%lld elements) %s %llu bytes of %s (strided "
                             "elements span the rows between them), more than one binding of the device takes "
                             "(maxStorageBufferBindingSize %llu bytes)",
                             what, (long long)slice, i == 0 ? "reads across" : "writes across",
                             (unsigned long long)base, i == 0 ? (j->mode == G_INDEX ? "the indices" : "the source")
                                                              : "the output",
                             (unsigned long long)lim);
        if (side[i][1] > 0) {
            uint64_t most = (lim - base) / ((uint64_t)side[i][1] * (uint64_t)side[i][2]) + 1;
            if (most < (uint64_t)k) k = (int64_t)most;
        }
    }

    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 64);
    wgnn__const consts[4] = {{"WG", wg}, {"MODE", j->mode}, {"HALF", j->half ? 1 : 0}, {"VEC", (uint32_t)j->vec}};
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "gather", WGNN__PARAMS_WGSL(GATHER_PARAMS), consts, 4, &pipe);
    if (s != WGNN_OK) return s;

    for (int64_t a = 0; a < j->dims[0]; a += k) {
        int64_t n0 = j->dims[0] - a < k ? j->dims[0] - a : k;
        gather_params gp;
        memset(&gp, 0, sizeof gp);
        int64_t dims[MAXR], lo[MAXR], hi[MAXR];
        memcpy(dims, j->dims, sizeof dims);
        memcpy(lo, j->lo, sizeof lo);
        memcpy(hi, j->hi, sizeof hi);
        dims[0] = n0;

        /* dst window */
        int64_t dfirst = j->doff + a * j->dstr[0];
        window dw = window_of(ctx, dfirst, dfirst + (n0 - 1) * j->dstr[0] + ext_d, es);
        gp.dst_base = (uint32_t)(dfirst - (int64_t)(dw.offset / es));

        /* src window: the elements this chunk reads */
        window sw = {0, 4};
        int64_t sbase = 0;
        if (j->mode == G_COPY) {
            int64_t sfirst = j->soff + a * j->sstr[0];
            sw = window_of(ctx, sfirst, sfirst + (n0 - 1) * j->sstr[0] + ext_s, es);
            sbase = sfirst - (int64_t)(sw.offset / es);
        } else if (j->mode == G_PAD) {
            lo[0] = j->lo[0] > a ? j->lo[0] - a : 0;
            hi[0] = j->hi[0] < a + n0 ? j->hi[0] - a : n0;
            int64_t smin = j->soff + a * j->sstr[0], smax = smin;
            bool reads = true;
            for (int d = 0; d < r; d++) {
                if (lo[d] >= hi[d]) reads = false;
                smin += lo[d] * j->sstr[d];
                smax += (hi[d] - 1) * j->sstr[d];
            }
            if (reads) {
                sw = window_of(ctx, smin, smax, es);
                sbase = j->soff + a * j->sstr[0] - (int64_t)(sw.offset / es);
            } else {
                lo[0] = hi[0] = 0; /* nothing read: the whole chunk is fill */
            }
        }
        gp.src_base = (uint32_t)sbase;

        put4(gp.dims0, gp.dims1, dims, r);
        put4(gp.sstr0, gp.sstr1, j->sstr, r);
        put4(gp.dstr0, gp.dstr1, j->dstr, r);
        put4(gp.lo0, gp.lo1, lo, r);
        put4(gp.hi0, gp.hi1, hi, r);
        gp.rank = (uint32_t)r;
        gp.fill = j->fill;
        gp.inner = (uint32_t)inner;
        uint64_t threads = (uint64_t)n0 * (uint64_t)slice;
        if (j->half) {
            uint64_t blk = 1, blocks = 1;
            for (int d = 0; d < r; d++) {
                if (d < inner) blocks *= (uint64_t)dims[d];
                else blk *= (uint64_t)dims[d];
            }
            gp.blk_len = (uint32_t)blk;
            gp.blk_words = (uint32_t)(blk / 2 + 1);
            threads = dense ? ((gp.dst_base + blk - 1) >> 1) - (gp.dst_base >> 1) + 1 : blocks * gp.blk_words;
        }
        gp.n_threads = (uint32_t)threads;
        uint32_t gx, gy;
        s = wgnn__compute_2d_workgroup_count(ctx, (threads + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                             what, &gx, &gy);
        if (s != WGNN_OK) return s;

        /* index: the indices this chunk reads, and weight row ranges */
        window iw = {0, 0};
        if (j->mode == G_INDEX) {
            iw = window_of(ctx, a, a + n0 - 1, 4);
            gp.idx_base = (uint32_t)(a - (int64_t)(iw.offset / 4));
            gp.row_stride = (uint32_t)j->row_stride;
            gp.n_rows = (uint32_t)j->n_rows;
        }
        int64_t parts = j->mode == G_INDEX ? (j->n_rows + rows_per - 1) / rows_per : 1;
        for (int64_t part = 0; part < parts; part++) {
            if (j->mode == G_INDEX) {
                int64_t r0 = part * rows_per, r1 = j->n_rows - r0 < rows_per ? j->n_rows : r0 + rows_per;
                gp.row_lo = (uint32_t)r0;
                gp.row_hi = (uint32_t)r1;
                gp.oob_zero = part == 0;
                sw = window_of(ctx, r0 * j->row_stride, r1 * j->row_stride - 1, es);
                gp.src_base = (uint32_t)(r0 * j->row_stride - (int64_t)(sw.offset / es));
            }
            wgnn__dispatch *dp = wgnn__plan_add(ctx, p, pipe, &gp, sizeof gp, gx, gy, 1);
            if (!dp) return WGNN_ERR_OUT_OF_MEMORY;
            wgnn__plan_bind(dp, j->src->buf, sw.offset, sw.size);
            wgnn__plan_bind(dp, j->dst->buf, dw.offset, dw.size);
            wgnn__plan_bind(dp, j->idx ? j->idx->buf : wgnn__make_optional_binding(ctx, NULL, false), iw.offset,
                            iw.size);
            if (j->mode == G_INDEX) wgnn__plan_bind(dp, wgnn__data_error_buffer(ctx), 0, 0);
            else wgnn__plan_bind(dp, wgnn__make_optional_binding(ctx, NULL, true), 0, 0);
        }
    }
    return WGNN_OK;
}

/* ---- checks -------------------------------------------------------------- */

static bool dim_arg(wgnn__node *n, int arg, const char *name, const wgnn_desc *x, const char *xname, int *dim,
                    wgnn_status *s) {
    if (wgnn__norm_dim(n->arg[arg].i[0], x->rank, dim)) return true;
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    *s = wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s=%lld is out of range for %s %s (rank %d: -%d..%d)", name,
                        (long long)n->arg[arg].i[0], xname, xs, x->rank, x->rank, x->rank - 1);
    return false;
}

static wgnn_status check_slice(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    if (x->rank == 0) return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "self is a 0-d tensor; slice needs rank >= 1");
    int dim;
    wgnn_status s;
    if (!dim_arg(n, WGNN__SLICE_DIM, "dim", x, "self", &dim, &s)) return s;
    int64_t step = n->arg[WGNN__SLICE_STEP].i[0], first, len;
    if (step <= 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "step=%lld: the slice step must be positive",
                              (long long)step);
    wgnn__slice_bounds(x->dims[dim], &n->arg[WGNN__SLICE_START], &n->arg[WGNN__SLICE_END], step, &first, &len);
    if (len == 0) {
        char xs[160], st[32] = "None", en[32] = "None";
        wgnn__dims_str(x, xs, sizeof xs);
        if (n->arg[WGNN__SLICE_START].set) snprintf(st, sizeof st, "%lld", (long long)n->arg[WGNN__SLICE_START].i[0]);
        if (n->arg[WGNN__SLICE_END].set) snprintf(en, sizeof en, "%lld", (long long)n->arg[WGNN__SLICE_END].i[0]);
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "start=%s, end=%s on dim %d of self %s select no element; PyTorch gives a 0-size dim, "
                              "which wgnn tensors cannot have",
                              st, en, dim, xs);
    }
    n->n_out = 1;
    n->out[0] = *x;
    n->out[0].dims[dim] = len;
    return WGNN_OK;
}

static wgnn_status check_split(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    if (x->rank == 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "self is a 0-d tensor; split_with_sizes needs rank >= 1");
    int dim;
    wgnn_status s;
    if (!dim_arg(n, WGNN__SPLIT_DIM, "dim", x, "self", &dim, &s)) return s;
    const wgnn__arg *sz = &n->arg[WGNN__SPLIT_SIZES];
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (sz->n < 1 || sz->n > WGNN__MAX_OUT)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "split_sizes has %d values; it needs 1 to %d", sz->n,
                              WGNN__MAX_OUT);
    int64_t sum = 0;
    for (int i = 0; i < sz->n; i++)
        if (sz->i[i] < 0)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "split_sizes[%d] = %lld: split sizes must be non-negative", i, (long long)sz->i[i]);
    for (int i = 0; i < sz->n; i++) {
        if (sz->i[i] == 0)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "split_sizes[%d] = 0: PyTorch gives a 0-size piece, which wgnn tensors cannot have",
                                  i);
        if (sz->i[i] > x->dims[dim] - sum) { /* sum + size would pass dim (and may not fit 64 bits) */
            sum = x->dims[dim] + 1;
            break;
        }
        sum += sz->i[i];
    }
    if (sum != x->dims[dim])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "split_sizes must sum exactly to the size of dim %d of self %s (%lld)%s", dim, xs,
                              (long long)x->dims[dim], sum > x->dims[dim] ? ": they pass it" : ": they fall short");
    n->n_out = sz->n;
    for (int i = 0; i < sz->n; i++) {
        n->out[i] = *x;
        n->out[i].dims[dim] = sz->i[i];
    }
    return WGNN_OK;
}

static wgnn_status check_permute(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    const wgnn__arg *a = &n->arg[WGNN__PERMUTE_DIMS];
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (a->n != x->rank)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "dims has %d values but self %s has rank %d: dims must list every dim once", a->n, xs,
                              x->rank);
    bool seen[MAXR] = {0};
    n->n_out = 1;
    n->out[0] = *x;
    for (int i = 0; i < a->n; i++) {
        int d;
        if (!wgnn__norm_dim(a->i[i], x->rank, &d))
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "dims[%d] = %lld is out of range for self %s (rank %d: -%d..%d)", i,
                                  (long long)a->i[i], xs, x->rank, x->rank, x->rank - 1);
        if (seen[d])
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "dims[%d] = %lld repeats dim %d: dims must be a permutation of 0..%d", i,
                                  (long long)a->i[i], d, x->rank - 1);
        seen[d] = true;
        n->out[0].dims[i] = x->dims[d];
    }
    return WGNN_OK;
}

static wgnn_status check_cat(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    if (x->rank == 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "tensors[0] is a 0-d tensor; 0-d tensors cannot be concatenated");
    int dim;
    wgnn_status s;
    if (!dim_arg(n, WGNN__CAT_DIM, "dim", x, "tensors[0]", &dim, &s)) return s;
    n->n_out = 1;
    n->out[0] = *x;
    for (int i = 1; i < n->n_in; i++) {
        const wgnn_desc *y = &n->in[i];
        char xs[160], ys[160];
        wgnn__dims_str(x, xs, sizeof xs);
        wgnn__dims_str(y, ys, sizeof ys);
        if (y->dtype != x->dtype)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "tensors[%d] is %s but tensors[0] is %s: one dtype for all",
                                  i, wgnn_dtype_name(y->dtype), wgnn_dtype_name(x->dtype));
        bool same = y->rank == x->rank;
        for (int d = 0; same && d < x->rank; d++) same = d == dim || y->dims[d] == x->dims[d];
        if (!same)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "tensors[%d] %s and tensors[0] %s must have the same rank and dims except dim %d", i,
                                  ys, xs, dim);
        n->out[0].dims[dim] += y->dims[dim];
    }
    return WGNN_OK;
}

static wgnn_status check_pad(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    const wgnn__arg *pad = &n->arg[WGNN__PAD_PAD];
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (pad->n % 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "pad has %d values; it must hold pairs (before, after) from the last dim backwards",
                              pad->n);
    if (pad->n / 2 > x->rank)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "pad has %d values, %d pairs, but self %s has only %d dims",
                              pad->n, pad->n / 2, xs, x->rank);
    uint32_t bits;
    const char *why;
    if (!wgnn__pad_fill_bits(x->dtype, n->arg[WGNN__PAD_VALUE].f, &bits, &why))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "value=%g %s", n->arg[WGNN__PAD_VALUE].f, why);
    n->n_out = 1;
    n->out[0] = *x;
    for (int j = 0; j < pad->n / 2; j++) {
        int d = x->rank - 1 - j;
        int64_t a = pad->i[2 * j], b = pad->i[2 * j + 1], size;
        if (__builtin_add_overflow(x->dims[d], a, &size) || __builtin_add_overflow(size, b, &size))
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "dim %d of self %s (size %lld) padded by %lld and %lld: the size passes int64", d,
                                  xs, (long long)x->dims[d], (long long)a, (long long)b);
        if (size < 1)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "dim %d of self %s (size %lld) padded by %lld and %lld gives size %lld%s", d, xs,
                                  (long long)x->dims[d], (long long)a, (long long)b, (long long)size,
                                  size < 0 ? ", which is invalid"
                                           : "; PyTorch gives a 0-size dim, which wgnn tensors cannot have");
        n->out[0].dims[d] = size;
    }
    return WGNN_OK;
}

static wgnn_status check_embedding(wgnn__node *n) {
    const wgnn_desc *w = &n->in[0], *ix = &n->in[1];
    char ws[160], is[160];
    wgnn__dims_str(w, ws, sizeof ws);
    wgnn__dims_str(ix, is, sizeof is);
    if (w->rank != 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "weight is %s (rank %d); it must be [num_embeddings, dim]",
                              ws, w->rank);
    if (ix->dtype != WGNN_I32)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "indices are %s; they must be int32",
                              wgnn_dtype_name(ix->dtype));
    if (ix->rank >= WGNN_MAX_RANK)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "indices %s have rank %d; the output (rank + 1) would pass rank %d", is, ix->rank,
                              WGNN_MAX_RANK);
    if (w->dims[0] > INT32_MAX)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "weight %s has more rows than int32 indices can name", ws);
    n->n_out = 1;
    n->out[0] = *ix;
    n->out[0].dtype = w->dtype;
    n->out[0].dims[ix->rank] = w->dims[1];
    n->out[0].rank = ix->rank + 1;
    return WGNN_OK;
}

static wgnn_status check_index_copy(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0], *ix = &n->in[1], *src = &n->in[2];
    char xs[160], is[160], ss[160];
    wgnn__dims_str(x, xs, sizeof xs);
    wgnn__dims_str(ix, is, sizeof is);
    wgnn__dims_str(src, ss, sizeof ss);
    int dim;
    if (x->rank < 1)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "self is a scalar; it needs rank >= 1");
    if (!wgnn__norm_dim(n->arg[WGNN__INDEX_COPY_DIM].i[0], x->rank, &dim))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "dim %lld is out of range for self %s (rank %d)",
                              (long long)n->arg[WGNN__INDEX_COPY_DIM].i[0], xs, x->rank);
    if (ix->dtype != WGNN_I32 || ix->rank != 1)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "index is %s %s; it must be a 1-D int32 tensor",
                              wgnn_dtype_name(ix->dtype), is);
    if (src->dtype != x->dtype)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "source is %s but self is %s; they must match",
                              wgnn_dtype_name(src->dtype), wgnn_dtype_name(x->dtype));
    bool ok = src->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++) ok = src->dims[d] == (d == dim ? ix->dims[0] : x->dims[d]);
    if (!ok)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "source is %s but must be self %s with dim %d of index's length %lld", ss, xs, dim,
                              (long long)ix->dims[0]);
    if (x->dtype == WGNN_F16) {
        int64_t inner = 1;
        for (int d = dim + 1; d < x->rank; d++) inner *= x->dims[d];
        if (inner % 2)
            return wgnn__node_err(n, WGNN_ERR_UNSUPPORTED,
                                  "float16 rows are moved as 32-bit words: the dims after dim %d of self %s must "
                                  "hold an even number of elements",
                                  dim, xs);
    }
    n->n_out = 1;
    n->out[0] = *x;
    return WGNN_OK;
}

/* ---- plans ----------------------------------------------------------------- */

static wgnn_status plan_slice(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                              wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_desc *x = &n->in[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__SLICE_DIM].i[0], x->rank, &dim);
    int64_t step = n->arg[WGNN__SLICE_STEP].i[0], first, len, st[MAXR];
    wgnn__slice_bounds(x->dims[dim], &n->arg[WGNN__SLICE_START], &n->arg[WGNN__SLICE_END], step, &first, &len);
    contiguous_strides(x, st);
    gjob j;
    job_init(&j, G_COPY, n->out[0].rank, n->out[0].dims, in[0], out[0]);
    memcpy(j.sstr, st, sizeof st);
    j.sstr[dim] *= step;
    j.soff = first * st[dim];
    return emit(ctx, p, &j, "slice");
}

static wgnn_status plan_split(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                              wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_desc *x = &n->in[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__SPLIT_DIM].i[0], x->rank, &dim);
    int64_t st[MAXR], off = 0;
    contiguous_strides(x, st);
    for (int i = 0; i < n->n_out; i++) {
        gjob j;
        job_init(&j, G_COPY, n->out[i].rank, n->out[i].dims, in[0], out[i]);
        memcpy(j.sstr, st, sizeof st);
        j.soff = off * st[dim];
        off += n->out[i].dims[dim];
        wgnn_status s = emit(ctx, p, &j, "split_with_sizes");
        if (s != WGNN_OK) return s;
    }
    return WGNN_OK;
}

static wgnn_status plan_permute(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_desc *x = &n->in[0];
    int64_t st[MAXR];
    contiguous_strides(x, st);
    gjob j;
    job_init(&j, G_COPY, n->out[0].rank, n->out[0].dims, in[0], out[0]);
    for (int i = 0; i < x->rank; i++) {
        int d;
        wgnn__norm_dim(n->arg[WGNN__PERMUTE_DIMS].i[i], x->rank, &d);
        j.sstr[i] = st[d];
    }
    return emit(ctx, p, &j, "permute");
}

/* cat: input k fills a box [outer, size_k * inner] of the output. */
static wgnn_status plan_cat(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_desc *y = &n->out[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__CAT_DIM].i[0], y->rank, &dim);
    int64_t outer = 1, inner = 1, off = 0;
    for (int d = 0; d < dim; d++) outer *= y->dims[d];
    for (int d = dim + 1; d < y->rank; d++) inner *= y->dims[d];
    for (int i = 0; i < n->n_in; i++) {
        int64_t run = n->in[i].dims[dim] * inner, dims[2] = {outer, run};
        gjob j;
        job_init(&j, G_COPY, 2, dims, in[i], out[0]);
        j.sstr[0] = run;
        j.sstr[1] = 1;
        j.dstr[0] = y->dims[dim] * inner;
        j.doff = off * inner;
        off += n->in[i].dims[dim];
        wgnn_status s = emit(ctx, p, &j, "cat");
        if (s != WGNN_OK) return s;
    }
    return WGNN_OK;
}

static wgnn_status plan_pad(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_desc *x = &n->in[0], *y = &n->out[0];
    const wgnn__arg *pad = &n->arg[WGNN__PAD_PAD];
    gjob j;
    job_init(&j, G_PAD, y->rank, y->dims, in[0], out[0]);
    const char *why;
    wgnn__pad_fill_bits(x->dtype, n->arg[WGNN__PAD_VALUE].f, &j.fill, &why); /* checked */
    contiguous_strides(x, j.sstr);
    for (int d = 0; d < x->rank; d++) {
        int jj = x->rank - 1 - d; /* pair index of dim d */
        int64_t before = jj < pad->n / 2 ? pad->i[2 * jj] : 0;
        /* output coordinate c reads input c - before when that is in [0, size) */
        j.lo[d] = before > 0 ? before : 0;
        j.hi[d] = before + x->dims[d] < y->dims[d] ? before + x->dims[d] : y->dims[d];
        if (j.hi[d] < j.lo[d]) j.hi[d] = j.lo[d];
        j.soff -= before * j.sstr[d];
    }
    return emit(ctx, p, &j, "constant_pad_nd");
}

static wgnn_status plan_embedding(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                  wgnn_tensor *const *out, wgnn__plan *p) {
    int64_t dims[2] = {(int64_t)wgnn__desc_numel(&n->in[1]), n->in[0].dims[1]};
    gjob j;
    job_init(&j, G_INDEX, 2, dims, in[0], out[0]);
    j.sstr[0] = 0; /* dim 0 is looked up */
    j.sstr[1] = 1;
    j.n_rows = n->in[0].dims[0];
    j.row_stride = n->in[0].dims[1];
    j.idx = in[1];
    return emit(ctx, p, &j, "embedding");
}

/* One dispatch of shaders/index_copy.wgsl, a thread a word: the COPY pass
 * (idx NULL) or the scatter. */
static wgnn_status index_copy_dispatch(wgnn_context *ctx, wgnn__plan *p, const index_copy_params *ip, WGPUBuffer src,
                                       uint64_t src_bytes, WGPUBuffer dst, uint64_t dst_bytes, WGPUBuffer idx,
                                       const char *what) {
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 64), gx, gy;
    wgnn__const consts[2] = {{"WG", wg}, {"COPY", idx ? 0 : 1}};
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "index_copy", WGNN__PARAMS_WGSL(INDEX_COPY_PARAMS), consts, 2, &pipe);
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, ((uint64_t)ip->n_threads + wg - 1) / wg,
                                             ctx->limits.maxComputeWorkgroupsPerDimension, what, &gx, &gy);
    if (s != WGNN_OK) return s;
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, ip, sizeof *ip, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind(d, src, 0, src_bytes);
    wgnn__plan_bind(d, dst, 0, dst_bytes);
    wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, idx, false), 0, 0);
    wgnn__plan_bind(d, wgnn__data_error_buffer(ctx), 0, 0);
    return WGNN_OK;
}

wgnn_status wgnn__plan_copy_words(wgnn_context *ctx, wgnn__plan *p, WGPUBuffer src, WGPUBuffer dst, uint64_t words) {
    if (words > UINT32_MAX || words * 4u > ctx->limits.maxStorageBufferBindingSize)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "copy: %llu bytes pass the device's maxStorageBufferBindingSize (%llu)",
                         (unsigned long long)(words * 4u), (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    index_copy_params ip = {(uint32_t)words, 0, 0, 0};
    return index_copy_dispatch(ctx, p, &ip, src, words * 4u, dst, words * 4u, NULL, "copy");
}

/* index_copy: whole tensors bound (each must fit one storage binding), out
 * over self (wgnn__op_plan copied self into out first when they are two
 * tensors): the scatter of source's rows only. */
static wgnn_status plan_index_copy(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                   wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_desc *x = &n->in[0];
    int dim;
    wgnn__norm_dim(n->arg[WGNN__INDEX_COPY_DIM].i[0], x->rank, &dim);
    uint64_t inner = 1, outer = 1;
    for (int d = 0; d < dim; d++) outer *= (uint64_t)x->dims[d];
    for (int d = dim + 1; d < x->rank; d++) inner *= (uint64_t)x->dims[d];
    uint64_t inner_w = inner * wgnn_dtype_size(x->dtype) / 4u, n_idx = (uint64_t)n->in[1].dims[0];
    uint64_t lim = ctx->limits.maxStorageBufferBindingSize;
    if (out[0]->buf_size > lim || in[2]->buf_size > lim)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "index_copy: self (%llu bytes) or source (%llu bytes) passes the device's "
                         "maxStorageBufferBindingSize (%llu bytes)",
                         (unsigned long long)out[0]->nbytes, (unsigned long long)in[2]->nbytes,
                         (unsigned long long)lim);
    uint64_t threads = outer * n_idx * inner_w;
    if (threads > UINT32_MAX) return wgnn__err(ctx, WGNN_ERR_LIMIT, "index_copy: more than 2^32 words");
    index_copy_params ip = {(uint32_t)threads, (uint32_t)x->dims[dim], (uint32_t)n_idx, (uint32_t)inner_w};
    return index_copy_dispatch(ctx, p, &ip, in[2]->buf, 0, out[0]->buf, 0, in[1]->buf, "index_copy");
}

/* ---- the rows ---------------------------------------------------------------- */

static const wgnn_op_arg_info k_slice_args[] = {
    {"dim", "int", "0", "the dim sliced; negative counts from the end"},
    {"start", "int", "", "first index (default 0); negative counts from the end; clamped into [0, size]"},
    {"end", "int", "", "one past the last index (default: size); negative counts from the end; clamped"},
    {"step", "int", "1", "distance between the indices taken, > 0"},
};
static const wgnn_op_arg_info k_split_args[] = {
    {"split_sizes", "int[]", NULL, "size of each piece along dim (1 to 16 pieces, each >= 1); they sum to its size"},
    {"dim", "int", "0", "the dim split; negative counts from the end"},
};
static const wgnn_op_arg_info k_permute_args[] = {
    {"dims", "int[]", NULL, "output dim i is self's dim dims[i]; a permutation, negative values count from the end"},
};
static const wgnn_op_arg_info k_cat_args[] = {
    {"dim", "int", "0", "the dim joined along; negative counts from the end"},
};
static const wgnn_op_arg_info k_index_copy_args[] = {
    {"dim", "int", NULL, "the dim indexed; negative counts from the end"},
};
static const wgnn_op_arg_info k_pad_args[] = {
    {"pad", "int[]", NULL,
     "(before, after) pairs from the last dim backwards, as torch.nn.functional.pad; negative values crop"},
    {"value", "float", "0", "fill value (int32: truncated toward zero)"},
};

const wgnn__op wgnn__op_slice = {
    {"slice", "self[start:end:step] along dim, copied (Python slice bounds)", "self",
     "self [..., N, ...] -> [..., len, ...], len = ceil((end - start) / step) after start and end are clamped into "
     "[0, N]; len 0 is an error; any dtype",
     1, 1, 4, k_slice_args},
    check_slice,
    plan_slice,
    wgnn__ref_slice,
    false,
};

const wgnn__op wgnn__op_split_with_sizes = {
    {"split_with_sizes", "self cut along dim into pieces of the given sizes, one output each", "self",
     "self [..., N, ...] -> [..., s_i, ...] for each s_i of split_sizes (sum s_i = N); any dtype", 1, 1, 2,
     k_split_args},
    check_split,
    plan_split,
    wgnn__ref_split_with_sizes,
    false,
};

const wgnn__op wgnn__op_permute = {
    {"permute", "self's dims reordered (a transposed copy)", "self",
     "self [d_0, ..., d_{r-1}] -> [d_dims[0], ..., d_dims[r-1]]; any dtype", 1, 1, 1, k_permute_args},
    check_permute,
    plan_permute,
    wgnn__ref_permute,
    false,
};

const wgnn__op wgnn__op_cat = {
    {"cat", "tensors joined along dim", "tensors... (1 to 16)",
     "tensors [..., N_i, ...], one dtype, equal dims but dim -> [..., sum N_i, ...]", 1, WGNN__MAX_IN, 1, k_cat_args},
    check_cat,
    plan_cat,
    wgnn__ref_cat,
    false,
};

const wgnn__op wgnn__op_constant_pad_nd = {
    {"constant_pad_nd", "self padded with a constant (torch.nn.functional.pad, mode constant); negative pads crop",
     "self",
     "self [..., N_k, ...] -> [..., N_k + before_k + after_k, ...] for the last len(pad)/2 dims; every size >= 1; "
     "any dtype",
     1, 1, 2, k_pad_args},
    check_pad,
    plan_pad,
    wgnn__ref_constant_pad_nd,
    false,
};

const wgnn__op wgnn__op_embedding = {
    {"embedding", "rows of weight picked by indices (a lookup table)", "weight, indices",
     "weight [V, D] (any dtype), indices int32 of any shape (rank <= 7), values in [0, V) -> indices.shape + [D]; "
     "on the GPU an index out of range gives a row of zeros (see docs/OPS.md), the reference an error",
     2, 2, 0, NULL},
    check_embedding,
    plan_embedding,
    wgnn__ref_embedding,
    false,
};

const wgnn__op wgnn__op_index_copy = {
    {"index_copy", "self with the rows index of dim replaced by source's rows (aten::index_copy, index_copy_)",
     "self, index, source",
     "self [..., N, ...] (any dtype), index int32 [n] with values in [0, N), source = self's shape with n at dim "
     "-> self's shape; passing self as the output (in place, a KV cache) writes only the indexed rows; repeated "
     "indices leave which row wins undefined (as PyTorch); on the GPU an index out of range writes nothing and "
     "is reported by the next sync, the reference gives an error",
     3, 3, 1, k_index_copy_args},
    check_index_copy,
    plan_index_copy,
    wgnn__ref_index_copy,
    WGNN__INPLACE(0, 0),
};
