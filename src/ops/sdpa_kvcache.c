/* sdpa_kvcache.c - the row "sdpa_kvcache": attention of q over the first
 * cache_seqlens[b] keys of a KV cache (flash-attention's
 * flash_attn_with_kvcache), as decoders run it: the fused plan of
 * src/ops/sdpa.c with the lengths read on the GPU, or, for decoding shapes
 * (group * S_q <= 8 query rows a kv head), shaders/sdpa_decode.wgsl
 * (WGNN_SDPA_DECODE=0 turns it off), then the split-KV reduce. Reference: wgnn_ref_sdpa_ex per batch element (src/ref/
 * sdpa_ref.c); cases in tests/cases/sdpa.inc. */
#include "norm.h" /* qkv_rope's kernel and reference row */
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
    X(S, u32, n_split)  /* key splits: block n of W * U keys to split n % n_split */                 \
    X(S, u32, n_rows)   /* B * H * S_q */                                                            \
    X(S, f32, qscale) X(S, u32, causal)                                                              \
    X(S, u32, ml0) /* the (max, sum) pairs' first vec4 in part */                                    \
    X(S, f32, eps) /* QKV: q_norm / k_norm's epsilon */
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

/* Workgroup memory of the decode kernel at w subgroups: the merge's rows
 * (sO), maxima and sums (sM, sL), and sLen / sAppend. */
static uint64_t decode_smem(uint64_t w, uint64_t rows, uint64_t d4) { return w * rows * d4 * 16 + 2 * w * rows * 4 + 8; }

static bool decode_fits(const wgnn_context *ctx, const sdpa_shape *sh, const uint64_t *in_bytes, bool qkv,
                        decode_cfg *c) {
    if (ctx->knobs.sdpa_decode == 0 || !ctx->has_subgroups) return false;
    uint32_t sg = ctx->info.subgroup_min_size;
    if (sg != ctx->info.subgroup_max_size || sg < 4 || sg > 128 || (sg & (sg - 1)) != 0) return false;
    uint64_t d4 = sh->d / 4, rows = sh->group * sh->s_q;
    if (sh->d % 4 != 0 || d4 > 64 || rows > 8) return false;
    c->sg = sg;
    c->u = ctx->knobs.decode_u ? ctx->knobs.decode_u : 4;
    c->qx = (uint32_t)((d4 + sg - 1) / sg);
    c->rows = (uint32_t)rows;
    if (rows * c->qx > 16) return false; /* registers */
    const WGPULimits *L = &ctx->limits;
    /* 256 threads (8 subgroups of 32 on the H200: a pass of 32 keys, one
     * pass a split at context 512; 128 measured 1.5% slower a Qwen3-0.6B
     * decode step, session 16), fewer where the merge's workgroup memory
     * does not fit, never under 4 subgroups */
    uint32_t wg = ctx->knobs.decode_wg ? ctx->knobs.decode_wg : 256;
    if (wg < sg * 4) wg = sg * 4;
    while (wg > sg * 4 && (wg > L->maxComputeInvocationsPerWorkgroup || wg > L->maxComputeWorkgroupSizeX ||
                           decode_smem(wg / sg, rows, d4) > L->maxComputeWorkgroupStorageSize))
        wg /= 2;
    c->wg = wg;
    uint64_t w = c->wg / sg;
    if (c->wg > L->maxComputeInvocationsPerWorkgroup || c->wg > L->maxComputeWorkgroupSizeX ||
        decode_smem(w, rows, d4) > L->maxComputeWorkgroupStorageSize)
        return false;
    /* QKV: the staged rows (R query, S_q k, S_q v, S_q rotated k) fit in
     * the merge's W * R rows (W >= 4, S_q <= R) */
    if (qkv && rows + 3 * sh->s_q > w * rows) return false;
    for (int i = 0; i < 3; i++)
        if (in_bytes[i] > L->maxStorageBufferBindingSize) return false;
    if (sh->bh * sh->s_kv * d4 > UINT32_MAX) return false;
    /* QKV: ten storage bindings */
    if (qkv && L->maxStorageBuffersPerShaderStage < 10) return false;
    return true;
}

/* What plan_decode binds: q [B, H, S_q, D]; or, with the RoPE tables cos
 * and sin given (the kernel's QKV mode), the stacked projection and the
 * rest of what qkv_rope_cache takes (norms NULL without them). */
