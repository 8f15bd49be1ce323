/* sdpa_kvcache.c - the row "sdpa_kvcache": attention of q over the first
 * cache_seqlens[b] keys of a KV cache (flash-attention's
 * flash_attn_with_kvcache), as decoders run it: the fused plan of
 * src/ops/sdpa.c with the lengths read on the GPU, or, for decoding shapes
 * (group * S_q <= 8 query rows a kv head), shaders/sdpa_decode.wgsl
 * (WGNN_SDPA_DECODE=0 turns it off), then the split-KV reduce. Reference: wgnn_ref_sdpa_ex per batch element (src/ref/
 * sdpa_ref.c); cases in tests/cases/sdpa.inc. */
#include "op.h"
#include "sdpa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Params of shaders/sdpa_decode.wgsl, written once. */
#define DECODE_PARAMS(X, S)                                                                          \
    X(S, u32, n_groups) /* B * H_kv * n_split */                                                     \
    X(S, u32, n_b) X(S, u32, h_kv) X(S, u32, h) X(S, u32, group) X(S, u32, s_q) X(S, u32, s_kv)     \
    X(S, u32, kv_chunk) /* keys a split, a multiple of W * U */                                      \
    X(S, u32, n_rows)   /* B * H * S_q */                                                            \
    X(S, f32, qscale) X(S, u32, causal)
WGNN__PARAMS_STRUCT(decode_params, DECODE_PARAMS);
WGNN__PARAMS_CHECK(decode_params, DECODE_PARAMS)

enum { KA_SCALE, KA_CAUSAL };

static wgnn_status kv_check(wgnn__node *n) {
    static const char *const names[3] = {"q", "k_cache", "v_cache"};
    const wgnn_desc *q = &n->in[0], *k = &n->in[1], *v = &n->in[2], *l = &n->in[3];
    for (int i = 0; i < 3; i++)
        if ((n->in[i].dtype != WGNN_F32 && n->in[i].dtype != WGNN_F16) || n->in[i].dtype != q->dtype)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "%s is %s; q, k_cache and v_cache are all float32 or all float16", names[i],
                                  wgnn_dtype_name(n->in[i].dtype));
    char qs[160], ks[160], vs[160], ls[160];
    wgnn__dims_str(q, qs, sizeof qs);
    wgnn__dims_str(k, ks, sizeof ks);
    wgnn__dims_str(v, vs, sizeof vs);
    wgnn__dims_str(l, ls, sizeof ls);
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "q %s, k_cache %s and v_cache %s must be rank 4: [B, H, S_q, D] and [B, H_kv, S_max, D]",
                              qs, ks, vs);
    for (int i = 0; i < 4; i++)
        if (k->dims[i] != v->dims[i])
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "k_cache %s and v_cache %s must have the same dims", ks,
                                  vs);
    if (k->dims[0] != q->dims[0])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "q %s and k_cache %s differ in batch", qs, ks);
    if (q->dims[1] % k->dims[1] != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "q's %lld heads must be a multiple of the cache's %lld heads (q %s, k_cache %s)",
                              (long long)q->dims[1], (long long)k->dims[1], qs, ks);
    if (q->dims[3] != k->dims[3] || q->dims[3] % 4 != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "head dim D of q %s and k_cache %s must be equal and a multiple of 4", qs, ks);
    if (q->dims[2] > k->dims[2])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "q %s has more rows (S_q) than the cache %s has slots",
                              qs, ks);
    if (l->dtype != WGNN_I32 || l->rank != 1 || l->dims[0] != q->dims[0])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "cache_seqlens is %s %s; it must be int32 [B] = [%lld]",
                              wgnn_dtype_name(l->dtype), ls, (long long)q->dims[0]);
    if (n->arg[KA_SCALE].set && !isfinite(n->arg[KA_SCALE].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "scale %g is not finite", n->arg[KA_SCALE].f);
    n->n_out = 1;
    n->out[0] = *q;
    return WGNN_OK;
}

static void kv_shape(const wgnn__node *n, sdpa_shape *sh) {
    const wgnn_desc *q = &n->in[0], *k = &n->in[1];
    memset(sh, 0, sizeof *sh);
    sh->bh = (uint64_t)q->dims[0] * (uint64_t)q->dims[1];
    sh->n_h = (uint64_t)q->dims[1];
    sh->group = (uint64_t)(q->dims[1] / k->dims[1]);
    sh->s_q = (uint64_t)q->dims[2];
    sh->s_kv = (uint64_t)k->dims[2];
    sh->d = (uint64_t)q->dims[3];
    sh->causal = n->arg[KA_CAUSAL].i[0] ? WGNN_SDPA_CAUSAL_BOTTOM_RIGHT : WGNN_SDPA_CAUSAL_NONE;
    sh->f16 = q->dtype == WGNN_F16;
    sh->kvlen = true;
    sh->scale = n->arg[KA_SCALE].set ? n->arg[KA_SCALE].f : 1.0 / sqrt((double)sh->d);
}

