/* rope.c - the row "apply_rotary_emb_hf": Hugging Face's rotate-half rotary
 * position embedding (apply_rotary_pos_emb for one tensor),
 *     out = x * cos + rotate_half(x) * sin,
 *     rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2]),
 * shaders/rope.wgsl. cos and sin broadcast to x by NumPy's rules (aligned
 * from the right, each dim equal to x's or 1): [S, D] for every batch and
 * head, or HF's unsqueezed [B, 1, S, D]. float32 only. */
#include "norm.h"

#include "ref/norm_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROPE_PARAMS(X, S)                                                                    \
    X(S, u32x4, dims_lo) X(S, u32x4, dims_hi) /* collapsed leading dims, innermost first */  \
    X(S, u32x4, cstr_lo) X(S, u32x4, cstr_hi) /* cos row stride of each (0: broadcast) */    \
    X(S, u32, n_items)                        /* rows * hv */                                \
    X(S, u32, hv)                             /* D / 2 in V units */                         \
    X(S, u32, nd)                             /* collapsed dims in use */
WGNN__PARAMS_STRUCT(rope_params, ROPE_PARAMS);
WGNN__PARAMS_CHECK(rope_params, ROPE_PARAMS)

static wgnn_status rope_check(wgnn__node *n) {
    static const char *const names[3] = {"x", "cos", "sin"};
    for (int i = 0; i < 3; i++)
        if (n->in[i].dtype != WGNN_F32)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; apply_rotary_emb_hf takes float32 only",
                                  names[i], wgnn_dtype_name(n->in[i].dtype));
    const wgnn_desc *x = &n->in[0], *c = &n->in[1], *s = &n->in[2];
    char xs[160], cs[160], ss[160];
    wgnn__dims_str(x, xs, sizeof xs);
    wgnn__dims_str(c, cs, sizeof cs);
    wgnn__dims_str(s, ss, sizeof ss);
    if (x->rank < 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "x is %s (rank %d); it must be [..., S, D]", xs, x->rank);
    int64_t d = x->dims[x->rank - 1];
    if (d % 2 != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "the last dim of x %s is D=%lld; it must be even", xs,
                              (long long)d);
    bool same = c->rank == s->rank;
    for (int i = 0; same && i < c->rank; i++) same = c->dims[i] == s->dims[i];
    if (!same)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "cos %s and sin %s must have the same shape", cs, ss);
    bool ok = c->rank >= 1 && c->rank <= x->rank && c->dims[c->rank - 1] == d;
    for (int i = 0; ok && i < c->rank - 1; i++) {
        int64_t e = x->dims[x->rank - c->rank + i];
        ok = c->dims[i] == e || c->dims[i] == 1;
    }
    if (!ok)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "cos %s does not broadcast to x %s: it must end in D=%lld and each of its other dims, "
                              "aligned from the right, must equal x's or be 1 (e.g. [S, D] or [B, 1, S, D])",
                              cs, xs, (long long)d);
    n->n_out = 1;
    n->out[0] = *x;
    return WGNN_OK;
}

/* x's leading dims collapsed, innermost first: runs of broadcast dims and of
 * dims cos follows merged; size-1 dims dropped. Returns how many. */
static int collapse(const wgnn_desc *x, const wgnn_desc *c, uint64_t ext[8], uint64_t str[8]) {
    int m = x->rank - 1, off = m - (c->rank - 1), nd = 0;
    uint64_t cstride = 1; /* cos rows per step of dim k */
    bool last_b = false;
    for (int k = m - 1; k >= 0; k--) {
        uint64_t e = (uint64_t)x->dims[k];
        uint64_t f = k >= off ? (uint64_t)c->dims[k - off] : 1;
        if (e != 1) {
            bool b = f == 1;
            uint64_t st = b ? 0 : cstride;
            if (nd > 0 && last_b == b && (b || str[nd - 1] * ext[nd - 1] == st)) {
                ext[nd - 1] *= e;
            } else {
                ext[nd] = e;
                str[nd] = st;
                nd++;
            }
            last_b = b;
        }
        cstride *= f;
    }
    return nd;
}

