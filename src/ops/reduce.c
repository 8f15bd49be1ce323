/* reduce.c - the reduce family's rows: reductions of a row to an index.
 *
 * argmax (torch.argmax over one dim) runs shaders/argmax.wgsl with the row
 * layout of reduce_rows (L threads a row, R rows a workgroup; a dim that is
 * not the last read with strides, no transpose). sample (wgnn's own row for
 * LLM token sampling: temperature, top-k, top-p, and the caller's uniform
 * number) runs shaders/sample.wgsl, one workgroup a row. Both compare
 * logits through u32 keys ordered like the floats (shaders/common/key.wgsl),
 * so ties and NaN follow one rule on every driver. Outputs are int32
 * (PyTorch's argmax gives int64). */
#include "norm.h"

#include "ref/reduce_ref.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ARGMAX_PARAMS(X, S)                                                                           \
    X(S, u32, n_groups) /* workgroups of this dispatch (2-D fold) */                                 \
    X(S, u32, n_rows)   /* contiguous: rows of this dispatch */                                       \
    X(S, u32, n)        /* row length in XV units */                                                  \
    X(S, u32, inner)    /* strided: distance between a row's values, and columns per outer index */  \
    X(S, u32, tiles)    /* strided: workgroups per outer index, ceil(inner / R) */
#define SAMPLE_PARAMS(X, S)                                            \
    X(S, u32, n_rows)      /* rows (workgroups) of this dispatch */    \
    X(S, u32, n)           /* V */                                     \
    X(S, u32, chunk)       /* ceil(V / WG): a thread's run of the row */ \
    X(S, u32, top_k)       /* 0: off */                                \
    X(S, f32, top_p)       /* 1: off */                                \
    X(S, f32, temperature)                                             \
    X(S, u32, row0)        /* the dispatch's first row (data-error reports) */
#define ARGMAX_SPLIT_PARAMS(X, S) X(S, u32, n_groups) X(S, u32, n) X(S, u32, chunk) X(S, u32, split)
WGNN__PARAMS_STRUCT(argmax_params, ARGMAX_PARAMS);
WGNN__PARAMS_STRUCT(argmax_split_params, ARGMAX_SPLIT_PARAMS);
WGNN__PARAMS_CHECK(argmax_split_params, ARGMAX_SPLIT_PARAMS)
WGNN__PARAMS_STRUCT(sample_params, SAMPLE_PARAMS);
WGNN__PARAMS_CHECK(argmax_params, ARGMAX_PARAMS)
WGNN__PARAMS_CHECK(sample_params, SAMPLE_PARAMS)

/* Counts of kept tokens are f32 in the sample kernel: exact up to 2^24. */
#define SAMPLE_MAX_V (1ll << 24)

/* ---- argmax ------------------------------------------------------------------ */

static wgnn_status argmax_check(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    if (x->dtype != WGNN_F32 && x->dtype != WGNN_I32)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "self is %s; argmax takes float32 or int32",
                              wgnn_dtype_name(x->dtype));
    int64_t dim = n->arg[WGNN__ARGMAX_DIM].i[0];
    int r = x->rank > 0 ? x->rank : 1; /* a 0-d tensor takes dim 0 or -1, as in PyTorch */
    int d;
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (!wgnn__norm_dim(dim, r, &d))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "dim=%lld is out of range for self %s: expected %d..%d",
                              (long long)dim, xs, -r, r - 1);
    if (x->rank > 0 && x->dims[d] > INT32_MAX)
        return wgnn__node_err(n, WGNN_ERR_LIMIT, "dim %d of self %s is longer than an int32 index reaches", d, xs);
    wgnn_desc o = {WGNN_I32, 0, {0}};
    bool keep = n->arg[WGNN__ARGMAX_KEEPDIM].i[0] != 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != d) o.dims[o.rank++] = x->dims[i];
        else if (keep) o.dims[o.rank++] = 1;
    }
    n->n_out = 1;
    n->out[0] = o;
    return WGNN_OK;
}

/* The row layout: contiguous rows (inner 1) get L threads a row, each
 * scanning about 8 XVs of short rows, up to the whole workgroup for long
 * ones (151936 logits: 256 threads, 148 vec4 each); strided columns L lanes
 * down a column times R neighbouring columns, as reduce_rows. */
