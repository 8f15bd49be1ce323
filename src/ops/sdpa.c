/* sdpa.c - scaled dot-product attention: validation, routing, dispatch.
 *
 * Two implementations share one validation:
 *   three-pass  sdpa_qk (or sdpa_qk_entry) -> sdpa_softmax -> sdpa_av, with two
 *               B*H*S_q*S_kv fp32 scratch buffers, chunked over batch*heads
 *               where they would pass the device's buffer limits;
 *   fused       sdpa_fused, one dispatch, online softmax, no score buffer.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Uniforms: C twins of the WGSL Params structs. */
typedef struct qk_params {
    uint32_t row_base, n_rows, s_q, s_kv, d4;
    float scale;
    uint32_t has_mask, pad;
} qk_params;
typedef struct av_params {
    uint32_t row_base, n_rows, s_q, s_kv, d4, pad0, pad1, pad2;
} av_params;
typedef struct softmax_params {
    uint32_t n_rows, n_cols, pad0, pad1;
} softmax_params;
typedef struct fused_params {
    uint32_t n_groups, n_qtiles, s_q, s_kv;
    float qscale;
    uint32_t kv_chunk, n_bh, pad;
} fused_params;
_Static_assert(sizeof(qk_params) == 32, "QkParams is 32 bytes");
_Static_assert(sizeof(av_params) == 32, "AvParams is 32 bytes");
_Static_assert(sizeof(softmax_params) == 16, "SoftmaxParams is 16 bytes");
_Static_assert(sizeof(fused_params) == 32, "fused Params is 32 bytes");

/* Three-pass QK route when fused cannot run (docs/PERFORMANCE.md): on the
 * H200 the per-entry kernel beat the row kernel at every shape measured, up
 * to 262144 query rows (B*H*S_q); on lavapipe only below a few dozen rows
 * (8 rows: 2.3 vs 3.1 ms; 256 rows: 4.3 vs 4.1 ms). */
#define WGNN__CPU_CHANNEL_ROWS 64u

typedef struct sdpa_shape {
    uint64_t bh;      /* product of batch dims and H */
    uint64_t s_q, s_kv, d;
    double scale;
    const wgnn_tensor *mask;
    bool f16; /* q, k, v and out are float16 (fused only) */
} sdpa_shape;

static void dims_str(const wgnn_tensor *t, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)t->dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* The three-pass kernels bind whole tensors. */
static wgnn_status check_binding(wgnn_context *ctx, const wgnn_tensor *t, const char *name) {
    if (t->buf_size > ctx->limits.maxStorageBufferBindingSize)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa three-pass: %s holds %llu bytes, past the device's maxStorageBufferBindingSize (%llu "
                         "bytes); the fused implementation splits such tensors over heads",
                         name, (unsigned long long)t->buf_size,
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    return WGNN_OK;
}

