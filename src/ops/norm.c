/* norm.c - the norm family's rows: softmax, layer_norm, rms_norm, batch_norm.
 *
 * softmax, layer_norm and rms_norm run shaders/reduce_rows.wgsl, one kernel
 * with variants (prelude consts): one row per L threads, the row kept in
 * registers when it fits (read once, written once), vec4 loads when the row
 * length is a multiple of 4, subgroup shuffles for the reductions where the
 * subgroup size is fixed. Short rows share a workgroup: rms_norm's rows of
 * 128 (Qwen3's per-head q/k norm) take 8 threads a row (4 vec4 each), 32
 * rows a workgroup. softmax over a dim that is not the last reads the
 * tensor as (outer, n, inner) with strides, no transpose. batch_norm
 * (inference) is a per-channel affine map, shaders/batch_norm.wgsl.
 * Every op splits its dispatches over rows (offset bindings) where a tensor
 * passes one storage binding. float32 only. */
#include "norm.h"

#include "ref/norm_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define ROWS_PARAMS(X, S)                                                                            \
    X(S, u32, n_groups) /* workgroups of this dispatch (2-D fold) */                                \
    X(S, u32, n_rows)   /* contiguous: rows of this dispatch */                                      \
    X(S, u32, n)        /* row length in V units */                                                  \
    X(S, u32, inner)    /* strided: distance between a row's values, and columns per outer index */ \
    X(S, u32, tiles)    /* strided: workgroups per outer index, ceil(inner / R) */                   \
    X(S, f32, count)    /* row length in elements */                                                 \
    X(S, f32, eps)                                                                                   \
    X(S, f32, empty)    /* softmax of a row that is -inf everywhere */
#define BN_PARAMS(X, S) X(S, u32, n_items) X(S, u32, s) X(S, u32, c) X(S, f32, eps)
WGNN__PARAMS_STRUCT(rows_params, ROWS_PARAMS);
WGNN__PARAMS_STRUCT(bn_params, BN_PARAMS);
WGNN__PARAMS_CHECK(rows_params, ROWS_PARAMS)
WGNN__PARAMS_CHECK(bn_params, BN_PARAMS)

/* 4-byte values a thread keeps in registers at most; longer rows are read
 * again in each phase. */
#define ROW_CACHE 32u

/* ---- shared helpers --------------------------------------------------------- */

uint64_t wgnn__units_per_binding(const wgnn_context *ctx, const uint64_t *unit_bytes, int n, uint64_t total) {
    uint64_t cap = ctx->limits.maxStorageBufferBindingSize;
    if (cap > 0xFFFFFFFCull) cap = 0xFFFFFFFCull; /* u32 indices in the shaders */
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 256;
    bool fits = true;
    for (int i = 0; i < n; i++) {
        if (!unit_bytes[i]) continue;
        if (unit_bytes[i] > cap) return 0;
        if (total > cap / unit_bytes[i]) fits = false;
    }
    if (fits) return total;
    uint64_t most = total, step = 1;
    for (int i = 0; i < n; i++) {
        if (!unit_bytes[i]) continue;
        if (cap / unit_bytes[i] < most) most = cap / unit_bytes[i];
        uint64_t st = align / wgnn__gcd_u64(unit_bytes[i], align);
        step = wgnn__lcm_u64(step, st);
    }
    return most / step * step;
}

wgnn_status wgnn__split_err(wgnn_context *ctx, const char *what, const char *unit_name, uint64_t unit_bytes) {
    return wgnn__err(ctx, WGNN_ERR_LIMIT,
                     "%s: the tensor passes the device's maxStorageBufferBindingSize (%llu bytes) and cannot be "
                     "split: one %s is %llu bytes, and slices must start at multiples of "
                     "minStorageBufferOffsetAlignment (%u bytes)",
                     what, (unsigned long long)ctx->limits.maxStorageBufferBindingSize, unit_name,
                     (unsigned long long)unit_bytes, ctx->limits.minStorageBufferOffsetAlignment);
}

/* ---- reduce_rows ------------------------------------------------------------- */

typedef enum { ROWS_SOFTMAX = 0, ROWS_LAYER_NORM = 1, ROWS_RMS_NORM = 2 } rows_op;