static wgnn_status rope_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                             wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_tensor *x = in[0], *c = in[1], *s = in[2];
    uint64_t d = (uint64_t)x->dims[x->rank - 1], h = d / 2, rows = x->numel / d;
    uint32_t vec = h % 4 == 0 ? 4 : 1;
    uint64_t ext[8] = {0}, str[8] = {0};
    int nd = collapse(&n->in[0], &n->in[1], ext, str);
    /* Split over the outermost collapsed dim where x (or a cos that follows
     * it) passes one storage binding. */
    uint64_t units = nd ? ext[nd - 1] : 1;
    bool c_sliced = nd && str[nd - 1] != 0;
    uint64_t xunit = rows / units * d * 4u, cunit = c_sliced ? str[nd - 1] * d * 4u : 0;
    uint64_t ub[2] = {xunit, cunit};
    uint64_t per = wgnn__units_per_binding(ctx, ub, 2, units);
    if (per == 0) return wgnn__split_err(ctx, "apply_rotary_emb_hf", "slice of x over its outermost dim", xunit);
    uint64_t whole = c->nbytes;
    if (!c_sliced && wgnn__units_per_binding(ctx, &whole, 1, 1) == 0)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "apply_rotary_emb_hf: cos (%llu bytes) passes the device's maxStorageBufferBindingSize "
                         "(%llu bytes)",
                         (unsigned long long)c->nbytes, (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    char pre[1024];
    snprintf(pre, sizeof pre, "%salias V = %s;\nconst WG: u32 = %uu;\n", WGNN__PARAMS_WGSL(ROPE_PARAMS),
             vec == 4 ? "vec4<f32>" : "f32", wg);
    const wgnn__pipe *pipe;
    wgnn_status st = wgnn__pipeline(ctx, "rope", pre, NULL, 0, &pipe);
    if (st != WGNN_OK) return st;
    for (uint64_t u0 = 0; u0 < units; u0 += per) {
        uint64_t cnt = units - u0 < per ? units - u0 : per;
        rope_params q;
        memset(&q, 0, sizeof q);
        for (int k = 0; k < nd; k++) {
            uint32_t e = (uint32_t)(k == nd - 1 ? cnt : ext[k]);
            if (k < 4) {
                q.dims_lo[k] = e;
                q.cstr_lo[k] = (uint32_t)str[k];
            } else {
                q.dims_hi[k - 4] = e;
                q.cstr_hi[k - 4] = (uint32_t)str[k];
            }
        }
        uint64_t items = cnt * (rows / units) * (h / vec);
        q.n_items = (uint32_t)items;
        q.hv = (uint32_t)(h / vec);
        q.nd = (uint32_t)nd;
        uint32_t gx, gy;
        st = wgnn__compute_2d_workgroup_count(ctx, (items + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                              "apply_rotary_emb_hf", &gx, &gy);
        if (st != WGNN_OK) return st;
        wgnn__dispatch *dp = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
        if (!dp) return WGNN_ERR_OUT_OF_MEMORY;
        wgnn__plan_bind(dp, x->buf, u0 * xunit, cnt * xunit);
        wgnn__plan_bind(dp, c->buf, c_sliced ? u0 * cunit : 0, c_sliced ? cnt * cunit : 0);
        wgnn__plan_bind(dp, s->buf, c_sliced ? u0 * cunit : 0, c_sliced ? cnt * cunit : 0);
        wgnn__plan_bind(dp, out[0]->buf, u0 * xunit, cnt * xunit);
    }
    return WGNN_OK;
}

const wgnn__op wgnn__op_apply_rotary_emb_hf = {
    {"apply_rotary_emb_hf",
     "Hugging Face rotate-half RoPE: x * cos + cat(-x[..., D/2:], x[..., :D/2]) * sin", "x, cos, sin",
     "x [..., S, D] (D even), cos and sin of one shape broadcastable to x ([S, D], [B, 1, S, D], ...; last dim D) "
     "-> x's shape; float32",
     3, 3, 0, NULL},
    rope_check,
    rope_plan,
    wgnn__ref_rope_hf,
    false,
};

/* ---- qkv_rope: a fused q|k|v projection into roped heads -------------------- */

#define QKV_PARAMS(X, S) X(S, u32, n_groups) X(S, u32, n) X(S, u32, h) X(S, u32, hk) X(S, f32, eps) X(S, u32, ctx)
WGNN__PARAMS_STRUCT(qkv_params, QKV_PARAMS);
WGNN__PARAMS_CHECK(qkv_params, QKV_PARAMS)

enum { QA_HEADS, QA_KV_HEADS, QA_EPS };

/* qkv_rope: qkv, cos, sin, [q_norm, k_norm]; qkv_rope_cache: qkv, cos, sin,
 * positions, k_cache, v_cache, [q_norm, k_norm]. */
static bool is_cache(const wgnn__node *n) { return n->op == &wgnn__op_qkv_rope_cache; }
static int norm_at(const wgnn__node *n) { return is_cache(n) ? 6 : 3; }
static bool has_norm(const wgnn__node *n) { return n->n_in == norm_at(n) + 2; }
static bool has_rope(const wgnn__node *n) { return n->n_in > 1; } /* qkv_rope(qkv) alone: heads split only */

static wgnn_status qkv_check(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0], *c = &n->in[has_rope(n) ? 1 : 0], *s = &n->in[has_rope(n) ? 2 : 0];
    bool cache = is_cache(n);
    int nb = norm_at(n);
    if (!cache && n->n_in == 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "give cos and sin both, or neither (heads split only)");
    for (int i = 0; i < n->n_in; i++) {
        wgnn_dtype want = cache && i == 3 ? WGNN_I32 : WGNN_F32;
        if (n->in[i].dtype != want)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "input %d is %s; it must be %s", i,
                                  wgnn_dtype_name(n->in[i].dtype), wgnn_dtype_name(want));
    }
    if (n->n_in == nb + 1)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "give both q_norm and k_norm weights, or neither");
    int64_t H = n->arg[QA_HEADS].i[0], Hk = n->arg[QA_KV_HEADS].i[0];
    char xs[160], cs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    wgnn__dims_str(c, cs, sizeof cs);
    if (H < 1 || Hk < 1 || H > 65536 || Hk > 65536)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "num_heads %lld and num_kv_heads %lld must be in [1, 65536]",
                              (long long)H, (long long)Hk);
    if (x->rank != 3 || x->dims[2] % (H + 2 * Hk) != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "qkv is %s; it must be [B, n, (num_heads + 2 * num_kv_heads) * D] = [B, n, %lld * D]", xs,
                              (long long)(H + 2 * Hk));
    int64_t D = x->dims[2] / (H + 2 * Hk);
    if (D < 2 || D > 2048 || D % 2 != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "head dim D=%lld must be even and in [2, 2048]",
                              (long long)D);
    bool ok = c->rank == 2 && c->dims[0] == x->dims[1] && c->dims[1] == D && s->rank == 2 && s->dims[0] == c->dims[0] &&
              s->dims[1] == c->dims[1];
    if (has_rope(n) && !ok)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "cos %s and sin must both be [n, D] = [%lld, %lld]", cs,
                              (long long)x->dims[1], (long long)D);
    for (int i = nb; i < n->n_in; i++)
        if (n->in[i].rank != 1 || n->in[i].dims[0] != D)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s must be [D] = [%lld]", i == nb ? "q_norm" : "k_norm",
                                  (long long)D);
    if (!(n->arg[QA_EPS].f >= 0) || !isfinite(n->arg[QA_EPS].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "eps %g must be finite and >= 0", n->arg[QA_EPS].f);
    n->n_out = 3;
    n->out[0] = (wgnn_desc){WGNN_F32, 4, {x->dims[0], H, x->dims[1], D}};
    if (!cache) {
        for (int o = 1; o < 3; o++) n->out[o] = (wgnn_desc){WGNN_F32, 4, {x->dims[0], Hk, x->dims[1], D}};
        return WGNN_OK;
    }
    const wgnn_desc *pos = &n->in[3], *kc = &n->in[4], *vc = &n->in[5];
    if (pos->rank != 1 || pos->dims[0] != x->dims[1])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "positions must be int32 [n] = [%lld]",
                              (long long)x->dims[1]);
    char ks[160], vs[160];
    wgnn__dims_str(kc, ks, sizeof ks);
    wgnn__dims_str(vc, vs, sizeof vs);
    ok = kc->rank == 4 && kc->dims[0] == x->dims[0] && kc->dims[1] == Hk && kc->dims[3] == D && kc->dims[2] >= 1;
    for (int i = 0; ok && i < 4; i++) ok = vc->rank == 4 && vc->dims[i] == kc->dims[i];
    if (!ok)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "k_cache %s and v_cache %s must both be [B, num_kv_heads, ctx, D] = [%lld, %lld, ctx, %lld]",
                              ks, vs, (long long)x->dims[0], (long long)Hk, (long long)D);
    n->out[1] = *kc;
    n->out[2] = *vc;
    return WGNN_OK;
}