typedef struct argmax_cfg {
    uint32_t vec, wg, l, r;
    bool strided;
} argmax_cfg;

static void argmax_config(const wgnn_context *ctx, uint64_t n, uint64_t inner, argmax_cfg *c) {
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    memset(c, 0, sizeof *c);
    c->strided = inner > 1;
    if (!c->strided) {
        c->vec = n % 4 == 0 ? 4 : 1;
        c->l = wgnn__pow2_ceil((n / c->vec + 7) / 8);
        if (c->l > wg) c->l = wg;
        c->r = wg / c->l;
    } else {
        c->vec = 1;
        c->l = wgnn__pow2_ceil((n + 3) / 4);
        if (c->l > 32) c->l = 32;
        if (c->l > wg) c->l = wg;
        c->r = wgnn__pow2_ceil(inner);
        if (c->r > wg / c->l) c->r = wg / c->l;
    }
    c->wg = c->l * c->r;
}

/* Long contiguous rows, few of them (an LLM's logits): shaders/
 * argmax_split.wgsl, chunks of 4 vec4 a thread in parallel, then one
 * workgroup a row over the chunks' bests (the H200: 151936 logits took 88 us
 * as one workgroup's walk). *done false: not this route. */
#define ARGMAX_SPLIT_MIN 16384u
static wgnn_status argmax_split_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                     wgnn_tensor *const *out, wgnn__plan *p, uint64_t outer, uint64_t len,
                                     bool *done) {
    *done = false;
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256), vec = len % 4 == 0 ? 4u : 1u;
    uint64_t units = len / vec, chunk = (uint64_t)wg * 4u, split = (units + chunk - 1) / chunk;
    uint64_t lim = ctx->limits.maxStorageBufferBindingSize, groups = outer * split;
    if (in[0]->nbytes > lim || groups * 8u > lim || groups > UINT32_MAX || units > UINT32_MAX) return WGNN_OK;
    int sc = wgnn__plan_scratch(p, groups * 8u);
    if (sc < 0) return WGNN_OK;
    *done = true;
    for (uint32_t pass = 1; pass <= 2; pass++) {
        char pre[1024];
        snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\nconst VEC: u32 = %uu;\nconst INT: bool = %s;\nconst PASS: u32 = %uu;\n%s",
                 WGNN__PARAMS_WGSL(ARGMAX_SPLIT_PARAMS), wg, vec, in[0]->dtype == WGNN_I32 ? "true" : "false", pass,
                 vec == 4 ? "alias XV = vec4<u32>;\nfn comp(v: XV, c: u32) -> u32 { return v[c]; }\n"
                          : "alias XV = u32;\nfn comp(v: XV, c: u32) -> u32 { return v; }\n");
        const wgnn__pipe *pipe;
        uint64_t ng = pass == 1 ? groups : outer;
        uint32_t gx, gy;
        wgnn_status s = wgnn__pipeline(ctx, "argmax_split", pre, NULL, 0, &pipe);
        if (s == WGNN_OK)
            s = wgnn__compute_2d_workgroup_count(ctx, ng, ctx->limits.maxComputeWorkgroupsPerDimension, "argmax", &gx,
                                                 &gy);
        if (s != WGNN_OK) return s;
        argmax_split_params q = {(uint32_t)ng, (uint32_t)units, (uint32_t)chunk, (uint32_t)split};
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        wgnn__plan_bind(d, in[0]->buf, 0, 0);
        wgnn__plan_bind_scratch(d, (uint32_t)sc, 0, groups * 8u);
        wgnn__plan_bind(d, out[0]->buf, 0, 0);
    }
    (void)n;
    return WGNN_OK;
}

