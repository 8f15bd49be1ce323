/* sdpa.c - scaled dot-product attention, the op table's rows "sdpa"
 * (validation, routing, the three-pass plan) and "sdpa_qkvpacked" (the
 * fused plan on a packed q|k|v, at the end). The fused plan is in
 * sdpa_fused.c.
 *
 * Two implementations share one validation:
 *   three-pass  sdpa_qk (or sdpa_qk_entry) -> row softmax (reduce_rows, the
 *               norm family's kernel) -> sdpa_av, with two
 *               B*H*S_q*S_kv fp32 scratch buffers, chunked over batch*heads
 *               where they would pass the device's buffer limits;
 *   fused       sdpa_fused, one dispatch, online softmax, no score buffer,
 *               split over heads where a tensor passes one storage binding.
 */
#include "norm.h"
#include "op.h"
#include "sdpa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Params of the kernels, written once (see WGNN__PARAMS_STRUCT). */
#define QK_PARAMS(X, S)                                                                              \
    X(S, u32, row_base) /* first global query row of this chunk (bh_start * s_q) */                 \
    X(S, u32, n_rows)   /* query rows in this chunk */                                               \
    X(S, u32, s_q) X(S, u32, s_kv) X(S, u32, d4) X(S, f32, scale) X(S, u32, has_mask)
#define AV_PARAMS(X, S) X(S, u32, row_base) X(S, u32, n_rows) X(S, u32, s_q) X(S, u32, s_kv) X(S, u32, d4)
WGNN__PARAMS_STRUCT(qk_params, QK_PARAMS);
WGNN__PARAMS_STRUCT(av_params, AV_PARAMS);
WGNN__PARAMS_CHECK(qk_params, QK_PARAMS)
WGNN__PARAMS_CHECK(av_params, AV_PARAMS)

/* Three-pass QK route when fused cannot run (docs/PERFORMANCE.md): on the
 * H200 the per-entry kernel beat the row kernel at every shape measured, up
 * to 262144 query rows (B*H*S_q); on lavapipe only below a few dozen rows
 * (8 rows: 2.3 vs 3.1 ms; 256 rows: 4.3 vs 4.1 ms). */
#define WGNN__CPU_CHANNEL_ROWS 64u

enum { A_SCALE, A_IMPL, A_CAUSAL, A_GQA };

/* ---- validation (shapes only) --------------------------------------------- */