#define SPLIT_PARAMS(X, S) X(S, u32, total) X(S, u32, n) X(S, u32, h) X(S, u32, hk) X(S, u32, d4)
WGNN__PARAMS_STRUCT(split_params, SPLIT_PARAMS);
WGNN__PARAMS_CHECK(split_params, SPLIT_PARAMS)

/* Heads only (no norms, no rotation, D % 4 == 0): shaders/qkv_split.wgsl. */
static wgnn_status split_encode(wgnn_context *ctx, wgnn__plan *p, const wgnn__qkv_rope_io *io, const char *name) {
    uint64_t total = io->b * io->n * (io->h + 2 * io->hk) * io->d / 4;
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256), gx, gy;
    char pre[512];
    snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\n", WGNN__PARAMS_WGSL(SPLIT_PARAMS), wg);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "qkv_split", pre, NULL, 0, &pipe);
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, (total + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                             name, &gx, &gy);
    if (s != WGNN_OK) return s;
    split_params q = {(uint32_t)total, (uint32_t)io->n, (uint32_t)io->h, (uint32_t)io->hk, (uint32_t)(io->d / 4)};
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind(d, io->x, 0, 0);
    wgnn__plan_bind_range(d, &io->q, 0, 0);
    wgnn__plan_bind(d, io->k, 0, 0);
    wgnn__plan_bind(d, io->v, 0, 0);
    return WGNN_OK;
}