static wgnn_status validate(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k, const wgnn_tensor *v,
                            const wgnn_sdpa_options *o, const wgnn_tensor *out, sdpa_shape *sh) {
    if (!q || !k || !v || !out)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: %s must not be NULL",
                         !q ? "q" : !k ? "k" : !v ? "v" : "out");
    const wgnn_tensor *all[5] = {q, k, v, out, o ? o->mask : NULL};
    const char *names[5] = {"q", "k", "v", "out", "mask"};
    for (int i = 0; i < 5; i++) {
        if (!all[i]) continue;
        if (all[i]->ctx != ctx)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: %s belongs to another context", names[i]);
        bool ok = all[i]->dtype == WGNN_F32 || (i < 4 && all[i]->dtype == WGNN_F16);
        if (!ok)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: %s is %s; sdpa takes %s", names[i],
                             wgnn_dtype_name(all[i]->dtype),
                             i < 4 ? "float32, or float16 for all of q, k, v and out" : "a float32 mask");
        if (i < 4 && all[i]->dtype != q->dtype)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: q is %s but %s is %s: q, k, v and out share one dtype",
                             wgnn_dtype_name(q->dtype), names[i], wgnn_dtype_name(all[i]->dtype));
    }
    sh->f16 = q->dtype == WGNN_F16;
    if (sh->f16 && !ctx->has_f16)
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED,
                         "sdpa: float16 tensors need the shader-f16 feature, which adapter \"%s\" does not enable; "
                         "use float32", ctx->info.name);
    char qs[160], ks[160], vs[160], os[160];
    dims_str(q, qs, sizeof qs);
    dims_str(k, ks, sizeof ks);
    dims_str(v, vs, sizeof vs);
    dims_str(out, os, sizeof os);
    int r = q->rank;
    if (r < 3)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: q is %s (rank %d); q, k, v need rank >= 3 ([..., H, S, D])",
                         qs, r);
    if (k->rank != r || v->rank != r)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: q %s, k %s and v %s must have the same rank", qs, ks, vs);
    for (int i = 0; i < r; i++)
        if (k->dims[i] != v->dims[i])
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: k %s and v %s must have the same dims", ks, vs);
    for (int i = 0; i < r - 2; i++)
        if (q->dims[i] != k->dims[i])
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                             "sdpa: q %s and k %s differ in dim %d: batch and head dims (all but the last two) must match",
                             qs, ks, i);
    if (q->dims[r - 1] != k->dims[r - 1])
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: head dim D differs: q %s has %lld, k %s has %lld", qs,
                         (long long)q->dims[r - 1], ks, (long long)k->dims[r - 1]);
    if (out->rank != r || memcmp(out->dims, q->dims, (size_t)r * sizeof q->dims[0]) != 0)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: out is %s but must have q's shape %s", os, qs);
    wgnn_status s = wgnn__check_vec4_aligned(ctx, "sdpa", "head dim D", q->dims[r - 1]);
    if (s != WGNN_OK) return s;
    sh->bh = 1;
    for (int i = 0; i < r - 2; i++) sh->bh *= (uint64_t)q->dims[i];
    sh->s_q = (uint64_t)q->dims[r - 2];
    sh->s_kv = (uint64_t)k->dims[r - 2];
    sh->d = (uint64_t)q->dims[r - 1];
    sh->mask = o ? o->mask : NULL;
    if (sh->mask) {
        const wgnn_tensor *m = sh->mask;
        char ms[160];
        dims_str(m, ms, sizeof ms);
        bool ok = m->rank == r && m->dims[r - 1] == (int64_t)sh->s_kv;
        for (int i = 0; ok && i < r - 1; i++) ok = m->dims[i] == q->dims[i];
        if (!ok) {
            char want[160];
            size_t n = (size_t)snprintf(want, sizeof want, "[");
            for (int i = 0; i < r - 1 && n < sizeof want; i++)
                n += (size_t)snprintf(want + n, sizeof want - n, "%lld,", (long long)q->dims[i]);
            if (n < sizeof want) snprintf(want + n, sizeof want - n, "%llu]", (unsigned long long)sh->s_kv);
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: mask is %s but must be [..., H, S_q, S_kv] = %s", ms,
                             want);
        }
    }
    if (out == q || out == k || out == v || (sh->mask && out == sh->mask))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: out must be a different tensor from q, k, v and mask");
    if (o && o->has_scale && !isfinite(o->scale))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: scale %g is not finite", (double)o->scale);
    sh->scale = (o && o->has_scale) ? (double)o->scale : 1.0 / sqrt((double)sh->d);
    return WGNN_OK;
}

/* ---- fused --------------------------------------------------------------- */

typedef struct fused_cfg {
    uint32_t ty, tx, ke, rg, oj, pf;
    bool sacc, use_sg;
    uint32_t n_split, kv_chunk; /* n_split > 1: split-KV + sdpa_fused_reduce */
} fused_cfg;

static bool cpu_adapter(const wgnn_context *ctx) { return strcmp(ctx->info.type, "CPU") == 0; }

/* Workgroup memory of shaders/sdpa_fused.wgsl: sQ, sKV, sP, sR. */
static uint64_t fused_smem(uint32_t d4, uint32_t ty, uint32_t tx, uint32_t ke, uint32_t rg) {
    uint64_t rs = d4 + 1u; /* rows padded by one vec4 */
    return 16u * (4ull * rg * ty * rs + (uint64_t)ke * tx * rs + (uint64_t)ke * tx * (rg * ty + 1u) +
                  (uint64_t)rg * ty * tx);
}