/* A reduce_rows variant (see the shader's header). */
typedef struct rows_cfg {
    uint32_t vec;    /* 4: vec4 loads (contiguous rows of a multiple of 4) */
    uint32_t wg, l, r, k, sg;
    bool cached, strided;
} rows_cfg;

/* One job: outer x n x inner values (inner 1: contiguous rows). */
typedef struct rows_job {
    rows_op op;
    uint64_t outer, n, inner;
    float eps, empty;
    wgnn__binding x, y;
    WGPUBuffer w, b; /* layer_norm's weight and bias (rms_norm's weight), or NULL */
} rows_job;

/* Threads per row (L) so that each keeps about 4 V's of it; rows per
 * workgroup R filling 256 threads; strided columns: L lanes down a column
 * times R neighbouring columns (up to 32 for whole 128-byte lines). */
static void rows_config(const wgnn_context *ctx, uint64_t n, uint64_t inner, rows_cfg *c) {
    const WGPULimits *lim = &ctx->limits;
    uint64_t most = lim->maxComputeInvocationsPerWorkgroup;
    if (lim->maxComputeWorkgroupSizeX < most) most = lim->maxComputeWorkgroupSizeX;
    uint32_t lmax = wgnn__pow2_floor(most < 1024 ? most : 1024);
    memset(c, 0, sizeof *c);
    c->strided = inner > 1;
    if (!c->strided) {
        c->vec = n % 4 == 0 ? 4 : 1;
        uint64_t nv = n / c->vec;
        c->l = wgnn__pow2_ceil((nv + 3) / 4);
        if (c->l > lmax) c->l = lmax;
        c->wg = c->l > 256 ? c->l : (lmax < 256 ? lmax : 256);
    } else {
        c->vec = 1;
        c->l = wgnn__pow2_ceil((n + 3) / 4);
        if (c->l > 32) c->l = 32;
        if (c->l > lmax) c->l = lmax;
        uint32_t rmax = 256 / c->l > 8 ? 256 / c->l : 8;
        uint32_t r = wgnn__pow2_ceil(inner);
        if (r > rmax) r = rmax;
        while ((uint64_t)r * c->l > lmax && r > 1) r /= 2;
        c->wg = r * c->l;
    }
    c->r = c->wg / c->l;
    uint64_t kk = (n / c->vec + c->l - 1) / c->l;
    c->cached = kk * c->vec <= ROW_CACHE;
    c->k = c->cached ? wgnn__pow2_ceil(kk) : 1;
    if (!c->strided) c->sg = wgnn__row_lanes_subgroup(ctx, c->l, c->wg);
}

/* Subgroup reductions over a contiguous row's lanes: needs one fixed
 * subgroup size and subgroups made of consecutive invocations in order,
 * which WGSL does not promise but NVIDIA's and lavapipe's drivers do (as
 * sdpa_fused's row maxima rely on); checked against the reference. */
uint32_t wgnn__row_lanes_subgroup(const wgnn_context *ctx, uint32_t lanes, uint32_t wg) {
    uint32_t sg = ctx->info.subgroup_min_size;
    if (lanes > 1 && ctx->has_subgroups && sg == ctx->info.subgroup_max_size && sg >= 4 && (sg & (sg - 1)) == 0 &&
        wg % sg == 0)
        return sg;
    return 0;
}

const char *wgnn__lanes_reduce_wgsl(uint32_t sg) {
    return sg ? "fn lanes_reduce(v: f32, mx: bool) -> f32 {\n"
                "    var x = v;\n"
                "    for (var o = 1u; o < min(L, SG); o = o * 2u) { x = comb(x, subgroupShuffleXor(x, o), mx); }\n"
                "    return x;\n"
                "}\n"
              : "fn lanes_reduce(v: f32, mx: bool) -> f32 { return v; }\n";
}