/* The qkv_rope kernel's dispatch (see norm.h, wgnn__qkv_rope_encode). */
wgnn_status wgnn__qkv_rope_encode(wgnn_context *ctx, wgnn__plan *p, const wgnn__qkv_rope_io *io, const char *name) {
    uint64_t heads = io->h + 2 * io->hk, groups = io->b * io->n * heads, D = io->d;
    if (groups * D > UINT32_MAX || (io->mode != WGNN__QKV_HEADS && io->b * io->hk * io->ctx * D > UINT32_MAX))
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "%s: qkv or a cache holds more than 2^32 elements", name);
    if (io->mode == WGNN__QKV_HEADS && !io->qn && !io->cos && D % 4 == 0) return split_encode(ctx, p, io, name);
    uint64_t wg = 1;
    while (wg < D / 2) wg *= 2;
    if (wg > ctx->limits.maxComputeInvocationsPerWorkgroup || wg > ctx->limits.maxComputeWorkgroupSizeX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "%s: D/2 = %llu threads pass the device's workgroup size", name,
                         (unsigned long long)(D / 2));
    /* kv_row: where token t of kv head hk goes in K / V */
    static const char *const k_rows[3] = {
        "fn kv_row(b: u32, hk: u32, t: u32) -> u32 { return (b * P.hk + hk) * P.n + t; }\n"
        "fn rope_row(b: u32, t: u32) -> u32 { return t; }\n",
        "@group(0) @binding(9) var<storage, read> POS: array<i32>;\n"
        "fn kv_pos(b: u32, t: u32) -> i32 { return POS[t]; }\n"
        "fn rope_row(b: u32, t: u32) -> u32 { return t; }\n"
        /* WGNN__DATA_ERR_CACHE_POS */
        "fn bad_words(b: u32, t: u32, r: i32) -> vec4<u32> { return vec4<u32>(DATA_ERR_CACHE_POS, bitcast<u32>(r), t, P.ctx); }\n",
        "@group(0) @binding(9) var<storage, read> LENS: array<i32>;\n"
        /* a length outside [n, ctx] writes no row: its rows are reported
         * as L - n (< 0) or L (>= ctx) */
        "fn kv_pos(b: u32, t: u32) -> i32 {\n"
        "    let len = LENS[b];\n"
        "    if (len < i32(P.n)) { return len - i32(P.n); }\n"
        "    if (len > i32(P.ctx)) { return len; }\n"
        "    return len - i32(P.n) + i32(t);\n"
        "}\n"
        "fn rope_row(b: u32, t: u32) -> u32 { return u32(clamp(kv_pos(b, t), 0, i32(P.ctx) - 1)); }\n"
        /* WGNN__DATA_ERR_SEQLEN_NEW: the length itself, and the rows it must count */
        "fn bad_words(b: u32, t: u32, r: i32) -> vec4<u32> { return vec4<u32>(DATA_ERR_SEQLEN_NEW, bitcast<u32>(LENS[b]), b, P.n); }\n"};
    static const char k_cache_row[] =
        "@group(0) @binding(10) var<storage, read_write> flag: array<atomic<u32>>;\n"
        "#include \"common/data_err\"\n"
        "fn kv_row(b: u32, hk: u32, t: u32) -> u32 {\n"
        "    let r = kv_pos(b, t);\n"
        "    if (r < 0 || u32(r) >= P.ctx) {\n"
        "        let w = bad_words(b, t, r);\n"
        "        data_err(w.x, w.y, w.z, w.w);\n"
        "        return 0xFFFFFFFFu;\n"
        "    }\n"
        "    return (b * P.hk + hk) * P.ctx + u32(r);\n"
        "}\n";
    char pre[3072];
    int len = snprintf(pre, sizeof pre,
                       "%sconst HALF: u32 = %lluu;\nconst WG: u32 = %lluu;\nconst HAS_NORM: bool = %s;\n"
                       "const HAS_ROPE: bool = %s;\n%s%s",
                       WGNN__PARAMS_WGSL(QKV_PARAMS), (unsigned long long)(D / 2), (unsigned long long)wg,
                       io->qn ? "true" : "false", io->cos ? "true" : "false", k_rows[io->mode],
                       io->mode == WGNN__QKV_HEADS ? "" : k_cache_row);
    if (len < 0 || (size_t)len >= sizeof pre) return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "%s: shader prelude too long", name);
    const wgnn__pipe *pipe;
    uint32_t gx, gy;
    wgnn_status s = wgnn__pipeline(ctx, "qkv_rope", pre, NULL, 0, &pipe);
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, groups, ctx->limits.maxComputeWorkgroupsPerDimension, name, &gx, &gy);
    if (s != WGNN_OK) return s;
    qkv_params q = {(uint32_t)groups, (uint32_t)io->n, (uint32_t)io->h, (uint32_t)io->hk, io->eps, (uint32_t)io->ctx};
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind(d, io->x, 0, 0);
    wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, io->cos, false), 0, 0);
    wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, io->sin, false), 0, 0);
    wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, io->qn, false), 0, 0);
    wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, io->kn, false), 0, 0);
    wgnn__plan_bind_range(d, &io->q, 0, 0);
    wgnn__plan_bind(d, io->k, 0, 0);
    wgnn__plan_bind(d, io->v, 0, 0);
    if (io->mode != WGNN__QKV_HEADS) {
        wgnn__plan_bind(d, io->rows, 0, 0);
        wgnn__plan_bind(d, wgnn__data_error_buffer(ctx), 0, 0);
    }
    return WGNN_OK;
}