static wgnn_status check(wgnn__node *n) {
    static const char *const names[4] = {"q", "k", "v", "mask"};
    const wgnn_desc *q = &n->in[0], *k = &n->in[1], *v = &n->in[2], *m = n->n_in > 3 ? &n->in[3] : NULL;
    for (int i = 0; i < n->n_in; i++) {
        bool ok = n->in[i].dtype == WGNN_F32 || (i < 3 && n->in[i].dtype == WGNN_F16);
        if (!ok)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; sdpa takes %s", names[i],
                                  wgnn_dtype_name(n->in[i].dtype),
                                  i < 3 ? "float32, or float16 for all of q, k, v and out" : "a float32 mask");
        if (i < 3 && n->in[i].dtype != q->dtype)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "q is %s but %s is %s: q, k, v and out share one dtype",
                                  wgnn_dtype_name(q->dtype), names[i], wgnn_dtype_name(n->in[i].dtype));
    }
    char qs[160], ks[160], vs[160];
    wgnn__dims_str(q, qs, sizeof qs);
    wgnn__dims_str(k, ks, sizeof ks);
    wgnn__dims_str(v, vs, sizeof vs);
    int r = q->rank;
    if (r < 3)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "q is %s (rank %d); q, k, v need rank >= 3 ([..., H, S, D])",
                              qs, r);
    if (k->rank != r || v->rank != r)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "q %s, k %s and v %s must have the same rank", qs, ks, vs);
    for (int i = 0; i < r; i++)
        if (k->dims[i] != v->dims[i])
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "k %s and v %s must have the same dims", ks, vs);
    for (int i = 0; i < r - 3; i++)
        if (q->dims[i] != k->dims[i])
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "q %s and k %s differ in dim %d: batch dims (all but the last three) must match", qs,
                                  ks, i);
    int64_t hq = q->dims[r - 3], hkv = k->dims[r - 3];
    bool gqa = n->arg[A_GQA].set && n->arg[A_GQA].i[0];
    if (hq != hkv && !gqa)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "q %s has %lld heads but k %s has %lld: heads must match unless enable_gqa=true "
                              "(grouped-query attention)",
                              qs, (long long)hq, ks, (long long)hkv);
    if (hkv <= 0 || hq % hkv != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "grouped-query attention: q's %lld heads must be a multiple of k's and v's %lld heads "
                              "(q %s, k %s)",
                              (long long)hq, (long long)hkv, qs, ks);
    if (q->dims[r - 1] != k->dims[r - 1])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "head dim D differs: q %s has %lld, k %s has %lld", qs,
                              (long long)q->dims[r - 1], ks, (long long)k->dims[r - 1]);
    if (q->dims[r - 1] % 4 != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "head dim D=%lld must be a multiple of 4",
                              (long long)q->dims[r - 1]);
    if (m) {
        bool ok = m->rank == r && m->dims[r - 1] == k->dims[r - 2];
        for (int i = 0; ok && i < r - 1; i++) ok = m->dims[i] == q->dims[i];
        if (!ok) {
            char ms[160], want[160];
            wgnn__dims_str(m, ms, sizeof ms);
            wgnn_desc w = *q;
            w.dims[r - 1] = k->dims[r - 2];
            wgnn__dims_str(&w, want, sizeof want);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "mask is %s but must be [..., H, S_q, S_kv] = %s", ms,
                                  want);
        }
    }
    if (n->arg[A_SCALE].set && !isfinite(n->arg[A_SCALE].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "scale %g is not finite", n->arg[A_SCALE].f);
    n->n_out = 1;
    n->out[0] = *q;
    return WGNN_OK;
}

static void shape_of(const wgnn__node *n, sdpa_shape *sh) {
    const wgnn_desc *q = &n->in[0];
    int r = q->rank;
    memset(sh, 0, sizeof *sh);
    sh->bh = 1;
    for (int i = 0; i < r - 2; i++) sh->bh *= (uint64_t)q->dims[i];
    sh->s_q = (uint64_t)q->dims[r - 2];
    sh->s_kv = (uint64_t)n->in[1].dims[r - 2];
    sh->group = n->in[1].dims[r - 3] > 0 ? (uint64_t)(q->dims[r - 3] / n->in[1].dims[r - 3]) : 1;
    if (sh->group == 0) sh->group = 1;
    sh->causal = n->arg[A_CAUSAL].set ? (int)n->arg[A_CAUSAL].i[0] : WGNN_SDPA_CAUSAL_NONE;
    sh->d = (uint64_t)q->dims[r - 1];
    sh->mask = n->n_in > 3;
    sh->f16 = q->dtype == WGNN_F16;
    sh->scale = n->arg[A_SCALE].set ? n->arg[A_SCALE].f : 1.0 / sqrt((double)sh->d);
    sh->n_h = (uint64_t)q->dims[r - 3];
}

/* ---- three-pass ------------------------------------------------------------ */

static wgnn_status three_pass_chunk(const wgnn_context *ctx, const sdpa_shape *sh, uint64_t *chunk_bh,
                                    uint64_t *per_bh) {
    *per_bh = sh->s_q * sh->s_kv * 4u;
    uint64_t cap = ctx->limits.maxStorageBufferBindingSize;
    if (ctx->limits.maxBufferSize < cap) cap = ctx->limits.maxBufferSize;
    if (*per_bh > cap) return WGNN_ERR_LIMIT;
    *chunk_bh = cap / *per_bh;
    if (*chunk_bh > sh->bh) *chunk_bh = sh->bh;
    return WGNN_OK;
}

/* The three-pass kernels bind whole tensors and index rows in u32. Sets
 * ctx->err when the shape cannot run. */