static wgnn_status argmax_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                               wgnn_tensor *const *out, wgnn__plan *p) {
    uint64_t outer, len, inner;
    wgnn__argmax_layout(n, &outer, &len, &inner);
    if (inner == 1 && len >= ARGMAX_SPLIT_MIN && outer <= 64) {
        bool done;
        wgnn_status s = argmax_split_plan(ctx, n, in, out, p, outer, len, &done);
        if (s != WGNN_OK || done) return s;
    }
    argmax_cfg c;
    argmax_config(ctx, len, inner, &c);
    char pre[1024];
    snprintf(pre, sizeof pre,
             "%sconst WG: u32 = %uu;\nconst L: u32 = %uu;\nconst R: u32 = %uu;\nconst VEC: u32 = %uu;\n"
             "const STRIDED: bool = %s;\nconst INT: bool = %s;\n%s",
             WGNN__PARAMS_WGSL(ARGMAX_PARAMS), c.wg, c.l, c.r, c.vec, c.strided ? "true" : "false",
             in[0]->dtype == WGNN_I32 ? "true" : "false",
             c.vec == 4 ? "alias XV = vec4<u32>;\nfn comp(v: XV, c: u32) -> u32 { return v[c]; }\n"
                        : "alias XV = u32;\nfn comp(v: XV, c: u32) -> u32 { return v; }\n");
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "argmax", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;
    /* units: outer indices (contiguous: rows) */
    uint64_t ub[2] = {len * inner * 4u, inner * 4u};
    uint64_t per = wgnn__units_per_binding(ctx, ub, 2, outer);
    if (per == 0) return wgnn__split_err(ctx, "argmax", inner > 1 ? "block of the dims from dim on" : "row", ub[0]);
    for (uint64_t u0 = 0; u0 < outer; u0 += per) {
        uint64_t cnt = outer - u0 < per ? outer - u0 : per;
        argmax_params q;
        memset(&q, 0, sizeof q);
        uint64_t groups;
        if (c.strided) {
            uint64_t tiles = (inner + c.r - 1) / c.r;
            groups = cnt * tiles;
            q.tiles = (uint32_t)tiles;
        } else {
            groups = (cnt + c.r - 1) / c.r;
        }
        q.n_groups = (uint32_t)groups;
        q.n_rows = (uint32_t)cnt;
        q.n = (uint32_t)(len / c.vec);
        q.inner = (uint32_t)inner;
        uint32_t gx, gy;
        s = wgnn__compute_2d_workgroup_count(ctx, groups, ctx->limits.maxComputeWorkgroupsPerDimension, "argmax", &gx,
                                             &gy);
        if (s != WGNN_OK) return s;
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        wgnn__plan_bind(d, in[0]->buf, u0 * ub[0], cnt * ub[0]);
        wgnn__plan_bind(d, out[0]->buf, u0 * ub[1], cnt * ub[1]);
    }
    return WGNN_OK;
}

/* ---- sample ------------------------------------------------------------------ */

static wgnn_status sample_check(wgnn__node *n) {
    static const char *const names[2] = {"logits", "u"};
    for (int i = 0; i < 2; i++)
        if (n->in[i].dtype != WGNN_F32)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; sample takes float32 only", names[i],
                                  wgnn_dtype_name(n->in[i].dtype));
    const wgnn_desc *x = &n->in[0], *u = &n->in[1];
    char xs[160], us[160];
    wgnn__dims_str(x, xs, sizeof xs);
    wgnn__dims_str(u, us, sizeof us);
    if (x->rank != 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "logits is %s (rank %d); it must be [B, V]", xs, x->rank);
    if (u->rank != 1 || u->dims[0] != x->dims[0])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "u is %s; it must be [B] = [%lld] (B: dim 0 of logits %s)",
                              us, (long long)x->dims[0], xs);
    if (x->dims[1] > SAMPLE_MAX_V)
        return wgnn__node_err(n, WGNN_ERR_LIMIT, "logits %s has V=%lld tokens; sample takes at most 2^24 = %lld", xs,
                              (long long)x->dims[1], (long long)SAMPLE_MAX_V);
    double t = n->arg[WGNN__SAMPLE_TEMPERATURE].f, tp = n->arg[WGNN__SAMPLE_TOP_P].f;
    int64_t k = n->arg[WGNN__SAMPLE_TOP_K].i[0];
    if (!(t > 0) || !isfinite(t) || !isfinite((float)t) || (float)t == 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "temperature=%g must be a finite float32 > 0 (for greedy decoding use argmax)", t);
    if (k < 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "top_k=%lld must be >= 0 (0: no top-k)", (long long)k);
    if (!(tp > 0 && tp <= 1))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "top_p=%g must be in (0, 1] (1: no top-p)", tp);
    n->n_out = 1;
    n->out[0] = (wgnn_desc){WGNN_I32, 1, {x->dims[0]}};
    return WGNN_OK;
}