typedef struct decode_io {
    WGPUBuffer q, k, v, lens, out;
    WGPUBuffer cos, sin, qn, kn; /* QKV mode only */
    float eps;
} decode_io;

static wgnn_status plan_decode(wgnn_context *ctx, const sdpa_shape *sh, const decode_io *io, wgnn__plan *p,
                               const decode_cfg *c) {
    uint32_t d4 = (uint32_t)(sh->d / 4);
    bool qkv = io->cos != NULL;
    uint64_t n_b = sh->bh / sh->n_h, h_kv = sh->n_h / sh->group, units = n_b * h_kv;
    /* splits: about 256 workgroups (WGNN_DECODE_WGS), no more than the
     * cache has blocks of the keys one pass of the workgroup takes (W
     * subgroups x U keys); the kernel deals the blocks round the splits */
    uint64_t target = ctx->knobs.decode_wgs ? ctx->knobs.decode_wgs : 256;
    uint64_t blk = (uint64_t)(c->wg / c->sg) * c->u, want = (target + units - 1) / units;
    uint64_t n_split = (sh->s_kv + blk - 1) / blk;
    if (n_split > want) n_split = want;
    if (n_split < 1) n_split = 1;
    uint64_t rows = sh->bh * sh->s_q;
    /* one split and a float32 output: the kernel writes the output itself
     * and no reduce follows (the kernel's ONE); else one scratch: the
     * partial outputs, then the (max, sum) pairs from a binding offset the
     * device allows */
    bool one = n_split == 1 && !sh->f16;
    uint64_t align = ctx->limits.minStorageBufferOffsetAlignment > 16 ? ctx->limits.minStorageBufferOffsetAlignment : 16;
    uint64_t o_bytes = n_split * rows * sh->d * 4u, ml_off = (o_bytes + align - 1) / align * align;
    uint64_t part_bytes = ml_off + (n_split * rows + 1) / 2 * 16u;
    if (part_bytes > ctx->limits.maxStorageBufferBindingSize || part_bytes / 16u > UINT32_MAX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa_kvcache: the split partials pass one storage binding");
    static const char *const k_kv[2] = {
        "@group(0) @binding(2) var<storage, read> k: array<IN4>;\n"
        "@group(0) @binding(3) var<storage, read> v: array<IN4>;\n"
        "fn put_kv(i: u32, kv: vec4<f32>, vv: vec4<f32>) {}\n",
        "@group(0) @binding(2) var<storage, read_write> k: array<IN4>;\n"
        "@group(0) @binding(3) var<storage, read_write> v: array<IN4>;\n"
        "fn put_kv(i: u32, kv: vec4<f32>, vv: vec4<f32>) {\n    k[i] = kv;\n    v[i] = vv;\n}\n"};
    char pre[2048];
    snprintf(pre, sizeof pre,
             "enable subgroups;\n%sconst D4: u32 = %uu;\nconst R: u32 = %uu;\nconst SG: u32 = %uu;\nconst WG: u32 = %uu;\n"
             "const U: u32 = %uu;\nconst QX: u32 = %uu;\nconst QKV: bool = %s;\nconst HAS_NORM: bool = %s;\n"
             "const ONE: bool = %s;\n%s%s",
             WGNN__PARAMS_WGSL(DECODE_PARAMS), d4, c->rows, c->sg, c->wg, c->u, c->qx, qkv ? "true" : "false",
             io->qn ? "true" : "false", one ? "true" : "false", sh->f16 ? wgnn__sdpa_in4_f16 : wgnn__sdpa_in4_f32,
             k_kv[qkv]);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "sdpa_decode", pre, NULL, 0, &pipe);
    uint32_t gx, gy;
    uint64_t groups = units * n_split;
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, groups, ctx->limits.maxComputeWorkgroupsPerDimension, "sdpa_kvcache",
                                             &gx, &gy);
    if (s != WGNN_OK) return s;
    int part = one ? -1 : wgnn__plan_scratch(p, part_bytes);
    if (!one && part < 0) return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa_kvcache: no scratch slot left");
    decode_params dp = {(uint32_t)groups,         (uint32_t)n_b,       (uint32_t)h_kv,
                        (uint32_t)sh->n_h,        (uint32_t)sh->group, (uint32_t)sh->s_q,
                        (uint32_t)sh->s_kv,       (uint32_t)n_split,   (uint32_t)rows,
                        (float)(sh->scale * WGNN__SDPA_LOG2E),         sh->causal != WGNN_SDPA_CAUSAL_NONE ? 1u : 0u,
                        (uint32_t)(ml_off / 16u), io->eps};
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &dp, sizeof dp, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind(d, io->q, 0, 0);
    wgnn__plan_bind(d, io->k, 0, 0);
    wgnn__plan_bind(d, io->v, 0, 0);
    wgnn__plan_bind(d, io->lens, 0, 0);
    if (one) wgnn__plan_bind(d, io->out, 0, rows * sh->d * 4u);
    else wgnn__plan_bind_scratch(d, (uint32_t)part, 0, 0);
    wgnn__plan_bind(d, wgnn__data_error_buffer(ctx), 0, 0);
    WGPUBuffer extra[4] = {io->cos, io->sin, io->qn, io->kn};
    for (int i = 0; i < 4; i++) wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, extra[i], false), 0, 0);
    if (one) return WGNN_OK;
    wgnn__sdpa_kv_splits kv = {io->lens, (uint32_t)blk, (uint32_t)(rows / n_b), (uint32_t)sh->s_kv};
    return wgnn__sdpa_split_reduce(ctx, p, sh->f16, rows, d4, (uint32_t)n_split, part, part, ml_off, io->out, 0, 0, &kv);
}