static wgnn_status rows_pipeline(wgnn_context *ctx, const rows_job *j, const rows_cfg *c, const wgnn__pipe **out) {
    static const char *const vec_fns[2] = {
        "alias V = f32;\n"
        "fn vsum(v: V) -> f32 { return v; }\n"
        "fn vmax(v: V) -> f32 { return v; }\n"
        "fn vfirst(v: V) -> f32 { return v; }\n",
        "alias V = vec4<f32>;\n"
        "fn vsum(v: V) -> f32 { return (v.x + v.y) + (v.z + v.w); }\n"
        "fn vmax(v: V) -> f32 { return max(max(v.x, v.y), max(v.z, v.w)); }\n"
        "fn vfirst(v: V) -> f32 { return v.x; }\n"};
    const char *affine = "fn affine(y: V, j: u32) -> V { return y; }\n";
    if (j->w && j->b)
        affine = "@group(0) @binding(3) var<storage, read> W: array<V>;\n"
                 "@group(0) @binding(4) var<storage, read> B: array<V>;\n"
                 "fn affine(y: V, j: u32) -> V { return y * W[j] + B[j]; }\n";
    else if (j->w)
        affine = "@group(0) @binding(3) var<storage, read> W: array<V>;\n"
                 "fn affine(y: V, j: u32) -> V { return y * W[j]; }\n";
    char pre[2048];
    int len = snprintf(pre, sizeof pre,
                       "%s%sconst OP: u32 = %uu;\nconst WG: u32 = %uu;\nconst L: u32 = %uu;\nconst R: u32 = %uu;\n"
                       "const K: u32 = %uu;\nconst SG: u32 = %uu;\nconst CACHED: bool = %s;\n"
                       "const STRIDED: bool = %s;\n%s%s%s",
                       c->sg ? "enable subgroups;\n" : "", WGNN__PARAMS_WGSL(ROWS_PARAMS), (unsigned)j->op, c->wg, c->l, c->r, c->k, c->sg,
                       c->cached ? "true" : "false", c->strided ? "true" : "false", vec_fns[c->vec == 4],
                       wgnn__lanes_reduce_wgsl(c->sg), affine);
    if (len < 0 || (size_t)len >= sizeof pre)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "reduce_rows: prelude too long");
    return wgnn__pipeline(ctx, "reduce_rows", pre, NULL, 0, out);
}

static wgnn_status plan_rows(wgnn_context *ctx, wgnn__plan *p, const rows_job *j, const char *what) {
    rows_cfg c;
    rows_config(ctx, j->n, j->inner, &c);
    const wgnn__pipe *pipe;
    wgnn_status s = rows_pipeline(ctx, j, &c, &pipe);
    if (s != WGNN_OK) return s;
    /* units: contiguous rows, or strided blocks of n * inner values */
    uint64_t unit = j->n * j->inner * 4u;
    uint64_t ub[2] = {unit, unit};
    uint64_t per = wgnn__units_per_binding(ctx, ub, 2, j->outer);
    if (per == 0)
        return wgnn__split_err(ctx, what, j->inner > 1 ? "block of the dims from dim on" : "row", unit);
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    for (uint64_t u0 = 0; u0 < j->outer; u0 += per) {
        uint64_t cnt = j->outer - u0 < per ? j->outer - u0 : per;
        rows_params q;
        memset(&q, 0, sizeof q);
        uint64_t groups;
        if (c.strided) {
            uint64_t tiles = (j->inner + c.r - 1) / c.r;
            groups = cnt * tiles;
            q.tiles = (uint32_t)tiles;
        } else {
            groups = (cnt + c.r - 1) / c.r;
        }
        q.n_groups = (uint32_t)groups;
        q.n_rows = (uint32_t)cnt;
        q.n = (uint32_t)(j->n / c.vec);
        q.inner = (uint32_t)j->inner;
        q.count = (float)j->n;
        q.eps = j->eps;
        q.empty = j->empty;
        uint32_t gx, gy;
        s = wgnn__compute_2d_workgroup_count(ctx, groups, maxd, what, &gx, &gy);
        if (s != WGNN_OK) return s;
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        wgnn__plan_bind_range(d, &j->x, u0 * unit, cnt * unit);
        wgnn__plan_bind_range(d, &j->y, u0 * unit, cnt * unit);
        if (j->w) wgnn__plan_bind(d, j->w, 0, 0);
        if (j->b) wgnn__plan_bind(d, j->b, 0, 0);
    }
    return WGNN_OK;
}

wgnn_status wgnn__softmax_rows(wgnn_context *ctx, wgnn__plan *p, uint64_t n_rows, uint64_t n_cols, float empty,
                               wgnn__binding src, wgnn__binding dst) {
    rows_job j = {.op = ROWS_SOFTMAX, .outer = n_rows, .n = n_cols, .inner = 1, .empty = empty, .x = src, .y = dst};
    return plan_rows(ctx, p, &j, "softmax rows");
}

