/* elementwise.c - the elementwise family's rows: relu, sigmoid, gelu,
 * leaky_relu (unary), add, sub, mul, div (binary, NumPy broadcasting), all
 * on float32 or float16 (computed in float32), and to_copy (float32 /
 * float16 / int32, every pair).
 *
 * One kernel family serves every op; the prelude picks the operation (`fn
 * ew_op` calls one of the ew_* functions of shaders/elementwise_ops.wgsl)
 * and which bindings hold float16:
 *   elementwise_vec  every input has the output's shape: eight elements a
 *                    unit, 16-byte loads, several units a thread; the last
 *                    (numel % 8) elements go to the strided kernel;
 *   elementwise      the rest: per-input strides per output dim (0 on a
 *                    broadcast dim), after merging the dims that allow it.
 * A tensor past one storage binding is split over several dispatches, each
 * binding an aligned range: the contiguous kernel by elements, the strided
 * one by slices of the outermost merged dim (an input broadcast along it is
 * bound whole). The binding cap is the device's maxStorageBufferBindingSize,
 * and at most 2 GiB so that every element index fits a u32. */
#include "op.h"
#include "ref/elementwise_ref.h"

#include <stdio.h>
#include <string.h>

/* Params of both kernels, written once. */
#define EW_PARAMS(X, S)                                                                               \
    X(S, u32x4, shape_lo) X(S, u32x4, shape_hi) /* strided: output dims, outermost first (RANK of 8) */ \
    X(S, u32x4, sa_lo) X(S, u32x4, sa_hi)       /* strided: self's element stride per output dim */     \
    X(S, u32x4, sb_lo) X(S, u32x4, sb_hi)       /* strided: other's */                                  \
    X(S, u32, count)  /* strided: output elements bound; vec: 8-element units */                       \
    X(S, u32, base)   /* strided: first output element computed (even) */                              \
    X(S, f32, alpha)  /* add's alpha (sub: -alpha), leaky_relu's negative_slope */
WGNN__PARAMS_STRUCT(ew_params, EW_PARAMS);
WGNN__PARAMS_CHECK(ew_params, EW_PARAMS)

#define EW_VEC_WG 256u    /* threads of a contiguous workgroup */
#define EW_VEC_UNROLL 4u  /* units (8 elements) a thread */
#define EW_STRIDED_WG 64u /* threads of a strided workgroup, 4 elements each */

/* What runs: the operation, the dtypes of self, other and out, and the
 * float argument. */
typedef struct ew_kernel {
    const char *fn; /* ew_* of shaders/elementwise_ops.wgsl */
    int n_in;       /* 1 or 2 */
    wgnn_dtype dt[3];
    float alpha;
} ew_kernel;

/* The output's dims after merging, with each input's stride per dim. */
typedef struct ew_layout {
    int rank; /* 1..WGNN_MAX_RANK */
    uint64_t dims[WGNN_MAX_RANK];
    uint64_t st[2][WGNN_MAX_RANK];
    uint64_t numel;
    bool contiguous; /* every input is laid out as the output */
} ew_layout;

/* ---- validation (shapes only) --------------------------------------------- */

static const char *const k_in_names[2] = {"self", "other"};

static bool is_float(wgnn_dtype t) { return t == WGNN_F32 || t == WGNN_F16; }

static wgnn_status check_float_inputs(wgnn__node *n) {
    for (int i = 0; i < n->n_in; i++)
        if (!is_float(n->in[i].dtype))
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "%s is %s; it takes float32 or float16 (to_copy converts)", k_in_names[i],
                                  wgnn_dtype_name(n->in[i].dtype));
    return WGNN_OK;
}

static wgnn_status check_unary(wgnn__node *n) {
    wgnn_status s = check_float_inputs(n);
    if (s != WGNN_OK) return s;
    n->n_out = 1;
    n->out[0] = n->in[0];
    return WGNN_OK;
}