/* The first tile that fits the adapter's workgroup memory and size limits,
 * in the order measured fastest (docs/PERFORMANCE.md). {TY, TX, KE, RG}:
 * TY*TX threads, 4*RG*TY query rows, KE*TX keys a tile. On CPU adapters
 * (lavapipe) small tiles first. WGNN_FUSED_TILE=TYxTXxKExRG puts a tile
 * first, for tuning. */
static bool fused_tile(const wgnn_context *ctx, uint32_t d4, fused_cfg *c) {
    static const uint32_t gpu[][4] = {{16, 16, 2, 1}, {8, 16, 2, 1}, {16, 8, 4, 1}, {8, 8, 4, 1}, {16, 4, 4, 1},
                                      {8, 4, 4, 1},  {4, 4, 4, 1},  {4, 2, 4, 1},  {2, 2, 4, 1}, {1, 2, 4, 1},
                                      {1, 1, 4, 1}};
    static const uint32_t cpu[][4] = {{8, 4, 4, 2}, {4, 4, 4, 2}, {8, 4, 4, 1}, {8, 8, 4, 1}, {4, 4, 4, 1},
                                      {4, 2, 4, 1}, {2, 2, 4, 1}, {1, 2, 4, 1}, {1, 1, 4, 1}};
    bool is_cpu = cpu_adapter(ctx);
    const uint32_t(*cand)[4] = is_cpu ? cpu : gpu;
    size_t n = is_cpu ? sizeof cpu / sizeof cpu[0] : sizeof gpu / sizeof gpu[0];
    const WGPULimits *L = &ctx->limits;
    const char *env = getenv("WGNN_FUSED_TILE");
    unsigned e[4] = {0, 0, 4, 1};
    bool use_env = env && sscanf(env, "%ux%ux%ux%u", &e[0], &e[1], &e[2], &e[3]) >= 2 && e[0] && e[1] &&
                   e[0] <= 64 && e[1] <= 64 && (e[2] == 2 || e[2] == 4) && (e[3] == 1 || e[3] == 2);
    for (size_t i = use_env ? 0 : 1; i < n + 1; i++) {
        const uint32_t *t = i == 0 ? e : cand[i - 1];
        uint32_t ty = t[0], tx = t[1], ke = t[2], rg = t[3];
        if (fused_smem(d4, ty, tx, ke, rg) > L->maxComputeWorkgroupStorageSize) continue;
        if (ty * tx > L->maxComputeInvocationsPerWorkgroup || tx > L->maxComputeWorkgroupSizeX ||
            ty > L->maxComputeWorkgroupSizeY)
            continue;
        c->ty = ty;
        c->tx = tx;
        c->ke = ke;
        c->rg = rg;
        c->oj = (d4 + tx - 1) / tx;
        c->pf = (ke * tx * d4 + tx * ty - 1) / (tx * ty);
        /* vec4 partial sums pay off once D > 64 (measured), plain dots below */
        c->sacc = d4 > 16;
        /* Subgroup row maxima where a row's TX lanes fit one subgroup. This
         * relies on consecutive local_invocation_index values being
         * consecutive subgroup lanes, which WGSL does not promise but the
         * NVIDIA and lavapipe drivers do (both checked against the CPU
         * reference); WGNN_FUSED_FLAGS without 'g' turns it off. */
        c->use_sg = ctx->has_subgroups && (tx & (tx - 1)) == 0 && ctx->info.subgroup_min_size >= tx;
        const char *fl = getenv("WGNN_FUSED_FLAGS");
        if (fl) {
            c->sacc = strchr(fl, 's') != NULL;
            c->use_sg = c->use_sg && strchr(fl, 'g') != NULL;
        }
        return true;
    }
    return false;
}

/* Split-KV when the query tiles alone leave the GPU mostly idle (few query
 * rows, long S_kv): aim at ~256 workgroups, two key tiles per split at least.
 * WGNN_FUSED_SPLIT=N forces N splits (tests, tuning). */