static wgnn_status three_pass_fits(wgnn_context *ctx, const sdpa_shape *sh) {
    uint64_t chunk_bh, per_bh;
    if (three_pass_chunk(ctx, sh, &chunk_bh, &per_bh) != WGNN_OK)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa three-pass: the scores of one head need %llu bytes, past the device's "
                         "maxStorageBufferBindingSize/maxBufferSize (%llu bytes); use the fused implementation",
                         (unsigned long long)(sh->s_q * sh->s_kv * 4u),
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    uint64_t bytes[4] = {sh->bh * sh->s_q * sh->d * 4u, sh->bh * sh->s_kv * sh->d * 4u,
                         sh->bh * sh->s_kv * sh->d * 4u, sh->mask ? sh->bh * sh->s_q * sh->s_kv * 4u : 0};
    static const char *const names[4] = {"q (and out)", "k", "v", "mask"};
    for (int i = 0; i < 4; i++)
        if (bytes[i] > ctx->limits.maxStorageBufferBindingSize)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "sdpa three-pass: %s holds %llu bytes, past the device's maxStorageBufferBindingSize "
                             "(%llu bytes); the fused implementation splits such tensors over heads",
                             names[i], (unsigned long long)bytes[i],
                             (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    if (sh->bh * sh->s_q > UINT32_MAX || sh->bh * sh->s_kv * (sh->d / 4) > UINT32_MAX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa three-pass: more than 2^32 rows; use the fused implementation");
    return WGNN_OK;
}

static wgnn_status plan_three_pass(wgnn_context *ctx, const sdpa_shape *sh, const wgnn_tensor *const *in,
                                   wgnn_tensor *out, bool per_entry, wgnn__plan *p) {
    if (sh->f16)
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "sdpa: float16 tensors run only in the fused implementation");
    if (sh->causal != WGNN_SDPA_CAUSAL_NONE)
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED,
                         "sdpa: causal attention runs only in the fused implementation (impl=fused or auto)");
    if (sh->group != 1)
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED,
                         "sdpa: grouped-query attention (k and v with fewer heads than q) runs only in the fused "
                         "implementation (impl=fused or auto)");
    wgnn_status s = three_pass_fits(ctx, sh);
    if (s != WGNN_OK) return s;
    uint64_t chunk_bh = 1, per_bh = 0;
    three_pass_chunk(ctx, sh, &chunk_bh, &per_bh);
    uint32_t d4 = (uint32_t)(sh->d / 4);
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 64);
    wgnn__const wgc[1] = {{"WG", wg}};
    const wgnn__pipe *p_qk, *p_av;
    s = wgnn__pipeline(ctx, per_entry ? "sdpa_qk_entry" : "sdpa_qk", WGNN__PARAMS_WGSL(QK_PARAMS), wgc, 1, &p_qk);
    if (s == WGNN_OK) s = wgnn__pipeline(ctx, "sdpa_av", WGNN__PARAMS_WGSL(AV_PARAMS), wgc, 1, &p_av);
    if (s != WGNN_OK) return s;
    int scores = wgnn__plan_scratch(p, chunk_bh * per_bh), probs = wgnn__plan_scratch(p, chunk_bh * per_bh);
    const wgnn_tensor *q = in[0], *k = in[1], *v = in[2], *m = sh->mask ? in[3] : NULL;
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    for (uint64_t bh0 = 0; bh0 < sh->bh; bh0 += chunk_bh) {
        uint64_t nbh = sh->bh - bh0 < chunk_bh ? sh->bh - bh0 : chunk_bh;
        uint32_t rows = (uint32_t)(nbh * sh->s_q);
        qk_params qp = {(uint32_t)(bh0 * sh->s_q), rows, (uint32_t)sh->s_q, (uint32_t)sh->s_kv, d4,
                        (float)sh->scale, m ? 1u : 0u};
        av_params ap = {(uint32_t)(bh0 * sh->s_q), rows, (uint32_t)sh->s_q, (uint32_t)sh->s_kv, d4};
        uint32_t qx, qy, ax, ay;
        uint64_t qk_items = per_entry ? (uint64_t)rows * sh->s_kv : rows;
        s = wgnn__compute_2d_workgroup_count(ctx, (qk_items + wg - 1) / wg, maxd, "sdpa qk", &qx, &qy);
        if (s == WGNN_OK)
            s = wgnn__compute_2d_workgroup_count(ctx, ((uint64_t)rows * d4 + wg - 1) / wg, maxd, "sdpa av", &ax, &ay);
        if (s != WGNN_OK) return s;
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, p_qk, &qp, sizeof qp, qx, qy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        wgnn__plan_bind(d, q->buf, 0, 0);
        wgnn__plan_bind(d, k->buf, 0, 0);
        wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, m ? m->buf : NULL, false), 0, 0);
        wgnn__plan_bind_scratch(d, (uint32_t)scores, 0, 0);
        /* the op suite's row softmax; a row masked everywhere gives zeros */
        s = wgnn__softmax_rows(ctx, p, rows, sh->s_kv, 0.0f, (wgnn__binding){NULL, 0, 0, (uint32_t)scores + 1},
                               (wgnn__binding){NULL, 0, 0, (uint32_t)probs + 1});
        if (s != WGNN_OK) return s;
        if (!(d = wgnn__plan_add(ctx, p, p_av, &ap, sizeof ap, ax, ay, 1))) return WGNN_ERR_OUT_OF_MEMORY;
        wgnn__plan_bind_scratch(d, (uint32_t)probs, 0, 0);
        wgnn__plan_bind(d, v->buf, 0, 0);
        wgnn__plan_bind(d, out->buf, 0, 0);
    }
    return WGNN_OK;
}