static wgnn_status qkv_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                            wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_desc *x = &n->in[0];
    bool cache = is_cache(n), norm = has_norm(n);
    int nb = norm_at(n);
    uint64_t H = (uint64_t)n->arg[QA_HEADS].i[0], Hk = (uint64_t)n->arg[QA_KV_HEADS].i[0];
    uint64_t lim = ctx->limits.maxStorageBufferBindingSize;
    for (int i = 0; i < 3; i++)
        if (in[0]->nbytes > lim || out[i]->nbytes > lim)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "%s: qkv (%llu bytes) or an output (%llu bytes) passes the device's "
                             "maxStorageBufferBindingSize (%llu)",
                             n->op->info.name, (unsigned long long)in[0]->nbytes, (unsigned long long)out[i]->nbytes,
                             (unsigned long long)lim);
    /* the caches: in place (wgnn__op_plan copied them first when the
     * outputs are other tensors), only the new rows written */
    wgnn__qkv_rope_io io = {
        .mode = cache ? WGNN__QKV_CACHE_POSITIONS : WGNN__QKV_HEADS,
        .b = (uint64_t)x->dims[0],
        .n = (uint64_t)x->dims[1],
        .h = H,
        .hk = Hk,
        .d = (uint64_t)x->dims[2] / (H + 2 * Hk),
        .ctx = cache ? (uint64_t)n->in[4].dims[2] : 0u,
        .eps = (float)n->arg[QA_EPS].f,
        .x = in[0]->buf,
        .cos = has_rope(n) ? in[1]->buf : NULL,
        .sin = has_rope(n) ? in[2]->buf : NULL,
        .qn = norm ? in[nb]->buf : NULL,
        .kn = norm ? in[nb + 1]->buf : NULL,
        .rows = cache ? in[3]->buf : NULL,
        .q = {out[0]->buf, 0, 0, 0},
        .k = out[1]->buf,
        .v = out[2]->buf,
    };
    return wgnn__qkv_rope_encode(ctx, p, &io, n->op->info.name);
}