static void fused_split(const wgnn_context *ctx, const sdpa_shape *sh, fused_cfg *c) {
    uint64_t bc = (uint64_t)c->ke * c->tx, br = 4ull * c->rg * c->ty;
    uint64_t groups = sh->bh * ((sh->s_q + br - 1) / br);
    uint64_t want = 1;
    if (groups < 128 && sh->s_kv >= 4 * bc) {
        want = (256 + groups - 1) / groups;
        uint64_t most = sh->s_kv / (2 * bc);
        if (want > most) want = most;
    }
    const char *env = getenv("WGNN_FUSED_SPLIT");
    if (env && atoi(env) > 0) want = (uint64_t)atoi(env);
    if (want < 1) want = 1;
    uint64_t chunk = (sh->s_kv + want - 1) / want;
    chunk = (chunk + bc - 1) / bc * bc;
    uint64_t n = (sh->s_kv + chunk - 1) / chunk;
    /* partials must fit one binding */
    uint64_t rows = sh->bh * sh->s_q;
    while (n > 1 && n * rows * (sh->d * 4u) > ctx->limits.maxStorageBufferBindingSize) {
        chunk *= 2;
        n = (sh->s_kv + chunk - 1) / chunk;
    }
    c->n_split = (uint32_t)n;
    c->kv_chunk = (uint32_t)chunk;
}

static uint64_t fused_scratch(const sdpa_shape *sh, const fused_cfg *c) {
    if (c->n_split <= 1) return 0;
    uint64_t rows = (uint64_t)c->n_split * sh->bh * sh->s_q;
    return rows * sh->d * 4u + rows * 8u;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Heads (of B*H) per fused dispatch: all of them when every tensor fits one
 * storage binding, else the most whose slices of q, k, v, out and mask each
 * fit, rounded so every slice starts at a multiple of
 * minStorageBufferOffsetAlignment. 0 when one head alone does not fit. */
static uint64_t fused_chunk(const wgnn_context *ctx, const sdpa_shape *sh) {
    uint64_t es = sh->f16 ? 2u : 4u;
    uint64_t per[3] = {sh->s_q * sh->d * es, sh->s_kv * sh->d * es, sh->mask ? sh->s_q * sh->s_kv * 4u : 0};
    uint64_t lim = ctx->limits.maxStorageBufferBindingSize, align = ctx->limits.minStorageBufferOffsetAlignment;
    bool fits = true;
    for (int i = 0; i < 3; i++) fits = fits && per[i] * sh->bh <= lim;
    if (fits) return sh->bh;
    uint64_t chunk = sh->bh, step = 1;
    for (int i = 0; i < 3; i++) {
        if (!per[i]) continue;
        if (lim / per[i] < chunk) chunk = lim / per[i];
        uint64_t st = align / gcd_u64(per[i], align);
        step = step / gcd_u64(step, st) * st;
    }
    return chunk / step * step;
}

/* The whole fused plan, shared by wgnn_sdpa and wgnn_sdpa_scratch_bytes so
 * they cannot disagree: tile, heads per dispatch (*shc is one such chunk)
 * and key splits. */
static wgnn_status fused_plan(wgnn_context *ctx, const sdpa_shape *sh, fused_cfg *c, sdpa_shape *shc) {
    if (!fused_tile(ctx, (uint32_t)(sh->d / 4), c))
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa fused: D=%llu needs more workgroup memory than the device's "
                         "maxComputeWorkgroupStorageSize (%u bytes) has; use the three-pass implementation",
                         (unsigned long long)sh->d, ctx->limits.maxComputeWorkgroupStorageSize);
    *shc = *sh;
    shc->bh = fused_chunk(ctx, sh);
    if (shc->bh == 0)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa fused: one head's q, k, v or mask slice passes the device's "
                         "maxStorageBufferBindingSize (%llu bytes)",
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    fused_split(ctx, shc, c);
    return WGNN_OK;
}