static wgnn_status check_binary(wgnn__node *n) {
    wgnn_status s = check_float_inputs(n);
    if (s != WGNN_OK) return s;
    const wgnn_desc *a = &n->in[0], *b = &n->in[1];
    if (a->dtype != b->dtype)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "self is %s but other is %s; both must have one dtype (to_copy converts)",
                              wgnn_dtype_name(a->dtype), wgnn_dtype_name(b->dtype));
    wgnn_desc *o = &n->out[0];
    memset(o, 0, sizeof *o);
    o->dtype = a->dtype;
    o->rank = a->rank > b->rank ? a->rank : b->rank;
    for (int d = 0; d < o->rank; d++) {
        int da = d - (o->rank - a->rank), db = d - (o->rank - b->rank);
        int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
        if (x != y && x != 1 && y != 1) {
            char as[160], bs[160];
            wgnn__dims_str(a, as, sizeof as);
            wgnn__dims_str(b, bs, sizeof bs);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "self %s and other %s do not broadcast: dim %d is %lld vs %lld "
                                  "(dims align from the right; each pair must be equal or include a 1)",
                                  as, bs, d, (long long)x, (long long)y);
        }
        o->dims[d] = x == 1 ? y : x;
    }
    n->n_out = 1;
    return WGNN_OK;
}

static wgnn_status check_to_copy(wgnn__node *n) {
    n->n_out = 1;
    n->out[0] = n->in[0];
    n->out[0].dtype = (wgnn_dtype)n->arg[0].i[0];
    return WGNN_OK;
}

/* ---- layout --------------------------------------------------------------- */

/* Strides of each input per output dim (0 where it broadcasts), then the
 * dims of size 1 dropped and neighbours merged where every input allows. */
static void layout_of(const wgnn_desc *out, const wgnn_desc *in, int n_in, ew_layout *L) {
    memset(L, 0, sizeof *L);
    uint64_t st[2][WGNN_MAX_RANK] = {{0}};
    for (int k = 0; k < n_in; k++) {
        uint64_t stride = 1;
        for (int d = out->rank - 1, di = in[k].rank - 1; d >= 0 && di >= 0; d--, di--) {
            st[k][d] = in[k].dims[di] == 1 ? 0 : stride;
            stride *= (uint64_t)in[k].dims[di];
        }
    }
    L->numel = 1;
    for (int d = 0; d < out->rank; d++) {
        uint64_t n = (uint64_t)out->dims[d];
        L->numel *= n;
        if (n == 1) continue;
        int r = L->rank;
        bool merge = r > 0;
        for (int k = 0; k < n_in && merge; k++) merge = L->st[k][r - 1] == st[k][d] * n;
        if (merge) {
            L->dims[r - 1] *= n;
            for (int k = 0; k < n_in; k++) L->st[k][r - 1] = st[k][d];
        } else {
            L->dims[r] = n;
            for (int k = 0; k < n_in; k++) L->st[k][r] = st[k][d];
            L->rank++;
        }
    }
    L->contiguous = L->rank <= 1;
    for (int k = 0; k < n_in && L->rank == 1; k++) L->contiguous = L->contiguous && L->st[k][0] == 1;
    if (L->rank == 0) { /* one element */
        L->rank = 1;
        L->dims[0] = 1;
        for (int k = 0; k < n_in; k++) L->st[k][0] = 1;
    }
}

/* ---- plans --------------------------------------------------------------------- */

static uint64_t es_of(wgnn_dtype t) { return wgnn_dtype_size(t); }

/* Bytes one binding may span: the device's cap, at most 2 GiB. */
static uint64_t binding_cap(const wgnn_context *ctx) {
    uint64_t cap = ctx->limits.maxStorageBufferBindingSize;
    if (cap > (1ull << 31)) cap = 1ull << 31;
    return cap;
}

static uint64_t offset_align(const wgnn_context *ctx) {
    uint64_t a = ctx->limits.minStorageBufferOffsetAlignment;
    return a < 16 ? 16 : a;
}