/* ---- routing ------------------------------------------------------------- */

/* auto (docs/PERFORMANCE.md has the measurements behind it): fused wherever
 * it fits, split-KV included, except on CPU adapters when the query rows fill
 * under a quarter of a fused row tile (decoder-like S_q): there the padding
 * rows cost real time (lavapipe, (1,8,1,4096,64): fused 39 ms, channel 2.3
 * ms) while a GPU hides them (H200: fused 0.047 ms, channel 0.24 ms). Where
 * fused does not fit: three-pass, with the QK route of WGNN__CPU_CHANNEL_ROWS.
 * Auto never picks a route that cannot run when another can: the
 * preferences are tried in order, and the first that fits the device's
 * limits wins. */
static wgnn_sdpa_impl route(wgnn_context *ctx, const sdpa_shape *sh, wgnn_sdpa_impl want) {
    if (want != WGNN_SDPA_AUTO) return want;
    /* only fused runs these; its plan names the limit if it cannot */
    if (sh->f16 || sh->causal != WGNN_SDPA_CAUSAL_NONE || sh->group != 1) return WGNN_SDPA_FUSED;
    wgnn_sdpa_impl pref[3];
    int n = 0;
    wgnn_sdpa_impl tp =
        !wgnn__cpu_adapter(ctx) || sh->bh * sh->s_q < WGNN__CPU_CHANNEL_ROWS ? WGNN_SDPA_CHANNEL : WGNN_SDPA_THREE_PASS;
    uint64_t br = wgnn__sdpa_fused_rows(ctx, sh);
    if (br) {
        if (wgnn__cpu_adapter(ctx) && sh->s_q * 4u < br) pref[n++] = WGNN_SDPA_CHANNEL;
        pref[n++] = WGNN_SDPA_FUSED;
    }
    pref[n++] = tp;
    char saved[WGNN__ERR_LEN];
    memcpy(saved, ctx->err, sizeof saved);
    for (int i = 0; i < n; i++) {
        wgnn_status s = pref[i] == WGNN_SDPA_FUSED ? wgnn__sdpa_fused_fits(ctx, sh) : three_pass_fits(ctx, sh);
        if (s == WGNN_OK) {
            memcpy(ctx->err, saved, sizeof saved);
            return pref[i];
        }
    }
    memcpy(ctx->err, saved, sizeof saved);
    return pref[0]; /* none fits: its plan names the limit */
}