static wgnn_status run_fused(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k, const wgnn_tensor *v,
                             const wgnn_tensor *out, const sdpa_shape *sh) {
    uint32_t d4 = (uint32_t)(sh->d / 4);
    fused_cfg c;
    sdpa_shape shc; /* one chunk of heads: what a dispatch sees */
    wgnn_status s = fused_plan(ctx, sh, &c, &shc);
    if (s != WGNN_OK) return s;
    uint64_t chunk = shc.bh;
    bool split = c.n_split > 1;
    char prelude[640];
    snprintf(prelude, sizeof prelude,
             "%s%sconst D4: u32 = %uu;\nconst KE: u32 = %uu;\nconst RG: u32 = %uu;\nconst OJ: u32 = %uu;\n"
             "const PF: u32 = %uu;\nalias IN4 = vec4<%s>;\nalias OUT4 = vec4<%s>;\n"
             "fn row_max_sg(x: vec4<f32>) -> vec4<f32> {\n%s}\n",
             sh->f16 ? "enable f16;\n" : "", c.use_sg ? "enable subgroups;\n" : "", d4, c.ke, c.rg, c.oj, c.pf,
             sh->f16 ? "f16" : "f32", sh->f16 && !split ? "f16" : "f32",
             c.use_sg ? "    var r = x;\n"
                        "    for (var off = 1u; off < TX; off = off * 2u) { r = max(r, subgroupShuffleXor(r, off)); }\n"
                        "    return r;\n"
                      : "    return x;\n");
    wgnn__const consts[6] = {{"TY", c.ty},           {"TX", c.tx},           {"HAS_MASK", sh->mask ? 1 : 0},
                             {"SACC", c.sacc ? 1 : 0}, {"SPLIT", split ? 1 : 0}, {"USE_SG", c.use_sg ? 1 : 0}};
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 64);
    wgnn__const wgc[1] = {{"WG", wg}};
    wgnn__pipe_entry *pipe, *reduce = NULL;
    s = wgnn__make_compute_pipeline(ctx, "sdpa_fused", prelude, consts, 6, &pipe);
    if (s == WGNN_OK && split)
        s = wgnn__make_compute_pipeline(ctx, "sdpa_fused_reduce",
                                        sh->f16 ? "enable f16;\nalias OUT4 = vec4<f16>;" : "alias OUT4 = vec4<f32>;", wgc,
                                        1, &reduce);
    if (s != WGNN_OK) return s;
    uint64_t br = 4ull * c.rg * c.ty;
    uint64_t n_qtiles = (sh->s_q + br - 1) / br;
    uint64_t es = sh->f16 ? 2u : 4u;
    uint64_t per_q = sh->s_q * sh->d * es, per_kv = sh->s_kv * sh->d * es, per_m = sh->s_q * sh->s_kv * 4u;
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    if (chunk * n_qtiles * c.n_split > UINT32_MAX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa fused: %llu workgroups is too many",
                         (unsigned long long)(chunk * n_qtiles * c.n_split));

    WGPUBuffer ub = NULL, rub = NULL, part_o = NULL, part_ml = NULL;
    WGPUComputePassEncoder pass = NULL;
    if (split) {
        uint64_t rows = chunk * sh->s_q;
        s = wgnn__buffer_create(ctx, (uint64_t)c.n_split * rows * sh->d * 4u, WGPUBufferUsage_Storage,
                                "sdpa split-KV partial outputs", &part_o);
        if (s == WGNN_OK)
            s = wgnn__buffer_create(ctx, (uint64_t)c.n_split * rows * 8u, WGPUBufferUsage_Storage,
                                    "sdpa split-KV partial max/sum", &part_ml);
        if (s != WGNN_OK) goto cleanup;
    }
    s = wgnn__pass_begin(ctx, &pass);
    for (uint64_t bh0 = 0; s == WGNN_OK && bh0 < sh->bh; bh0 += chunk) {
        uint64_t n = sh->bh - bh0 < chunk ? sh->bh - bh0 : chunk;
        uint64_t n_groups = n * n_qtiles * c.n_split, rows = n * sh->s_q;
        uint32_t gx, gy, rx = 0, ry = 0;
        s = wgnn__compute_2d_workgroup_count(ctx, n_groups, maxd, "sdpa fused", &gx, &gy);
        if (s == WGNN_OK && split)
            s = wgnn__compute_2d_workgroup_count(ctx, (rows * d4 + wg - 1) / wg, maxd, "sdpa fused reduce", &rx, &ry);
        fused_params p = {(uint32_t)n_groups, (uint32_t)n_qtiles, (uint32_t)sh->s_q, (uint32_t)sh->s_kv,
                          (float)(sh->scale * 1.4426950408889634), c.kv_chunk, (uint32_t)n, 0};
        uint32_t rp[4] = {(uint32_t)rows, d4, c.n_split, 0};
        if (s == WGNN_OK) s = wgnn__make_uniform(ctx, &p, sizeof p, &ub);
        if (s == WGNN_OK && split) s = wgnn__make_uniform(ctx, rp, sizeof rp, &rub);
        if (s != WGNN_OK) break;
        wgnn__binding o_slice = {out->buf, bh0 * per_q, n * per_q};
        wgnn__binding b[7] = {
            {ub, 0, 0},
            {q->buf, bh0 * per_q, n * per_q},
            {k->buf, bh0 * per_kv, n * per_kv},
            {v->buf, bh0 * per_kv, n * per_kv},
            sh->mask ? (wgnn__binding){sh->mask->buf, bh0 * per_m, n * per_m}
                     : (wgnn__binding){wgnn__make_optional_binding(ctx, NULL, false), 0, 0},
            split ? (wgnn__binding){part_o, 0, 0} : o_slice,
            {wgnn__make_optional_binding(ctx, part_ml, true), 0, 0}};
        s = wgnn__dispatch(ctx, pass, pipe, b, 7, gx, gy, 1);
        if (s == WGNN_OK && split) {
            wgnn__binding rb[4] = {{rub, 0, 0}, {part_o, 0, 0}, {part_ml, 0, 0}, o_slice};
            s = wgnn__dispatch(ctx, pass, reduce, rb, 4, rx, ry, 1);
        }
        wgpuBufferRelease(ub); /* recorded dispatches keep their own references */
        ub = NULL;
        if (rub) wgpuBufferRelease(rub);
        rub = NULL;
    }
    wgnn__pass_end(ctx, pass);