/* Decoding (shaders/sdpa_decode.wgsl): a few query rows a kv head, the
 * group's query heads together, a subgroup a key; false when the shape or
 * the device does not suit it (the fused kernel then runs). */
typedef struct decode_cfg {
    uint32_t wg, sg, u, qx, rows; /* threads, subgroup size, keys a subgroup at a time, pieces a lane, rows */
} decode_cfg;

static bool decode_fits(const wgnn_context *ctx, const sdpa_shape *sh, const wgnn_tensor *const *in, decode_cfg *c) {
    if (ctx->knobs.sdpa_decode == 0 || !ctx->has_subgroups) return false;
    uint32_t sg = ctx->info.subgroup_min_size;
    if (sg != ctx->info.subgroup_max_size || sg < 4 || sg > 128 || (sg & (sg - 1)) != 0) return false;
    uint64_t d4 = sh->d / 4, rows = sh->group * sh->s_q;
    if (sh->d % 4 != 0 || d4 > 64 || rows > 8) return false;
    c->sg = sg;
    c->wg = sg * 4 > 128 ? sg * 4 : 128;
    c->u = 4;
    c->qx = (uint32_t)((d4 + sg - 1) / sg);
    c->rows = (uint32_t)rows;
    if (rows * c->qx > 16) return false; /* registers */
    const WGPULimits *L = &ctx->limits;
    if (c->wg > L->maxComputeInvocationsPerWorkgroup || c->wg > L->maxComputeWorkgroupSizeX) return false;
    uint64_t w = c->wg / sg, smem = w * rows * d4 * 16 + 2 * w * rows * 4 + 4;
    if (smem > L->maxComputeWorkgroupStorageSize) return false;
    for (int i = 0; i < 3; i++)
        if (in[i]->nbytes > L->maxStorageBufferBindingSize) return false;
    if (sh->bh * sh->s_kv * d4 > UINT32_MAX) return false;
    return true;
}

static wgnn_status plan_decode(wgnn_context *ctx, const sdpa_shape *sh, const wgnn_tensor *const *in,
                               wgnn_tensor *out, wgnn__plan *p, const decode_cfg *c) {
    uint32_t d4 = (uint32_t)(sh->d / 4);
    uint64_t n_b = sh->bh / sh->n_h, h_kv = sh->n_h / sh->group, units = n_b * h_kv;
    /* splits: about 256 workgroups, each a multiple of the keys one pass of
     * the workgroup takes (W subgroups x U keys) */
    uint64_t step = (uint64_t)(c->wg / c->sg) * c->u, want = (256 + units - 1) / units;
    uint64_t chunk = (sh->s_kv + want - 1) / want;
    chunk = (chunk + step - 1) / step * step;
    uint64_t n_split = (sh->s_kv + chunk - 1) / chunk;
    uint64_t rows = sh->bh * sh->s_q;
    if (n_split * rows * sh->d * 4 > ctx->limits.maxStorageBufferBindingSize)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa_kvcache: the split partials pass one storage binding");
    char pre[1536];
    snprintf(pre, sizeof pre,
             "enable subgroups;\n%sconst D4: u32 = %uu;\nconst R: u32 = %uu;\nconst SG: u32 = %uu;\nconst WG: u32 = %uu;\n"
             "const U: u32 = %uu;\nconst QX: u32 = %uu;\n%s",
             WGNN__PARAMS_WGSL(DECODE_PARAMS), d4, c->rows, c->sg, c->wg, c->u, c->qx,
             sh->f16 ? wgnn__sdpa_in4_f16 : wgnn__sdpa_in4_f32);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "sdpa_decode", pre, NULL, 0, &pipe);
    uint32_t gx, gy;
    uint64_t groups = units * n_split;
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, groups, ctx->limits.maxComputeWorkgroupsPerDimension, "sdpa_kvcache",
                                             &gx, &gy);
    if (s != WGNN_OK) return s;
    int part_o = wgnn__plan_scratch(p, n_split * rows * sh->d * 4u), part_ml = wgnn__plan_scratch(p, n_split * rows * 8u);
    if (part_o < 0 || part_ml < 0) return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa_kvcache: no scratch slot left");
    decode_params dp = {(uint32_t)groups,         (uint32_t)n_b,      (uint32_t)h_kv,
                        (uint32_t)sh->n_h,        (uint32_t)sh->group, (uint32_t)sh->s_q,
                        (uint32_t)sh->s_kv,       (uint32_t)chunk,     (uint32_t)rows,
                        (float)(sh->scale * 1.4426950408889634), sh->causal != WGNN_SDPA_CAUSAL_NONE ? 1u : 0u};
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &dp, sizeof dp, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < 4; i++) wgnn__plan_bind(d, in[i]->buf, 0, 0);
    wgnn__plan_bind_scratch(d, (uint32_t)part_o, 0, 0);
    wgnn__plan_bind_scratch(d, (uint32_t)part_ml, 0, 0);
    wgnn__plan_bind(d, wgnn__data_error_buffer(ctx), 0, 0);
    return wgnn__sdpa_split_reduce(ctx, p, sh->f16, rows, d4, (uint32_t)n_split, part_o, part_ml, out->buf, 0, 0);
}