static wgnn_status sdpa_plan_routed(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                    wgnn_tensor *out, wgnn__plan *p, wgnn_sdpa_impl *routed) {
    sdpa_shape sh;
    shape_of(n, &sh);
    wgnn_sdpa_impl impl = route(ctx, &sh, (wgnn_sdpa_impl)n->arg[A_IMPL].i[0]);
    if (routed) *routed = impl;
    if (impl == WGNN_SDPA_FUSED) return wgnn__sdpa_plan_fused(ctx, &sh, in, NULL, out, p);
    return plan_three_pass(ctx, &sh, in, out, impl == WGNN_SDPA_CHANNEL, p);
}

static wgnn_status plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                        wgnn_tensor *const *out, wgnn__plan *p) {
    return sdpa_plan_routed(ctx, n, in, out[0], p, NULL);
}

/* ---- reference --------------------------------------------------------------- */

static wgnn_status ref(wgnn__node *n, const void *const *in, void *const *out) {
    sdpa_shape sh;
    shape_of(n, &sh);
    uint64_t nq = sh.bh * sh.s_q * sh.d, nkv = sh.bh / sh.group * sh.s_kv * sh.d;
    if (!sh.f16) {
        wgnn_ref_sdpa_ex(in[0], in[1], in[2], sh.mask ? in[3] : NULL, sh.bh, sh.group, sh.s_q, sh.s_kv, sh.d, sh.scale,
                         sh.causal, out[0]);
        return WGNN_OK;
    }
    float *q = malloc(nq * 4), *k = malloc(nkv * 4), *v = malloc(nkv * 4), *o = malloc(nq * 4);
    wgnn_status s = WGNN_OK;
    if (q && k && v && o) {
        wgnn_f16_to_f32(in[0], q, nq);
        wgnn_f16_to_f32(in[1], k, nkv);
        wgnn_f16_to_f32(in[2], v, nkv);
        wgnn_ref_sdpa_ex(q, k, v, sh.mask ? in[3] : NULL, sh.bh, sh.group, sh.s_q, sh.s_kv, sh.d, sh.scale, sh.causal,
                         o);
        wgnn_f32_to_f16(o, out[0], nq);
    } else {
        s = wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    free(q);
    free(k);
    free(v);
    free(o);
    return s;
}

static const wgnn_op_arg_info k_args[] = {
    {"scale", "float", "", "multiplies q.k^T; default 1/sqrt(D)"},
    {"impl", "auto|three-pass|fused|channel", "auto", "implementation; auto routes by shape and device limits"},
    {"causal", "none|top_left|bottom_right", "none",
     "top_left: query i sees keys j <= i (PyTorch's is_causal); bottom_right: j <= i + S_kv - S_q (KV cache); "
     "fused only"},
    {"enable_gqa", "bool", "false", "true: k and v may have H_kv heads, H % H_kv == 0, q head h reading kv head "
                                    "h / (H / H_kv) (grouped-query attention); fused only"},
};

const wgnn__op wgnn__op_sdpa = {
    {"sdpa", "scaled dot-product attention: softmax(q.k^T*scale + mask, causal).v", "q, k, v, [mask]",
     "q [..., H, S_q, D], k and v [..., H_kv, S_kv, D] (H_kv == H, or H % H_kv == 0 with enable_gqa), "
     "mask [..., H, S_q, S_kv] (float32) -> q's shape; D % 4 == 0; "
     "float32, or float16 q/k/v/out (fused implementation, f32 arithmetic)",
     3, 4, 4, k_args},
    check,
    plan,
    ref,
    false,
};

/* ---- sdpa_qkvpacked ---------------------------------------------------------------
 * FlashAttention's qkvpacked layout: one tensor qkv [B, S, 3, H, D] (a
 * stacked q|k|v projection viewed so), out [B, S, H, D] (the layout the out
 * projection reads): the fused kernel reads q, k and v and writes out by
 * strides, so an encoder block needs no head split and no merge. */

enum { P_SCALE, P_CAUSAL };

static wgnn_status packed_check(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (x->dtype != WGNN_F32 && x->dtype != WGNN_F16)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "qkv is %s; sdpa_qkvpacked takes float32 or float16",
                              wgnn_dtype_name(x->dtype));
    if (x->rank != 5 || x->dims[2] != 3)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "qkv is %s; it must be [B, S, 3, H, D]", xs);
    if (x->dims[4] % 4 != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "head dim D=%lld must be a multiple of 4",
                              (long long)x->dims[4]);
    if (n->arg[P_SCALE].set && !isfinite(n->arg[P_SCALE].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "scale %g is not finite", n->arg[P_SCALE].f);
    if (n->n_in > 1) {
        const wgnn_desc *bias = &n->in[1];
        char bs[160];
        wgnn__dims_str(bias, bs, sizeof bs);
        if (bias->dtype != WGNN_F32 || bias->rank != 1 || bias->dims[0] != 3 * x->dims[3] * x->dims[4])
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "bias is %s %s; it must be float32 [3*H*D] = [%lld] (the q|k|v projection's bias)",
                                  wgnn_dtype_name(bias->dtype), bs, (long long)(3 * x->dims[3] * x->dims[4]));
    }
    n->n_out = 1;
    n->out[0] = (wgnn_desc){x->dtype, 4, {x->dims[0], x->dims[1], x->dims[3], x->dims[4]}};
    return WGNN_OK;
}