cleanup:
    if (part_ml) wgpuBufferRelease(part_ml);
    if (part_o) wgpuBufferRelease(part_o);
    return s;
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

static wgnn_status run_three_pass(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k, const wgnn_tensor *v,
                                  const wgnn_tensor *out, const sdpa_shape *sh, bool per_entry) {
    uint64_t chunk_bh, per_bh;
    if (three_pass_chunk(ctx, sh, &chunk_bh, &per_bh) != WGNN_OK)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa three-pass: the scores of one head need %llu bytes, past the device's "
                         "maxStorageBufferBindingSize/maxBufferSize (%llu bytes); use the fused implementation",
                         (unsigned long long)(sh->s_q * sh->s_kv * 4u),
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    const wgnn_tensor *all[5] = {q, k, v, out, sh->mask};
    static const char *const names[5] = {"q", "k", "v", "out", "mask"};
    for (int i = 0; i < 5; i++) {
        wgnn_status s = all[i] ? check_binding(ctx, all[i], names[i]) : WGNN_OK;
        if (s != WGNN_OK) return s;
    }
    uint32_t d4 = (uint32_t)(sh->d / 4);
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 64);
    wgnn__const wgc[1] = {{"WG", wg}};
    wgnn__pipe_entry *p_qk, *p_sm, *p_av;
    wgnn_status s = wgnn__make_compute_pipeline(ctx, per_entry ? "sdpa_qk_entry" : "sdpa_qk", NULL, wgc, 1, &p_qk);
    if (s == WGNN_OK) s = wgnn__make_compute_pipeline(ctx, "sdpa_softmax", NULL, NULL, 0, &p_sm);
    if (s == WGNN_OK) s = wgnn__make_compute_pipeline(ctx, "sdpa_av", NULL, wgc, 1, &p_av);
    if (s != WGNN_OK) return s;

    WGPUBuffer scores = NULL, probs = NULL, ub[3] = {NULL, NULL, NULL};
    WGPUComputePassEncoder pass = NULL;
    uint64_t chunk_bytes = chunk_bh * per_bh;
    s = wgnn__buffer_create(ctx, chunk_bytes, WGPUBufferUsage_Storage, "sdpa scores", &scores);
    if (s == WGNN_OK) s = wgnn__buffer_create(ctx, chunk_bytes, WGPUBufferUsage_Storage, "sdpa probs", &probs);
    if (s != WGNN_OK) goto cleanup;
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    for (uint64_t bh0 = 0; bh0 < sh->bh; bh0 += chunk_bh) {
        uint64_t nbh = sh->bh - bh0 < chunk_bh ? sh->bh - bh0 : chunk_bh;
        uint32_t rows = (uint32_t)(nbh * sh->s_q);
        qk_params qp = {(uint32_t)(bh0 * sh->s_q), rows, (uint32_t)sh->s_q, (uint32_t)sh->s_kv, d4,
                        (float)sh->scale, sh->mask ? 1u : 0u, 0};
        softmax_params sp = {rows, (uint32_t)sh->s_kv, 0, 0};
        av_params ap = {(uint32_t)(bh0 * sh->s_q), rows, (uint32_t)sh->s_q, (uint32_t)sh->s_kv, d4, 0, 0, 0};
        for (int i = 0; i < 3; i++) {
            if (ub[i]) wgpuBufferRelease(ub[i]);
            ub[i] = NULL;
        }
        s = wgnn__make_uniform(ctx, &qp, sizeof qp, &ub[0]);
        if (s == WGNN_OK) s = wgnn__make_uniform(ctx, &sp, sizeof sp, &ub[1]);
        if (s == WGNN_OK) s = wgnn__make_uniform(ctx, &ap, sizeof ap, &ub[2]);
        if (s != WGNN_OK) goto cleanup;
        uint32_t qx, qy, sx, sy, ax, ay;
        uint64_t qk_items = per_entry ? (uint64_t)rows * sh->s_kv : rows;
        s = wgnn__compute_2d_workgroup_count(ctx, (qk_items + wg - 1) / wg, maxd, "sdpa qk", &qx, &qy);
        if (s == WGNN_OK) s = wgnn__compute_2d_workgroup_count(ctx, rows, maxd, "sdpa softmax", &sx, &sy);
        if (s == WGNN_OK)
            s = wgnn__compute_2d_workgroup_count(ctx, ((uint64_t)rows * d4 + wg - 1) / wg, maxd, "sdpa av", &ax, &ay);
        if (s != WGNN_OK) goto cleanup;
        wgnn__binding bq[5] = {{ub[0], 0, 0},
                               {q->buf, 0, 0},
                               {k->buf, 0, 0},
                               {wgnn__make_optional_binding(ctx, sh->mask ? sh->mask->buf : NULL, false), 0, 0},
                               {scores, 0, 0}};
        wgnn__binding bs[3] = {{ub[1], 0, 0}, {scores, 0, 0}, {probs, 0, 0}};
        wgnn__binding ba[4] = {{ub[2], 0, 0}, {probs, 0, 0}, {v->buf, 0, 0}, {out->buf, 0, 0}};
        s = wgnn__pass_begin(ctx, &pass);
        if (s == WGNN_OK) s = wgnn__dispatch(ctx, pass, p_qk, bq, 5, qx, qy, 1);
        if (s == WGNN_OK) s = wgnn__dispatch(ctx, pass, p_sm, bs, 3, sx, sy, 1);
        if (s == WGNN_OK) s = wgnn__dispatch(ctx, pass, p_av, ba, 4, ax, ay, 1);
        wgnn__pass_end(ctx, pass);
        pass = NULL;
        if (s != WGNN_OK) goto cleanup;
    }