static wgnn_status kv_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                           wgnn_tensor *const *out, wgnn__plan *p) {
    sdpa_shape sh;
    kv_shape(n, &sh);
    decode_cfg c;
    uint64_t bytes[3] = {in[0]->nbytes, in[1]->nbytes, in[2]->nbytes};
    if (decode_fits(ctx, &sh, bytes, false, &c)) {
        decode_io io = {in[0]->buf, in[1]->buf, in[2]->buf, in[3]->buf, out[0]->buf, NULL, NULL, NULL, NULL, 0};
        return plan_decode(ctx, &sh, &io, p, &c);
    }
    return wgnn__sdpa_plan_fused(ctx, &sh, in, NULL, out[0], p);
}

/* The reference over B batch elements: q [B, H, S_q, D] and the caches
 * [B, H_kv, S_max, D] (float32, or float16 with sh->f16) against the first
 * lens[b] keys into out; the caller has checked lens[b] in [0, S_max]. */
static wgnn_status kv_ref_core(wgnn__node *n, const sdpa_shape *shp, uint64_t B, const void *qin, const void *kin,
                               const void *vin, const int32_t *lens, void *out) {
    const sdpa_shape sh = *shp;
    uint64_t hkv = sh.n_h / sh.group, es = sh.f16 ? 2u : 4u;
    uint64_t nq = sh.n_h * sh.s_q * sh.d, nkv = hkv * sh.s_kv * sh.d;
    float *q = malloc(nq * 4), *k = malloc(nkv * 4 + 4), *v = malloc(nkv * 4 + 4), *o = malloc(nq * 4);
    wgnn_status s = WGNN_OK;
    if (!q || !k || !v || !o) s = wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
    for (uint64_t b = 0; s == WGNN_OK && b < B; b++) {
        uint64_t L = (uint64_t)lens[b];
        const unsigned char *qb = (const unsigned char *)qin + b * nq * es;
        if (sh.f16) wgnn_f16_to_f32((const uint16_t *)qb, q, nq);
        else memcpy(q, qb, nq * 4);
        /* the first L keys of each kv head, packed */
        for (uint64_t h = 0; h < hkv; h++) {
            uint64_t src = (b * hkv + h) * sh.s_kv * sh.d, dst = h * L * sh.d, cnt = L * sh.d;
            if (sh.f16) {
                wgnn_f16_to_f32((const uint16_t *)kin + src, k + dst, cnt);
                wgnn_f16_to_f32((const uint16_t *)vin + src, v + dst, cnt);
            } else {
                memcpy(k + dst, (const float *)kin + src, cnt * 4);
                memcpy(v + dst, (const float *)vin + src, cnt * 4);
            }
        }
        if (L == 0) memset(o, 0, nq * 4);
        else wgnn_ref_sdpa_ex(q, k, v, NULL, sh.n_h, sh.group, sh.s_q, L, sh.d, sh.scale, sh.causal, o);
        unsigned char *ob = (unsigned char *)out + b * nq * es;
        if (sh.f16) wgnn_f32_to_f16(o, (uint16_t *)ob, nq);
        else memcpy(ob, o, nq * 4);
    }
    free(q);
    free(k);
    free(v);
    free(o);
    return s;
}