static void packed_shape(const wgnn__node *n, sdpa_shape *sh) {
    const wgnn_desc *x = &n->in[0];
    memset(sh, 0, sizeof *sh);
    sh->bh = (uint64_t)(x->dims[0] * x->dims[3]);
    sh->group = 1;
    sh->causal = n->arg[P_CAUSAL].i[0] ? WGNN_SDPA_CAUSAL_TOP_LEFT : WGNN_SDPA_CAUSAL_NONE;
    sh->s_q = sh->s_kv = (uint64_t)x->dims[1];
    sh->d = (uint64_t)x->dims[4];
    sh->f16 = x->dtype == WGNN_F16;
    sh->scale = n->arg[P_SCALE].set ? n->arg[P_SCALE].f : 1.0 / sqrt((double)sh->d);
    sh->n_h = (uint64_t)x->dims[3];
    sh->packed = true;
    sh->qbias = n->n_in > 1;
}

static wgnn_status packed_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                               wgnn_tensor *const *out, wgnn__plan *p) {
    sdpa_shape sh;
    packed_shape(n, &sh);
    if (in[0]->buf_size > ctx->limits.maxStorageBufferBindingSize)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa_qkvpacked: qkv (%llu bytes) passes the device's maxStorageBufferBindingSize (%llu "
                         "bytes); use sdpa on q, k and v [B, H, S, D]",
                         (unsigned long long)in[0]->buf_size,
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    const wgnn_tensor *qkv[4] = {in[0], in[0], in[0], sh.qbias ? in[1] : NULL};
    return wgnn__sdpa_plan_fused(ctx, &sh, qkv, NULL, out[0], p);
}