cleanup:
    for (int i = 0; i < 3; i++)
        if (ub[i]) wgpuBufferRelease(ub[i]);
    if (probs) wgpuBufferRelease(probs);
    if (scores) wgpuBufferRelease(scores);
    return s;
}

/* ---- routing ------------------------------------------------------------- */

/* auto (docs/PERFORMANCE.md has the measurements behind it): fused wherever
 * it fits, split-KV included, except on CPU adapters when the query rows fill
 * under a quarter of a fused row tile (decoder-like S_q): there the padding
 * rows cost real time (lavapipe, (1,8,1,4096,64): fused 39 ms, channel 2.3
 * ms) while a GPU hides them (H200: fused 0.047 ms, channel 0.24 ms). Where
 * fused does not fit: three-pass, with the QK route of WGNN__CPU_CHANNEL_ROWS. */
static wgnn_sdpa_impl route(const wgnn_context *ctx, const sdpa_shape *sh, wgnn_sdpa_impl want) {
    if (want != WGNN_SDPA_AUTO) return want;
    fused_cfg c;
    if (fused_tile(ctx, (uint32_t)(sh->d / 4), &c)) {
        if (cpu_adapter(ctx) && sh->s_q * 4u < 4ull * c.rg * c.ty) return WGNN_SDPA_CHANNEL;
        return WGNN_SDPA_FUSED;
    }
    return !cpu_adapter(ctx) || sh->bh * sh->s_q < WGNN__CPU_CHANNEL_ROWS ? WGNN_SDPA_CHANNEL : WGNN_SDPA_THREE_PASS;
}