static wgnn_status ew_pipeline(wgnn_context *ctx, const ew_kernel *k, bool vec, int rank, const wgnn__pipe **out) {
    char prelude[2048];
    int len = snprintf(prelude, sizeof prelude,
                       "%sconst NB: u32 = %du;\nconst A_F16: bool = %s;\nconst B_F16: bool = %s;\n"
                       "const O_F16: bool = %s;\nconst RANK: u32 = %du;\nconst UNROLL: u32 = %uu;\n"
                       "fn ew_op(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> { return %s(a, b); }\n",
                       WGNN__PARAMS_WGSL(EW_PARAMS), k->n_in, k->dt[0] == WGNN_F16 ? "true" : "false",
                       k->n_in > 1 && k->dt[1] == WGNN_F16 ? "true" : "false", k->dt[2] == WGNN_F16 ? "true" : "false",
                       vec ? 1 : rank, vec ? EW_VEC_UNROLL : 1u, k->fn);
    if (len < 0 || (size_t)len >= sizeof prelude)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "elementwise: prelude too long");
    wgnn__const wg = {"WG", wgnn__clamp_workgroup_size(ctx, vec ? EW_VEC_WG : EW_STRIDED_WG)};
    return wgnn__pipeline(ctx, vec ? "elementwise_vec" : "elementwise", prelude, &wg, 1, out);
}

typedef struct ew_io {
    const char *op;                 /* for messages */
    WGPUBuffer buf[3];              /* self, other (NULL for unary ops), out */
    uint64_t size[3];               /* their buffers' bytes */
} ew_io;

static void bind3(wgnn_context *ctx, wgnn__dispatch *d, const ew_kernel *k, const ew_io *io, const uint64_t off[3],
                  const uint64_t size[3]) {
    wgnn__plan_bind(d, io->buf[0], off[0], size[0]);
    if (k->n_in > 1) wgnn__plan_bind(d, io->buf[1], off[1], size[1]);
    else wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, NULL, false), 0, 0);
    wgnn__plan_bind(d, io->buf[2], off[2], size[2]);
}

static void set4(uint32_t lo[4], uint32_t hi[4], const uint64_t *v, int n) {
    for (int i = 0; i < n; i++) (i < 4 ? lo : hi)[i & 3] = (uint32_t)v[i];
}

/* The strided kernel over output elements [base, count) of bindings that
 * start at off (bytes) and span size (0: to the buffer's end). */
static wgnn_status strided_dispatch(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe, const ew_kernel *k,
                                    const ew_io *io, const ew_layout *L, uint64_t base, uint64_t count,
                                    const uint64_t off[3], const uint64_t size[3]) {
    ew_params prm;
    memset(&prm, 0, sizeof prm);
    set4(prm.shape_lo, prm.shape_hi, L->dims, L->rank);
    set4(prm.sa_lo, prm.sa_hi, L->st[0], L->rank);
    set4(prm.sb_lo, prm.sb_hi, L->st[1], L->rank);
    prm.count = (uint32_t)count;
    prm.base = (uint32_t)base;
    prm.alpha = k->alpha;
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, EW_STRIDED_WG), gx, gy;
    uint64_t threads = (count - base + 3) / 4;
    wgnn_status s = wgnn__compute_2d_workgroup_count(ctx, (threads + wg - 1) / wg,
                                                     ctx->limits.maxComputeWorkgroupsPerDimension, io->op, &gx, &gy);
    if (s != WGNN_OK) return s;
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &prm, sizeof prm, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    bind3(ctx, d, k, io, off, size);
    return WGNN_OK;
}

/* Inputs of the output's layout: the vec kernel over chunks of whole units,
 * then the strided kernel over the last numel % 8 elements. */