static wgnn_status packed_ref(wgnn__node *n, const void *const *in, void *const *out) {
    sdpa_shape sh;
    packed_shape(n, &sh);
    uint64_t B = (uint64_t)n->in[0].dims[0], S = sh.s_q, H = sh.n_h, D = sh.d, per = B * H * S * D;
    float *x = malloc(3 * per * 4), *q = malloc(3 * per * 4), *o = malloc(2 * per * 4);
    if (!x || !q || !o) {
        free(x);
        free(q);
        free(o);
        return wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    if (sh.f16) wgnn_f16_to_f32(in[0], x, 3 * per);
    else memcpy(x, in[0], 3 * per * 4);
    if (sh.qbias) /* attention over qkv + bias, as the projection with its bias gives it */
        for (uint64_t r = 0; r < B * S; r++)
            for (uint64_t e = 0; e < 3 * H * D; e++) x[r * 3 * H * D + e] += ((const float *)in[1])[e];
    /* [B, S, 3, H, D] -> q, k, v [B, H, S, D] */
    for (uint64_t b = 0; b < B; b++)
        for (uint64_t t = 0; t < S; t++)
            for (uint64_t w = 0; w < 3; w++)
                for (uint64_t h = 0; h < H; h++)
                    memcpy(q + w * per + ((b * H + h) * S + t) * D, x + (((b * S + t) * 3 + w) * H + h) * D, D * 4);
    wgnn_ref_sdpa_ex(q, q + per, q + 2 * per, NULL, B * H, 1, S, S, D, sh.scale, sh.causal, o);
    /* [B, H, S, D] -> [B, S, H, D] */
    float *y = o + per;
    for (uint64_t b = 0; b < B; b++)
        for (uint64_t h = 0; h < H; h++)
            for (uint64_t t = 0; t < S; t++) memcpy(y + ((b * S + t) * H + h) * D, o + ((b * H + h) * S + t) * D, D * 4);
    if (sh.f16) wgnn_f32_to_f16(y, out[0], per);
    else memcpy(out[0], y, per * 4);
    free(x);
    free(q);
    free(o);
    return WGNN_OK;
}

static const wgnn_op_arg_info k_packed_args[] = {
    {"scale", "float", "", "multiplies q.k^T; default 1/sqrt(D)"},
    {"is_causal", "bool", "false", "true: query i sees keys j <= i"},
};

const wgnn__op wgnn__op_sdpa_qkvpacked = {
    {"sdpa_qkvpacked",
     "scaled dot-product attention on a packed q|k|v (FlashAttention's qkvpacked layout), heads merged in the output",
     "qkv, [bias]",
     "qkv [B, S, 3, H, D] (q, k, v stacked: a q|k|v projection [B, S, 3*H*D] viewed so) -> [B, S, H, D]; D % 4 == 0; "
     "float32, or float16 (f32 arithmetic); qkv within one storage binding (fused implementation); bias float32 "
     "[3*H*D]: attention over qkv + bias (the projection's bias, so that the projection runs without it: q's "
     "part is added to q, k's drops out of the softmax, v's is added to each output row)",
     1, 2, 2, k_packed_args},
    packed_check,
    packed_plan,
    packed_ref,
    false,
};

/* ---- the typed C entry points ------------------------------------------------ */

static wgnn_status sdpa_node(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k, const wgnn_tensor *v,
                             const wgnn_sdpa_options *o, char args[4][64], const char **argv, int *argc) {
    *argc = 0;
    if (!q || !k || !v)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: %s must not be NULL", !q ? "q" : !k ? "k" : "v");
    if (!o) return WGNN_OK;
    static const char *const impls[4] = {"auto", "three-pass", "fused", "channel"};
    static const char *const causals[3] = {"none", "top_left", "bottom_right"};
    if ((unsigned)o->impl > 3u) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: unknown impl %d", (int)o->impl);
    if ((unsigned)o->causal > 2u)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: unknown causal %d (0 none, 1 top_left, 2 bottom_right)",
                         o->causal);
    if (o->has_scale) {
        if (!isfinite(o->scale))
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: scale %g is not finite", (double)o->scale);
        snprintf(args[*argc], 64, "scale=%.9g", (double)o->scale);
        argv[*argc] = args[*argc];
        (*argc)++;
    }
    snprintf(args[*argc], 64, "impl=%s", impls[o->impl]);
    argv[*argc] = args[*argc];
    (*argc)++;
    snprintf(args[*argc], 64, "causal=%s", causals[o->causal]);
    argv[*argc] = args[*argc];
    (*argc)++;
    snprintf(args[*argc], 64, "enable_gqa=%s", o->enable_gqa ? "true" : "false");
    argv[*argc] = args[*argc];
    (*argc)++;
    return WGNN_OK;
}