/* One head's row of a stacked q|k|v projection as qkv_rope makes it (see
 * norm.h). */
void wgnn__qkv_rope_row(const float *src, int64_t D, const float *w, double eps, const float *cos, const float *sin,
                        double *tmp, float *dst) {
    int64_t half = D / 2;
    for (int64_t i = 0; i < D; i++) tmp[i] = src[i];
    if (w) {
        double ss = 0;
        for (int64_t i = 0; i < D; i++) ss += tmp[i] * tmp[i];
        double inv = 1.0 / sqrt(ss / (double)D + eps);
        for (int64_t i = 0; i < D; i++) tmp[i] *= inv * w[i];
    }
    for (int64_t i = 0; i < D; i++) {
        double r = tmp[i];
        if (cos) {
            double rot = i < half ? -tmp[i + half] : tmp[i - half];
            r = tmp[i] * cos[i] + rot * sin[i];
        }
        dst[i] = (float)r;
    }
}

static wgnn_status qkv_ref(wgnn__node *n, const void *const *in, void *const *out) {
    const wgnn_desc *x = &n->in[0];
    bool cache = is_cache(n);
    int nb = norm_at(n);
    int64_t H = n->arg[QA_HEADS].i[0], Hk = n->arg[QA_KV_HEADS].i[0], heads = H + 2 * Hk;
    int64_t B = x->dims[0], T = x->dims[1], D = x->dims[2] / heads;
    const float *X = in[0], *C = has_rope(n) ? in[1] : NULL, *S = has_rope(n) ? in[2] : NULL,
                *qw = has_norm(n) ? in[nb] : NULL,
                *kw = has_norm(n) ? in[nb + 1] : NULL;
    const int32_t *pos = cache ? in[3] : NULL;
    int64_t ctxlen = cache ? n->in[4].dims[2] : T;
    if (cache) {
        for (int64_t t = 0; t < T; t++)
            if (pos[t] < 0 || pos[t] >= ctxlen)
                return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "positions[%lld] = %d is outside the cache [0, %lld)",
                                      (long long)t, pos[t], (long long)ctxlen);
    }
    double eps = n->arg[QA_EPS].f;
    double *v = malloc((size_t)D * sizeof *v);
    if (!v) return wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++)
            for (int64_t h = 0; h < heads; h++) {
                const float *src = X + ((b * T + t) * heads + h) * D;
                int kind = h < H ? 0 : h < H + Hk ? 1 : 2;
                int64_t nh = kind == 0 ? H : Hk, hh = kind == 0 ? h : kind == 1 ? h - H : h - H - Hk;
                int64_t row = kind == 0 || !cache ? (b * nh + hh) * T + t : (b * nh + hh) * ctxlen + pos[t];
                wgnn__qkv_rope_row(src, D, kind == 0 ? qw : kind == 1 ? kw : NULL, eps, kind < 2 && C ? C + t * D : NULL,
                                   kind < 2 && S ? S + t * D : NULL, v, (float *)out[kind] + row * D);
            }
    free(v);
    return WGNN_OK;
}