static wgnn_status sample_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                               wgnn_tensor *const *out, wgnn__plan *p) {
    uint64_t rows = (uint64_t)in[0]->dims[0], v = (uint64_t)in[0]->dims[1];
    /* the [16][WG] table, the reduction arrays, 16 bucket totals, the pick */
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    while (wg > 16 && (uint64_t)wg * 18 * 4 + 80 > ctx->limits.maxComputeWorkgroupStorageSize) wg /= 2;
    char pre[512];
    snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\n", WGNN__PARAMS_WGSL(SAMPLE_PARAMS), wg);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "sample", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t ub[3] = {v * 4u, 4u, 4u};
    uint64_t per = wgnn__units_per_binding(ctx, ub, 3, rows);
    if (per == 0) return wgnn__split_err(ctx, "sample", "row of logits", ub[0]);
    int64_t k = n->arg[WGNN__SAMPLE_TOP_K].i[0];
    for (uint64_t r0 = 0; r0 < rows; r0 += per) {
        uint64_t cnt = rows - r0 < per ? rows - r0 : per;
        sample_params q = {(uint32_t)cnt,
                           (uint32_t)v,
                           (uint32_t)((v + wg - 1) / wg),
                           (uint32_t)(k > 0 && (uint64_t)k < v ? k : 0),
                           (float)n->arg[WGNN__SAMPLE_TOP_P].f,
                           (float)n->arg[WGNN__SAMPLE_TEMPERATURE].f,
                           (uint32_t)r0};
        uint32_t gx, gy;
        s = wgnn__compute_2d_workgroup_count(ctx, cnt, ctx->limits.maxComputeWorkgroupsPerDimension, "sample", &gx,
                                             &gy);
        if (s != WGNN_OK) return s;
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        for (int i = 0; i < 2; i++) wgnn__plan_bind(d, in[i]->buf, r0 * ub[i], cnt * ub[i]);
        wgnn__plan_bind(d, out[0]->buf, r0 * ub[2], cnt * ub[2]);
        wgnn__plan_bind(d, wgnn__data_error_buffer(ctx), 0, 0);
    }
    return WGNN_OK;
}

/* ---- rows ---------------------------------------------------------------------- */

static const wgnn_op_arg_info k_argmax_args[] = {
    {"dim", "int", NULL, "the dim to reduce; negative counts from the end (required: no flattened argmax)"},
    {"keepdim", "bool", "false", "keep dim as a dim of size 1"},
};

const wgnn__op wgnn__op_argmax = {
    {"argmax",
     "index of the largest value along dim, as torch.argmax: the first maximum; NaN counts as the largest "
     "(the first NaN); int32 indices (PyTorch: int64)",
     "self", "self [...] float32 or int32 -> self's shape without dim (keepdim: dim of size 1), int32", 1, 1, 2,
     k_argmax_args},
    argmax_check,
    argmax_plan,
    wgnn__ref_argmax,
    false,
};

static const wgnn_op_arg_info k_sample_args[] = {
    {"temperature", "float", "1", "divides the logits: p = softmax(logits / temperature); > 0 (greedy: use argmax)"},
    {"top_k", "int", "0",
     "keep the tokens whose logit >= the top_k-th largest logit (ties at it all kept); 0 or >= V: all"},
    {"top_p", "float", "1",
     "then keep the tokens whose logit >= t, t the largest logit such that the kept tokens with logit >= t hold "
     ">= top_p of the kept probability; in (0, 1], 1: all"},
};

const wgnn__op wgnn__op_sample = {
    {"sample",
     "one token id a row drawn from softmax(logits / temperature) after top-k and top-p, with the caller's "
     "uniform number u: the first kept token (index order) whose cumulative kept probability exceeds u * the "
     "kept total (wgnn's row, no aten op)",
     "logits, u",
     "logits [B, V] float32 (finite or -inf), u [B] float32 in [0, 1) -> [B] int32; V <= 2^24", 2, 2, 3,
     k_sample_args},
    sample_check,
    sample_plan,
    wgnn__ref_sample,
    false,
};