/* ---- checks ----------------------------------------------------------------- */

static wgnn_status need_f32(wgnn__node *n, int i, const char *name) {
    if (n->in[i].dtype == WGNN_F32) return WGNN_OK;
    return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; %s takes float32 only", name,
                          wgnn_dtype_name(n->in[i].dtype), n->op->info.name);
}

static wgnn_status check_eps(wgnn__node *n, double eps) {
    if (!isfinite(eps) || eps < 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "eps=%g must be finite and >= 0", eps);
    return WGNN_OK;
}

static wgnn_status softmax_check(wgnn__node *n) {
    wgnn_status s = need_f32(n, 0, "self");
    if (s != WGNN_OK) return s;
    const wgnn_desc *x = &n->in[0];
    int64_t dim = n->arg[WGNN__SOFTMAX_DIM].i[0];
    int r = x->rank > 0 ? x->rank : 1; /* a 0-d tensor takes dim 0 or -1, as in PyTorch */
    int d;
    if (!wgnn__norm_dim(dim, r, &d)) {
        char xs[160];
        wgnn__dims_str(x, xs, sizeof xs);
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "dim=%lld is out of range for self %s: expected %d..%d",
                              (long long)dim, xs, -r, r - 1);
    }
    n->n_out = 1;
    n->out[0] = *x;
    return WGNN_OK;
}

/* layer_norm and rms_norm: input [..., *normalized_shape], then weight (and
 * layer_norm's bias) of normalized_shape; eps >= 0 where given. */
static wgnn_status layer_norm_check(wgnn__node *n) {
    static const char *const names[3] = {"input", "weight", "bias"};
    for (int i = 0; i < n->n_in; i++) {
        wgnn_status s = need_f32(n, i, names[i]);
        if (s != WGNN_OK) return s;
    }
    const wgnn_desc *x = &n->in[0];
    const wgnn__arg *ns = &n->arg[WGNN__LN_SHAPE];
    wgnn_desc want = {WGNN_F32, ns->n, {0}};
    bool ok = ns->n >= 1 && ns->n <= x->rank && ns->n <= WGNN_MAX_RANK;
    for (int i = 0; ok && i < ns->n; i++) {
        want.dims[i] = ns->i[i];
        ok = ns->i[i] == x->dims[x->rank - ns->n + i];
    }
    char xs[160], ws[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (!ok) {
        if (ns->n < 1)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "normalized_shape is empty; it must name at least the last dim of input %s", xs);
        for (int i = 0; i < ns->n; i++)
            if (ns->i[i] < 1)
                return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                      "normalized_shape holds %lld; its dims must be >= 1 (the trailing dims of input %s)",
                                      (long long)ns->i[i], xs);
        char want_s[200] = "[*";
        size_t m = 2;
        for (int i = 0; i < ns->n && m < sizeof want_s; i++)
            m += (size_t)snprintf(want_s + m, sizeof want_s - m, ", %lld", (long long)ns->i[i]);
        if (m < sizeof want_s) snprintf(want_s + m, sizeof want_s - m, "]");
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "normalized_shape does not match the trailing dims of input %s: expected input of "
                              "shape %s",
                              xs, want_s);
    }
    wgnn__dims_str(&want, ws, sizeof ws);
    for (int i = 1; i < n->n_in; i++) {
        const wgnn_desc *t = &n->in[i];
        bool same = t->rank == want.rank;
        for (int k = 0; same && k < t->rank; k++) same = t->dims[k] == want.dims[k];
        if (!same) {
            char ts[160];
            wgnn__dims_str(t, ts, sizeof ts);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; it must be normalized_shape %s", names[i],
                                  ts, ws);
        }
    }
    wgnn_status s = check_eps(n, n->arg[WGNN__LN_EPS].f);
    if (s != WGNN_OK) return s;
    n->n_out = 1;
    n->out[0] = *x;
    return WGNN_OK;
}