static wgnn_status kv_ref(wgnn__node *n, const void *const *in, void *const *out) {
    sdpa_shape sh;
    kv_shape(n, &sh);
    const int32_t *lens = in[3];
    uint64_t B = (uint64_t)n->in[0].dims[0];
    for (uint64_t b = 0; b < B; b++)
        if (lens[b] < 0 || (uint64_t)lens[b] > sh.s_kv)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "cache_seqlens[%llu] = %d is out of range: the cache has %llu slots",
                                  (unsigned long long)b, lens[b], (unsigned long long)sh.s_kv);
    return kv_ref_core(n, &sh, B, in[0], in[1], in[2], lens, out[0]);
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

/* ---- qkv_sdpa_kvcache: qkv_rope_cache and sdpa_kvcache in one node ------- */

/* qkv, cos, sin, k_cache, v_cache, cache_seqlens, [q_norm, k_norm] */
enum { QK_HEADS, QK_KV_HEADS, QK_EPS, QK_SCALE };

static wgnn_status qkvkv_check(wgnn__node *n) {
    static const char *const names[8] = {"qkv", "cos", "sin", "k_cache", "v_cache", "cache_seqlens", "q_norm", "k_norm"};
    for (int i = 0; i < n->n_in; i++) {
        wgnn_dtype want = i == 5 ? WGNN_I32 : WGNN_F32;
        if (n->in[i].dtype != want)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s is %s; it must be %s", names[i],
                                  wgnn_dtype_name(n->in[i].dtype), wgnn_dtype_name(want));
    }
    if (n->n_in == 7) return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "give both q_norm and k_norm, or neither");
    const wgnn_desc *x = &n->in[0], *c = &n->in[1], *sn = &n->in[2], *kc = &n->in[3], *vc = &n->in[4], *l = &n->in[5];
    int64_t H = n->arg[QK_HEADS].i[0], Hk = n->arg[QK_KV_HEADS].i[0];
    char xs[160], cs[160], ks[160], vs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    wgnn__dims_str(c, cs, sizeof cs);
    wgnn__dims_str(kc, ks, sizeof ks);
    wgnn__dims_str(vc, vs, sizeof vs);
    if (H < 1 || Hk < 1 || H > 65536 || H % Hk != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "num_heads %lld must be in [1, 65536] and a multiple of num_kv_heads %lld", (long long)H,
                              (long long)Hk);
    if (x->rank != 3 || x->dims[2] % (H + 2 * Hk) != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "qkv is %s; it must be [B, n, (num_heads + 2 * num_kv_heads) * D] = [B, n, %lld * D]", xs,
                              (long long)(H + 2 * Hk));
    int64_t B = x->dims[0], T = x->dims[1], D = x->dims[2] / (H + 2 * Hk);
    if (D < 4 || D > 256 * 4 || D % 4 != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "head dim D=%lld must be a multiple of 4 in [4, 1024]",
                              (long long)D);
    bool ok = kc->rank == 4 && kc->dims[0] == B && kc->dims[1] == Hk && kc->dims[3] == D && kc->dims[2] >= T;
    for (int i = 0; ok && i < 4; i++) ok = vc->rank == 4 && vc->dims[i] == kc->dims[i];
    if (!ok)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "k_cache %s and v_cache %s must both be [B, num_kv_heads, ctx, D] = [%lld, %lld, ctx, "
                              "%lld] with ctx >= n = %lld",
                              ks, vs, (long long)B, (long long)Hk, (long long)D, (long long)T);
    if (c->rank != 2 || c->dims[1] != D || c->dims[0] < kc->dims[2] || sn->rank != 2 || sn->dims[0] != c->dims[0] ||
        sn->dims[1] != D)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "cos %s and sin must both be tables [P, D] with P >= ctx = %lld and D = %lld (row p: "
                              "position p)",
                              cs, (long long)kc->dims[2], (long long)D);
    if (l->rank != 1 || l->dims[0] != B)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "cache_seqlens must be int32 [B] = [%lld]", (long long)B);
    for (int i = 6; i < n->n_in; i++)
        if (n->in[i].rank != 1 || n->in[i].dims[0] != D)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s must be [D] = [%lld]", names[i], (long long)D);
    if (!(n->arg[QK_EPS].f >= 0) || !isfinite(n->arg[QK_EPS].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "eps %g must be finite and >= 0", n->arg[QK_EPS].f);
    if (n->arg[QK_SCALE].set && !isfinite(n->arg[QK_SCALE].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "scale %g is not finite", n->arg[QK_SCALE].f);
    n->n_out = 3;
    n->out[0] = (wgnn_desc){WGNN_F32, 4, {B, H, T, D}};
    n->out[1] = *kc;
    n->out[2] = *vc;
    return WGNN_OK;
}

static void qkvkv_shape(const wgnn__node *n, sdpa_shape *sh) {
    const wgnn_desc *x = &n->in[0];
    uint64_t H = (uint64_t)n->arg[QK_HEADS].i[0], Hk = (uint64_t)n->arg[QK_KV_HEADS].i[0];
    memset(sh, 0, sizeof *sh);
    sh->bh = (uint64_t)x->dims[0] * H;
    sh->n_h = H;
    sh->group = H / Hk;
    sh->s_q = (uint64_t)x->dims[1];
    sh->s_kv = (uint64_t)n->in[3].dims[2];
    sh->d = (uint64_t)x->dims[2] / (H + 2 * Hk);
    sh->causal = WGNN_SDPA_CAUSAL_BOTTOM_RIGHT;
    sh->kvlen = true;
    sh->scale = n->arg[QK_SCALE].set ? n->arg[QK_SCALE].f : 1.0 / sqrt((double)sh->d);
}

static wgnn_status qkvkv_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                              wgnn_tensor *const *out, wgnn__plan *p) {
    sdpa_shape sh;
    qkvkv_shape(n, &sh);
    bool norm = n->n_in == 8;
    uint64_t lim = ctx->limits.maxStorageBufferBindingSize;
    for (int i = 0; i < n->n_in; i++)
        if (in[i]->nbytes > lim)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "qkv_sdpa_kvcache: input %d (%llu bytes) passes the device's maxStorageBufferBindingSize "
                             "(%llu)",
                             i, (unsigned long long)in[i]->nbytes, (unsigned long long)lim);
    if (out[0]->nbytes > lim)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "qkv_sdpa_kvcache: the output (%llu bytes) passes one storage binding",
                         (unsigned long long)out[0]->nbytes);
    /* the caches: in place (wgnn__op_plan copied them first when the
     * outputs are other tensors), only the new rows written */
    float eps = (float)n->arg[QK_EPS].f;
    WGPUBuffer qn = norm ? in[6]->buf : NULL, kn = norm ? in[7]->buf : NULL;
    decode_cfg c;
    uint64_t bytes[3] = {in[0]->nbytes, out[1]->nbytes, out[2]->nbytes};
    if (decode_fits(ctx, &sh, bytes, true, &c)) {
        decode_io io = {in[0]->buf, out[1]->buf, out[2]->buf, in[5]->buf, out[0]->buf, in[1]->buf, in[2]->buf, qn, kn, eps};
        return plan_decode(ctx, &sh, &io, p, &c);
    }
    /* otherwise qkv_rope_cache's kernel (q into scratch, rows at
     * cache_seqlens[b] - n + t) and the fused attention */
    uint64_t B = sh.bh / sh.n_h, Hk = sh.n_h / sh.group;
    int qs = wgnn__plan_scratch(p, sh.bh * sh.s_q * sh.d * 4u);
    if (qs < 0) return wgnn__err(ctx, WGNN_ERR_LIMIT, "qkv_sdpa_kvcache: no scratch slot left");
    wgnn__binding qb = {NULL, 0, 0, (uint32_t)qs + 1u};
    wgnn__qkv_rope_io io = {
        .mode = WGNN__QKV_CACHE_LENS,
        .b = B,
        .n = sh.s_q,
        .h = sh.n_h,
        .hk = Hk,
        .d = sh.d,
        .ctx = sh.s_kv,
        .eps = eps,
        .x = in[0]->buf,
        .cos = in[1]->buf,
        .sin = in[2]->buf,
        .qn = qn,
        .kn = kn,
        .rows = in[5]->buf,
        .q = qb,
        .k = out[1]->buf,
        .v = out[2]->buf,
    };
    wgnn_status s = wgnn__qkv_rope_encode(ctx, p, &io, "qkv_sdpa_kvcache");
    if (s != WGNN_OK) return s;
    const wgnn_tensor *att_in[4] = {NULL, out[1], out[2], in[5]};
    return wgnn__sdpa_plan_fused(ctx, &sh, att_in, &qb, out[0], p);
}