static const wgnn_op_arg_info k_qkv_args[] = {
    {"num_heads", "int", NULL, "H: query heads"},
    {"num_kv_heads", "int", NULL, "Hk: key and value heads"},
    {"eps", "float", "1e-6", "RMSNorm's epsilon (with q_norm and k_norm)"},
};

const wgnn__op wgnn__op_qkv_rope = {
    {"qkv_rope",
     "a fused q|k|v projection into heads: q and k RMS-normalized per head (optional, Qwen3) and rotated "
     "(apply_rotary_emb_hf), v as is (not an aten op)",
     "qkv, [cos, sin], [q_norm, k_norm]",
     "qkv [B, n, (H + 2 Hk) * D] (q's H heads, then k's Hk, then v's Hk, D each), cos and sin [n, D] (without "
     "them the heads are only split out: an encoder's q|k|v), q_norm and k_norm [D] (with cos and sin) -> q [B, "
     "H, n, D], k [B, Hk, n, D], v [B, Hk, n, D]; D even, <= 2048; float32",
     1, 5, 3, k_qkv_args},
    qkv_check,
    qkv_plan,
    qkv_ref,
    false,
};

const wgnn__op wgnn__op_qkv_rope_cache = {
    {"qkv_rope_cache",
     "qkv_rope with k and v written straight into KV caches at the given positions (a decoder step's cache "
     "append in the same kernel; not an aten op)",
     "qkv, cos, sin, positions, k_cache, v_cache, [q_norm, k_norm]",
     "qkv [B, n, (H + 2 Hk) * D], cos and sin [n, D], positions int32 [n] in [0, ctx), k_cache and v_cache "
     "[B, Hk, ctx, D], q_norm and k_norm [D] -> q [B, H, n, D], k_cache and v_cache with rows positions[t] "
     "replaced; pass the caches as outputs 1 and 2 (in place: wgnn_graph_op_into_n) to write only those rows; "
     "on the GPU a position out of range writes nothing and is reported by the next sync; float32",
     6, 8, 3, k_qkv_args},
    qkv_check,
    qkv_plan,
    qkv_ref,
    WGNN__INPLACE(1, 4) | WGNN__INPLACE(2, 5),
};