static wgnn_status batch_norm_check(wgnn__node *n) {
    static const char *const names[5] = {"input", "weight", "bias", "running_mean", "running_var"};
    for (int i = 0; i < n->n_in; i++) {
        wgnn_status s = need_f32(n, i, names[i]);
        if (s != WGNN_OK) return s;
    }
    const wgnn_desc *x = &n->in[0];
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (x->rank < 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "input is %s (rank %d); it must be [N, C, ...], rank >= 2",
                              xs, x->rank);
    for (int i = 1; i < 5; i++) {
        const wgnn_desc *t = &n->in[i];
        if (t->rank != 1 || t->dims[0] != x->dims[1]) {
            char ts[160];
            wgnn__dims_str(t, ts, sizeof ts);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; it must be [C] = [%lld] (C: dim 1 of input %s)",
                                  names[i], ts, (long long)x->dims[1], xs);
        }
    }
    if (n->arg[WGNN__BN_TRAINING].i[0])
        return wgnn__node_err(n, WGNN_ERR_UNSUPPORTED,
                              "training=true (batch statistics) is not supported: batch_norm runs in inference mode, "
                              "with running_mean and running_var");
    wgnn_status s = check_eps(n, n->arg[WGNN__BN_EPS].f);
    if (s != WGNN_OK) return s;
    n->n_out = 1;
    n->out[0] = *x;
    return WGNN_OK;
}

/* ---- plans -------------------------------------------------------------------- */

static wgnn__binding whole(const wgnn_tensor *t) { return (wgnn__binding){t->buf, 0, 0, 0}; }

static wgnn_status softmax_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                wgnn_tensor *const *out, wgnn__plan *p) {
    rows_job j = {.op = ROWS_SOFTMAX, .empty = NAN, .x = whole(in[0]), .y = whole(out[0])};
    wgnn__softmax_layout(n, &j.outer, &j.n, &j.inner);
    return plan_rows(ctx, p, &j, "softmax");
}

/* layer_norm and rms_norm (the same argument layout; rms_norm's eps "none"
 * is float32's machine epsilon, as PyTorch). */
static wgnn_status layer_norm_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                   wgnn_tensor *const *out, wgnn__plan *p) {
    uint64_t len = 1;
    const wgnn__arg *ns = &n->arg[WGNN__LN_SHAPE];
    for (int i = 0; i < ns->n; i++) len *= (uint64_t)ns->i[i];
    bool rms = n->op == &wgnn__op_rms_norm;
    const wgnn__arg *eps = &n->arg[WGNN__LN_EPS];
    rows_job j = {.op = rms ? ROWS_RMS_NORM : ROWS_LAYER_NORM,
                  .outer = in[0]->numel / len,
                  .n = len,
                  .inner = 1,
                  .eps = eps->set ? (float)eps->f : FLT_EPSILON,
                  .x = whole(in[0]),
                  .y = whole(out[0]),
                  .w = n->n_in > 1 ? in[1]->buf : NULL,
                  .b = n->n_in > 2 ? in[2]->buf : NULL};
    return plan_rows(ctx, p, &j, n->op->info.name);
}

wgnn_status wgnn__plan_rms_rows(wgnn_context *ctx, wgnn__plan *p, wgnn__binding x, wgnn__binding y, uint64_t rows,
                                uint64_t n, float eps, WGPUBuffer w) {
    rows_job j = {.op = ROWS_RMS_NORM, .outer = rows, .n = n, .inner = 1, .eps = eps, .x = x, .y = y, .w = w};
    return plan_rows(ctx, p, &j, "rms_norm");
}

wgnn_status wgnn__plan_layer_norm_rows(wgnn_context *ctx, wgnn__plan *p, wgnn__binding x, wgnn__binding y,
                                      uint64_t rows, uint64_t n, float eps, WGPUBuffer w, WGPUBuffer b) {
    rows_job j = {.op = ROWS_LAYER_NORM, .outer = rows, .n = n, .inner = 1, .eps = eps, .x = x, .y = y, .w = w, .b = b};
    return plan_rows(ctx, p, &j, "layer_norm");
}