static wgnn_status qkvkv_ref(wgnn__node *n, const void *const *in, void *const *out) {
    sdpa_shape sh;
    qkvkv_shape(n, &sh);
    const int32_t *lens = in[5];
    uint64_t B = sh.bh / sh.n_h, H = sh.n_h, Hk = H / sh.group, T = sh.s_q, D = sh.d, heads = H + 2 * Hk;
    for (uint64_t b = 0; b < B; b++)
        if (lens[b] < (int64_t)T || (uint64_t)lens[b] > sh.s_kv)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "cache_seqlens[%llu] = %d is out of range: the %llu new rows go to positions L - %llu "
                                  ".. L - 1 of a cache of %llu rows, so L must be in [%llu, %llu]",
                                  (unsigned long long)b, lens[b], (unsigned long long)T, (unsigned long long)T,
                                  (unsigned long long)sh.s_kv, (unsigned long long)T, (unsigned long long)sh.s_kv);
    const float *X = in[0], *C = in[1], *S = in[2], *qw = n->n_in == 8 ? in[6] : NULL, *kw = n->n_in == 8 ? in[7] : NULL;
    float *q = malloc(sh.bh * T * D * sizeof *q);
    double *tmp = malloc(D * sizeof *tmp);
    if (!q || !tmp) {
        free(q);
        free(tmp);
        return wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    double eps = n->arg[QK_EPS].f;
    for (uint64_t b = 0; b < B; b++)
        for (uint64_t t = 0; t < T; t++)
            for (uint64_t h = 0; h < heads; h++) {
                const float *src = X + ((b * T + t) * heads + h) * D;
                uint64_t pos = (uint64_t)lens[b] - T + t;
                if (h < H) {
                    wgnn__qkv_rope_row(src, (int64_t)D, qw, eps, C + pos * D, S + pos * D, tmp,
                                       q + ((b * H + h) * T + t) * D);
                } else if (h < H + Hk) {
                    float *dst = (float *)out[1] + ((b * Hk + h - H) * sh.s_kv + pos) * D;
                    wgnn__qkv_rope_row(src, (int64_t)D, kw, eps, C + pos * D, S + pos * D, tmp, dst);
                } else {
                    memcpy((float *)out[2] + ((b * Hk + h - H - Hk) * sh.s_kv + pos) * D, src, D * sizeof(float));
                }
            }
    wgnn_status s = kv_ref_core(n, &sh, B, q, out[1], out[2], lens, out[0]);
    free(q);
    free(tmp);
    return s;
}