static wgnn_status prepare(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k, const wgnn_tensor *v,
                           const wgnn_sdpa_options *opts, const wgnn_tensor *out, sdpa_shape *sh,
                           wgnn_sdpa_impl *impl) {
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    s = validate(ctx, q, k, v, opts, out, sh);
    if (s != WGNN_OK) return s;
    wgnn_sdpa_impl want = opts ? opts->impl : WGNN_SDPA_AUTO;
    if (want != WGNN_SDPA_AUTO && want != WGNN_SDPA_THREE_PASS && want != WGNN_SDPA_FUSED &&
        want != WGNN_SDPA_CHANNEL)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: unknown impl %d", (int)want);
    *impl = sh->f16 && want == WGNN_SDPA_AUTO ? WGNN_SDPA_FUSED : route(ctx, sh, want);
    if (sh->f16 && *impl != WGNN_SDPA_FUSED)
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "sdpa: float16 tensors run only in the fused implementation");
    return WGNN_OK;
}

wgnn_status wgnn_sdpa(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k, const wgnn_tensor *v,
                      const wgnn_sdpa_options *opts, wgnn_tensor *out) {
    if (!ctx) return WGNN_ERR_INVALID_ARGUMENT;
    sdpa_shape sh = {0};
    wgnn_sdpa_impl impl = WGNN_SDPA_AUTO;
    wgnn_status s = prepare(ctx, q, k, v, opts, out, &sh, &impl);
    if (s != WGNN_OK) return s;
    if (impl == WGNN_SDPA_FUSED) return run_fused(ctx, q, k, v, out, &sh);
    return run_three_pass(ctx, q, k, v, out, &sh, impl == WGNN_SDPA_CHANNEL);
}

wgnn_status wgnn_sdpa_scratch_bytes(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k,
                                    const wgnn_tensor *v, const wgnn_sdpa_options *opts, uint64_t *bytes,
                                    wgnn_sdpa_impl *routed) {
    if (!ctx) return WGNN_ERR_INVALID_ARGUMENT;
    if (!bytes) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa_scratch_bytes: bytes must not be NULL");
    sdpa_shape sh = {0};
    wgnn_sdpa_impl impl = WGNN_SDPA_AUTO;
    /* out is only validated for shape: q stands in for it. */
    wgnn_sdpa_options o = opts ? *opts : (wgnn_sdpa_options){0};
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    wgnn_tensor fake_out;
    if (!q) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "sdpa: q must not be NULL");
    fake_out = *q;
    s = prepare(ctx, q, k, v, &o, &fake_out, &sh, &impl);
    if (s != WGNN_OK) return s;
    *bytes = 0;
    fused_cfg c;
    sdpa_shape shc;
    if (impl == WGNN_SDPA_FUSED) {
        /* a plan that fails leaves 0: wgnn_sdpa then fails with the limit's name */
        if (fused_plan(ctx, &sh, &c, &shc) == WGNN_OK) *bytes = fused_scratch(&shc, &c);
    } else {
        uint64_t chunk_bh, per_bh;
        if (three_pass_chunk(ctx, &sh, &chunk_bh, &per_bh) == WGNN_OK) *bytes = 2u * chunk_bh * per_bh;
    }
    if (routed) *routed = impl;
    return WGNN_OK;
}