static wgnn_status batch_norm_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                   wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_tensor *x = in[0];
    uint64_t batch = (uint64_t)x->dims[0], c = (uint64_t)x->dims[1], sp = x->numel / (batch * c);
    uint32_t vec = sp % 4 == 0 ? 4 : 1;
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    char pre[512];
    snprintf(pre, sizeof pre, "%salias V = %s;\nconst WG: u32 = %uu;\n", WGNN__PARAMS_WGSL(BN_PARAMS),
             vec == 4 ? "vec4<f32>" : "f32", wg);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "batch_norm", pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t unit = c * sp * 4u; /* one sample */
    uint64_t ub[2] = {unit, unit};
    uint64_t per = wgnn__units_per_binding(ctx, ub, 2, batch);
    if (per == 0) return wgnn__split_err(ctx, "batch_norm", "sample (input[i])", unit);
    for (uint64_t b0 = 0; b0 < batch; b0 += per) {
        uint64_t cnt = batch - b0 < per ? batch - b0 : per;
        uint64_t items = cnt * c * sp / vec;
        bn_params q = {(uint32_t)items, (uint32_t)(sp / vec), (uint32_t)c, (float)n->arg[WGNN__BN_EPS].f};
        uint32_t gx, gy;
        s = wgnn__compute_2d_workgroup_count(ctx, (items + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                             "batch_norm", &gx, &gy);
        if (s != WGNN_OK) return s;
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        wgnn__plan_bind(d, x->buf, b0 * unit, cnt * unit);
        wgnn__plan_bind(d, out[0]->buf, b0 * unit, cnt * unit);
        for (int i = 1; i < 5; i++) wgnn__plan_bind(d, in[i]->buf, 0, 0);
    }
    return WGNN_OK;
}

/* ---- rows ----------------------------------------------------------------------- */

static const wgnn_op_arg_info k_softmax_args[] = {
    {"dim", "int", NULL, "the dim the softmax runs over; negative counts from the end"},
};

const wgnn__op wgnn__op_softmax = {
    {"softmax", "softmax over one dim: exp(x - max) / sum(exp(x - max)); a row that is -inf everywhere gives NaN",
     "self", "self [...] float32 -> self's shape", 1, 1, 1, k_softmax_args},
    softmax_check,
    softmax_plan,
    wgnn__ref_softmax,
    false,
};

static const wgnn_op_arg_info k_layer_norm_args[] = {
    {"normalized_shape", "int[]", NULL, "the trailing dims of input to normalize over"},
    {"eps", "float", "1e-5", "added to the variance inside the square root"},
};

const wgnn__op wgnn__op_layer_norm = {
    {"layer_norm", "layer normalization over the trailing dims: (x - mean) / sqrt(var + eps) * weight + bias",
     "input, [weight], [bias]",
     "input [..., *normalized_shape], weight and bias [*normalized_shape] -> input's shape; float32; biased variance",
     1, 3, 2, k_layer_norm_args},
    layer_norm_check,
    layer_norm_plan,
    wgnn__ref_layer_norm,
    false,
};

static const wgnn_op_arg_info k_rms_norm_args[] = {
    {"normalized_shape", "int[]", NULL, "the trailing dims of input to normalize over"},
    {"eps", "float", "",
     "added to mean(x^2) inside the square root; none: float32's machine epsilon 1.1920929e-07 "
     "(torch.finfo(torch.float32).eps), as PyTorch; Qwen3 passes 1e-6"},
};

const wgnn__op wgnn__op_rms_norm = {
    {"rms_norm", "RMS normalization over the trailing dims: x / sqrt(mean(x^2) + eps) * weight",
     "input, [weight]", "input [..., *normalized_shape], weight [*normalized_shape] -> input's shape; float32", 1, 2,
     2, k_rms_norm_args},
    layer_norm_check,
    layer_norm_plan,
    wgnn__ref_rms_norm,
    false,
};

static const wgnn_op_arg_info k_batch_norm_args[] = {
    {"eps", "float", "1e-5", "added to running_var inside the square root"},
    {"training", "bool", "false", "true (batch statistics) is not supported: inference mode only"},
};

const wgnn__op wgnn__op_batch_norm = {
    {"batch_norm",
     "batch normalization, inference: (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]",
     "input, weight, bias, running_mean, running_var",
     "input [N, C, ...], weight, bias, running_mean, running_var [C] -> input's shape; float32", 5, 5, 2,
     k_batch_norm_args},
    batch_norm_check,
    batch_norm_plan,
    wgnn__ref_batch_norm,
    false,
};