static wgnn_status kv_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                           wgnn_tensor *const *out, wgnn__plan *p) {
    sdpa_shape sh;
    kv_shape(n, &sh);
    decode_cfg c;
    if (decode_fits(ctx, &sh, in, &c)) return plan_decode(ctx, &sh, in, out[0], p, &c);
    return wgnn__sdpa_plan_fused(ctx, &sh, in, out[0], p);
}

static wgnn_status kv_ref(wgnn__node *n, const void *const *in, void *const *out) {
    sdpa_shape sh;
    kv_shape(n, &sh);
    const int32_t *lens = in[3];
    uint64_t B = (uint64_t)n->in[0].dims[0], hkv = sh.n_h / sh.group, es = sh.f16 ? 2u : 4u;
    for (uint64_t b = 0; b < B; b++)
        if (lens[b] < 0 || (uint64_t)lens[b] > sh.s_kv)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "cache_seqlens[%llu] = %d is out of range: the cache has %llu slots",
                                  (unsigned long long)b, lens[b], (unsigned long long)sh.s_kv);
    uint64_t nq = sh.n_h * sh.s_q * sh.d, nkv = hkv * sh.s_kv * sh.d;
    float *q = malloc(nq * 4), *k = malloc(nkv * 4 + 4), *v = malloc(nkv * 4 + 4), *o = malloc(nq * 4);
    wgnn_status s = WGNN_OK;
    if (!q || !k || !v || !o) s = wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint64_t b = 0; s == WGNN_OK && b < B; b++) {
        uint64_t L = (uint64_t)lens[b];
        const unsigned char *qb = (const unsigned char *)in[0] + b * nq * es;
        if (sh.f16) wgnn_f16_to_f32((const uint16_t *)qb, q, nq);
        else memcpy(q, qb, nq * 4);
        /* the first L keys of each kv head, packed */
        for (uint64_t h = 0; h < hkv; h++) {
            uint64_t src = (b * hkv + h) * sh.s_kv * sh.d, dst = h * L * sh.d, cnt = L * sh.d;
            if (sh.f16) {
                wgnn_f16_to_f32((const uint16_t *)in[1] + src, k + dst, cnt);
                wgnn_f16_to_f32((const uint16_t *)in[2] + src, v + dst, cnt);
            } else {
                memcpy(k + dst, (const float *)in[1] + src, cnt * 4);
                memcpy(v + dst, (const float *)in[2] + src, cnt * 4);
            }
        }
        if (L == 0) memset(o, 0, nq * 4);
        else wgnn_ref_sdpa_ex(q, k, v, NULL, sh.n_h, sh.group, sh.s_q, L, sh.d, sh.scale, sh.causal, o);
        unsigned char *ob = (unsigned char *)out[0] + b * nq * es;
        if (sh.f16) wgnn_f32_to_f16(o, (uint16_t *)ob, nq);
        else memcpy(ob, o, nq * 4);
    }
    free(q);
    free(k);
    free(v);
    free(o);
    return s;
}

static const wgnn_op_arg_info k_kv_args[] = {
    {"scale", "float", "", "multiplies q.k^T; default 1/sqrt(D)"},
    {"causal", "bool", "true",
     "true: q's rows are the last S_q positions of the L cached keys, row i seeing keys j <= i + L - S_q; "
     "false: every row sees all L keys"},
};

const wgnn__op wgnn__op_sdpa_kvcache = {
    {"sdpa_kvcache",
     "attention of q over the first cache_seqlens[b] keys of a KV cache (flash-attention's "
     "flash_attn_with_kvcache; decoding and chunked prefill)",
     "q, k_cache, v_cache, cache_seqlens",
     "q [B, H, S_q, D], k_cache and v_cache [B, H_kv, S_max, D] (H % H_kv == 0: grouped-query attention by "
     "index), cache_seqlens int32 [B] with values L in [0, S_max] (the cache holds positions 0..L-1, the new "
     "rows included) -> q's shape; keys at L and past are never read; a row that sees no key gives zeros; "
     "D % 4 == 0; float32, or float16 q/k/v/out; on the GPU an L out of range is clamped and reported by the "
     "next sync, the reference gives an error",
     4, 4, 2, k_kv_args},
    kv_check,
    kv_plan,
    kv_ref,
    false,
};