static wgnn_status plan_contiguous(wgnn_context *ctx, wgnn__plan *p, const ew_kernel *k, const ew_io *io,
                                   uint64_t numel) {
    uint64_t es[3] = {es_of(k->dt[0]), es_of(k->dt[1]), es_of(k->dt[2])}, es_max = 2;
    for (int i = 0; i < 3; i++)
        if ((i != 1 || k->n_in > 1) && es[i] > es_max) es_max = es[i];
    /* element quantum: 8-element units whose byte offsets are aligned for
     * every dtype size (2 or 4) */
    uint64_t q = wgnn__lcm_u64(8, offset_align(ctx) / 2);
    uint64_t chunk = binding_cap(ctx) / es_max / q * q;
    uint64_t n8 = numel & ~(uint64_t)7;
    if (chunk == 0)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "%s: the device's maxStorageBufferBindingSize (%llu bytes) is too small",
                         io->op, (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    wgnn_status s;
    if (n8) {
        const wgnn__pipe *pipe;
        s = ew_pipeline(ctx, k, true, 1, &pipe);
        if (s != WGNN_OK) return s;
        uint32_t wg = wgnn__clamp_workgroup_size(ctx, EW_VEC_WG);
        for (uint64_t at = 0; at < n8; at += chunk) {
            uint64_t len = n8 - at < chunk ? n8 - at : chunk, units = len / 8;
            uint64_t per_wg = (uint64_t)wg * EW_VEC_UNROLL;
            uint32_t gx, gy;
            s = wgnn__compute_2d_workgroup_count(ctx, (units + per_wg - 1) / per_wg,
                                                 ctx->limits.maxComputeWorkgroupsPerDimension, io->op, &gx, &gy);
            if (s != WGNN_OK) return s;
            ew_params prm;
            memset(&prm, 0, sizeof prm);
            prm.count = (uint32_t)units;
            prm.alpha = k->alpha;
            wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &prm, sizeof prm, gx, gy, 1);
            if (!d) return WGNN_ERR_OUT_OF_MEMORY;
            uint64_t off[3], size[3];
            for (int i = 0; i < 3; i++) {
                off[i] = at * es[i];
                size[i] = len * es[i];
            }
            bind3(ctx, d, k, io, off, size);
        }
    }
    if (n8 == numel) return WGNN_OK;
    /* the tail: bindings from the last aligned element before it to the end */
    uint64_t from = n8 / q * q;
    ew_layout t;
    memset(&t, 0, sizeof t);
    t.rank = 1;
    t.dims[0] = numel - from;
    t.st[0][0] = t.st[1][0] = 1;
    const wgnn__pipe *pipe;
    s = ew_pipeline(ctx, k, false, 1, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t off[3] = {from * es[0], from * es[1], from * es[2]}, size[3] = {0, 0, 0};
    return strided_dispatch(ctx, p, pipe, k, io, &t, n8 - from, numel - from, off, size);
}

/* Broadcasting: the strided kernel, over slices of the outermost merged dim
 * when a tensor passes one binding. */
static wgnn_status plan_strided(wgnn_context *ctx, wgnn__plan *p, const ew_kernel *k, const ew_io *io,
                                const ew_layout *L) {
    uint64_t cap = binding_cap(ctx), align = offset_align(ctx);
    uint64_t rows = L->dims[0], inner = L->numel / rows;
    uint64_t row_bytes[3] = {L->st[0][0] * es_of(k->dt[0]), k->n_in > 1 ? L->st[1][0] * es_of(k->dt[1]) : 0,
                             inner * es_of(k->dt[2])};
    bool fits = true;
    for (int i = 0; i < 3; i++)
        if (io->buf[i] && io->size[i] > cap) fits = false;
    uint64_t per = rows; /* rows a dispatch */
    if (!fits) {
        uint64_t step = 1, widest = 0;
        for (int i = 0; i < 3; i++) {
            if (!io->buf[i]) continue;
            if (row_bytes[i] == 0) { /* broadcast along the outer dim: bound whole */
                if (io->size[i] > cap)
                    return wgnn__err(ctx, WGNN_ERR_LIMIT,
                                     "%s: %s holds %llu bytes, past the device's maxStorageBufferBindingSize (%llu "
                                     "bytes), and is broadcast along the output's outer dims",
                                     io->op, k_in_names[i], (unsigned long long)io->size[i],
                                     (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
                continue;
            }
            step = wgnn__lcm_u64(step, align / wgnn__gcd_u64(row_bytes[i], align));
            if (row_bytes[i] > widest) widest = row_bytes[i];
        }
        per = cap / widest / step * step;
        if (per == 0)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "%s: a slice of the output's outer dim spans %llu bytes (%llu slices at a time for "
                             "aligned offsets), past the device's maxStorageBufferBindingSize (%llu bytes)",
                             io->op, (unsigned long long)widest, (unsigned long long)step,
                             (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    }
    const wgnn__pipe *pipe;
    wgnn_status s = ew_pipeline(ctx, k, false, L->rank, &pipe);
    if (s != WGNN_OK) return s;
    for (uint64_t r0 = 0; r0 < rows; r0 += per) {
        uint64_t n = rows - r0 < per ? rows - r0 : per;
        bool last = r0 + n == rows;
        ew_layout c = *L;
        c.dims[0] = n;
        uint64_t off[3], size[3];
        for (int i = 0; i < 3; i++) {
            off[i] = r0 * row_bytes[i];
            size[i] = row_bytes[i] == 0 || last ? 0 : n * row_bytes[i];
        }
        s = strided_dispatch(ctx, p, pipe, k, io, &c, 0, n * inner, off, size);
        if (s != WGNN_OK) return s;
    }
    return WGNN_OK;
}

static wgnn_status ew_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                           wgnn_tensor *const *out, wgnn__plan *p, const char *fn, double alpha) {
    ew_kernel k = {fn, n->n_in, {in[0]->dtype, n->n_in > 1 ? in[1]->dtype : WGNN_F32, out[0]->dtype}, (float)alpha};
    ew_io io = {n->op->info.name,
                {in[0]->buf, n->n_in > 1 ? in[1]->buf : NULL, out[0]->buf},
                {in[0]->buf_size, n->n_in > 1 ? in[1]->buf_size : 0, out[0]->buf_size}};
    ew_layout L;
    layout_of(&n->out[0], n->in, n->n_in, &L);
    if (L.contiguous) return plan_contiguous(ctx, p, &k, &io, L.numel);
    return plan_strided(ctx, p, &k, &io, &L);
}

static wgnn_status plan_relu(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                             wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_relu", 0);
}
static wgnn_status plan_sigmoid(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_sigmoid", 0);
}
static wgnn_status plan_tanh(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                             wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_tanh", 0);
}
static wgnn_status plan_silu(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                             wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_silu", 0);
}
static wgnn_status plan_gelu(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                             wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, n->arg[0].i[0] == 1 ? "ew_gelu_tanh" : "ew_gelu", 0);
}
static wgnn_status plan_leaky_relu(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                   wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_leaky_relu", n->arg[0].f);
}
static wgnn_status plan_add(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_add", n->arg[0].f);
}
/* a - alpha b as a + (-alpha) b: the same value, bit for bit */
static wgnn_status plan_sub(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_add", -n->arg[0].f);
}
static wgnn_status plan_mul(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_mul", 0);
}
static wgnn_status plan_div(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    return ew_plan(ctx, n, in, out, p, "ew_div", 0);
}

/* Same dtype: the buffer's words copied as they are (NaN payloads kept).
 * Else float <-> int32 by ew_f2i / ew_i2f, float16 <-> float32 by the
 * kernels' load and store. */
static wgnn_status plan_to_copy(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                wgnn_tensor *const *out, wgnn__plan *p) {
    wgnn_dtype ti = in[0]->dtype, to = out[0]->dtype;
    if (ti == to) {
        ew_kernel k = {"ew_copy", 1, {WGNN_I32, WGNN_I32, WGNN_I32}, 0};
        ew_io io = {"to_copy", {in[0]->buf, NULL, out[0]->buf}, {in[0]->buf_size, 0, out[0]->buf_size}};
        return plan_contiguous(ctx, p, &k, &io, in[0]->buf_size / 4);
    }
    const char *fn = to == WGNN_I32 ? "ew_f2i" : ti == WGNN_I32 ? "ew_i2f" : "ew_copy";
    return ew_plan(ctx, n, in, out, p, fn, 0);
}

/* ---- rows ------------------------------------------------------------------------ */

#define UNARY_SHAPES "self [...] -> self's shape and dtype; float32 or float16 (computed in float32)"
#define BINARY_SHAPES                                                                                \
    "self, other: shapes that broadcast (NumPy rules), one dtype, float32 or float16 (computed in " \
    "float32) -> the broadcast shape, that dtype"

static const wgnn_op_arg_info k_gelu_args[] = {
    {"approximate", "none|tanh", "none", "none: x * Phi(x) with the exact erf; tanh: the tanh approximation"},
};
static const wgnn_op_arg_info k_leaky_args[] = {
    {"negative_slope", "float", "0.01", "multiplies the negative inputs"},
};
static const wgnn_op_arg_info k_alpha_args[] = {
    {"alpha", "float", "1", "multiplies other"},
};
static const wgnn_op_arg_info k_to_copy_args[] = {
    {"dtype", "dtype", NULL,
     "the output's dtype: float -> int32 truncates toward zero, NaN gives 0, past the range saturates; "
     "int32 -> float and float32 -> float16 round to nearest even"},
};

const wgnn__op wgnn__op_relu = {
    {"relu", "max(self, 0); NaN stays NaN", "self", UNARY_SHAPES, 1, 1, 0, NULL},
    check_unary,
    plan_relu,
    wgnn__ref_relu,
    false,
};
const wgnn__op wgnn__op_sigmoid = {
    {"sigmoid", "1 / (1 + exp(-self))", "self", UNARY_SHAPES, 1, 1, 0, NULL},
    check_unary,
    plan_sigmoid,
    wgnn__ref_sigmoid,
    false,
};

const wgnn__op wgnn__op_tanh = {
    {"tanh", "hyperbolic tangent", "self", UNARY_SHAPES, 1, 1, 0, NULL},
    check_unary,
    plan_tanh,
    wgnn__ref_tanh,
    false,
};

const wgnn__op wgnn__op_silu = {
    {"silu", "self * sigmoid(self) (swish)", "self", UNARY_SHAPES, 1, 1, 0, NULL},
    check_unary,
    plan_silu,
    wgnn__ref_silu,
    false,
};
const wgnn__op wgnn__op_gelu = {
    {"gelu", "self * Phi(self) (Gaussian error linear unit)", "self", UNARY_SHAPES, 1, 1, 1, k_gelu_args},
    check_unary,
    plan_gelu,
    wgnn__ref_gelu,
    false,
};
const wgnn__op wgnn__op_leaky_relu = {
    {"leaky_relu", "self where self > 0, else self * negative_slope", "self", UNARY_SHAPES, 1, 1, 1, k_leaky_args},
    check_unary,
    plan_leaky_relu,
    wgnn__ref_leaky_relu,
    false,
};
const wgnn__op wgnn__op_add = {
    {"add", "self + alpha * other", "self, other", BINARY_SHAPES, 2, 2, 1, k_alpha_args},
    check_binary,
    plan_add,
    wgnn__ref_add,
    false,
};
const wgnn__op wgnn__op_sub = {
    {"sub", "self - alpha * other", "self, other", BINARY_SHAPES, 2, 2, 1, k_alpha_args},
    check_binary,
    plan_sub,
    wgnn__ref_sub,
    false,
};
const wgnn__op wgnn__op_mul = {
    {"mul", "self * other", "self, other", BINARY_SHAPES, 2, 2, 0, NULL},
    check_binary,
    plan_mul,
    wgnn__ref_mul,
    false,
};
const wgnn__op wgnn__op_div = {
    {"div", "self / other (true division)", "self, other", BINARY_SHAPES, 2, 2, 0, NULL},
    check_binary,
    plan_div,
    wgnn__ref_div,
    false,
};
const wgnn__op wgnn__op_to_copy = {
    {"to_copy", "self converted to dtype (aten::_to_copy)", "self",
     "self [...] float32, float16 or int32 -> self's shape, dtype", 1, 1, 1, k_to_copy_args},
    check_to_copy,
    plan_to_copy,
    wgnn__ref_to_copy,
    false,
};