static const wgnn_op_arg_info k_qkvkv_args[] = {
    {"num_heads", "int", NULL, "H: query heads"},
    {"num_kv_heads", "int", NULL, "Hk: key and value heads (H % Hk == 0)"},
    {"eps", "float", "1e-6", "q_norm / k_norm's epsilon"},
    {"scale", "float", "", "multiplies q.k^T; default 1/sqrt(D)"},
};

const wgnn__op wgnn__op_qkv_sdpa_kvcache = {
    {"qkv_sdpa_kvcache",
     "a decoder layer's attention from its stacked q|k|v projection: qkv_rope_cache (per-head q/k RMSNorm, "
     "rotate-half RoPE by position from cos/sin tables, k and v appended to the caches) then causal sdpa_kvcache, in "
     "one node (one kernel and the split-KV reduce when decoding; not an aten op)",
     "qkv, cos, sin, k_cache, v_cache, cache_seqlens, [q_norm, k_norm]",
     "qkv [B, n, (H + 2 Hk) * D] (q's H heads, then k's Hk, then v's Hk), cos and sin tables [P, D] (row p: "
     "position p; P >= ctx), k_cache and v_cache [B, Hk, ctx, D], cache_seqlens int32 [B] with values L in [n, ctx] "
     "(the length after this step: token t of batch element b is position L - n + t, rotated by that row of the "
     "tables and written to that cache row), q_norm and k_norm [D] -> attention [B, H, n, D] (row i sees keys "
     "<= L - n + i), k_cache and v_cache with the new rows written; pass the caches as outputs 1 and 2 (in place: "
     "wgnn_graph_op_into_n) to write only those rows; D % 4 == 0, D <= 1024; float32; on the GPU an L out of range writes "
     "no row and is reported by the next sync, the reference gives an error",
     6, 8, 4, k_qkvkv_args},
    qkvkv_check,
    qkvkv_plan,
    qkvkv_ref,
    WGNN__INPLACE(1, 3) | WGNN__INPLACE(2, 4),
};