wgnn_status wgnn_sdpa(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k, const wgnn_tensor *v,
                      const wgnn_sdpa_options *opts, wgnn_tensor *out) {
    if (!ctx) return WGNN_ERR_INVALID_ARGUMENT;
    char args[4][64];
    const char *argv[4];
    int argc = 0;
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    s = sdpa_node(ctx, q, k, v, opts, args, argv, &argc);
    if (s == WGNN_OK && !out) s = wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: out must not be NULL");
    if (s != WGNN_OK) return wgnn__leave(ctx, s);
    const wgnn_tensor *in[4] = {q, k, v, opts ? opts->mask : NULL};
    return wgnn__leave(ctx, wgnn__op_run(ctx, "sdpa", in, in[3] ? 4 : 3, argv, argc, &out, 1));
}

wgnn_status wgnn_sdpa_scratch_bytes(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k,
                                    const wgnn_tensor *v, const wgnn_sdpa_options *opts, uint64_t *bytes,
                                    wgnn_sdpa_impl *routed) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    char args[4][64];
    const char *argv[4];
    int argc = 0;
    s = wgnn__check_health(ctx);
    if (s == WGNN_OK && !bytes)
        s = wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa_scratch_bytes: bytes must not be NULL");
    if (s == WGNN_OK) s = sdpa_node(ctx, q, k, v, opts, args, argv, &argc);
    if (s != WGNN_OK) return wgnn__leave(ctx, s);
    const wgnn_tensor *mask = opts ? opts->mask : NULL;
    wgnn_desc din[4];
    const wgnn_tensor *tin[4] = {q, k, v, mask};
    int n_in = mask ? 4 : 3;
    for (int i = 0; i < n_in; i++) {
        if (tin[i]->ctx != ctx)
            return wgnn__leave(ctx, wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: input %d belongs to another context", i));
        memset(&din[i], 0, sizeof din[i]);
        din[i].dtype = tin[i]->dtype;
        din[i].rank = tin[i]->rank;
        memcpy(din[i].dims, tin[i]->dims, sizeof din[i].dims);
    }
    wgnn_desc dout;
    int n_out = 0;
    s = wgnn_op_shapes("sdpa", din, n_in, argv, argc, &dout, 1, &n_out, ctx->err, sizeof ctx->err);
    if (s != WGNN_OK) return wgnn__leave(ctx, s);
    wgnn__node n;
    memset(&n, 0, sizeof n);
    n.op = &wgnn__op_sdpa;
    n.n_in = n_in;
    memcpy(n.in, din, sizeof din);
    n.arg[A_IMPL].set = true;
    n.arg[A_IMPL].i[0] = opts ? opts->impl : WGNN_SDPA_AUTO;
    n.arg[A_CAUSAL].set = true;
    n.arg[A_CAUSAL].i[0] = opts ? opts->causal : WGNN_SDPA_CAUSAL_NONE;
    n.arg[A_GQA].set = true;
    n.arg[A_GQA].i[0] = opts && opts->enable_gqa;
    if (opts && opts->has_scale) {
        n.arg[A_SCALE].set = true;
        n.arg[A_SCALE].f = opts->scale;
    }
    /* The plan itself (pipelines built, nothing recorded): what runs is what
     * is reported. q stands in for out, which is only bound. A plan that
     * fails on a device limit reports 0 bytes: wgnn_sdpa then names the limit. */
    wgnn__plan p = {0};
    wgnn_sdpa_impl impl = WGNN_SDPA_AUTO;
    char saved[WGNN__ERR_LEN];
    memcpy(saved, ctx->err, sizeof saved);
    s = sdpa_plan_routed(ctx, &n, tin, (wgnn_tensor *)q, &p, &impl);
    *bytes = s == WGNN_OK ? wgnn__plan_scratch_bytes(&p) : 0;
    wgnn__plan_free(&p);
    if (s == WGNN_ERR_LIMIT) {
        memcpy(ctx->err, saved, sizeof saved);
        s = WGNN_OK;
    }
    if (routed) *routed = impl;
    return wgnn__leave(ctx, s);
}
