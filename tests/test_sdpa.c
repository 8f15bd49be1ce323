/* test_sdpa.c - attention through every implementation against the CPU
 * reference (double accumulation), and every validation error. */
#include "testutil.h"

#include "internal.h" /* the context's copy of the device limits (test_fused_head_chunks) */

#define ATOL 1e-4
#define RTOL 1e-3

typedef enum mask_kind {
    MASK_NONE = 0,
    MASK_RANDOM,     /* uniform in [-2, 0] */
    MASK_INF_ROWS,   /* random, every third row -inf everywhere, scattered -inf */
    MASK_NEG_MAX,    /* -3.4e38 entries (and one row entirely) */
} mask_kind;

static const wgnn_sdpa_impl k_impls[] = {WGNN_SDPA_THREE_PASS, WGNN_SDPA_CHANNEL, WGNN_SDPA_FUSED, WGNN_SDPA_AUTO};
static const char *k_impl_names[] = {"three-pass", "fused", "channel", "auto"}; /* by impl - 1 */

typedef struct case_desc {
    int rank;
    int64_t lead[6]; /* batch dims then H: rank-2 of them */
    int64_t s_q, s_kv, d;
    mask_kind mask;
    int explicit_scale;
    float scale;
    float range; /* inputs uniform in [-range, range] */
} case_desc;

static void make_mask(float *m, uint64_t rows, uint64_t s_kv, mask_kind kind) {
    for (uint64_t r = 0; r < rows; r++) {
        for (uint64_t c = 0; c < s_kv; c++) {
            float x = tu_uniform(-2, 0);
            if (kind == MASK_INF_ROWS && (r % 3 == 1 || (r + c) % 7 == 0)) x = -INFINITY;
            if (kind == MASK_NEG_MAX && (r % 4 == 2 || (r * 5 + c) % 3 == 0)) x = -3.4e38f;
            m[r * s_kv + c] = x;
        }
    }
}

/* Runs one case through the given impls, k and v with h_kv heads (0: q's)
 * and the given causal mode; returns 0 on any failure. */
static int run_case_ex(wgnn_context *ctx, const case_desc *cd, int64_t h_kv, int causal, const wgnn_sdpa_impl *impls,
                       size_t n_impls) {
    int r = cd->rank;
    int64_t qd[8], kd[8], md[8];
    uint64_t bh = 1;
    for (int i = 0; i < r - 2; i++) {
        qd[i] = kd[i] = md[i] = cd->lead[i];
        bh *= (uint64_t)cd->lead[i];
    }
    uint64_t group = 1;
    if (h_kv > 0) {
        group = (uint64_t)(cd->lead[r - 3] / h_kv);
        kd[r - 3] = h_kv;
    }
    qd[r - 2] = cd->s_q;
    qd[r - 1] = cd->d;
    kd[r - 2] = cd->s_kv;
    kd[r - 1] = cd->d;
    md[r - 2] = cd->s_q;
    md[r - 1] = cd->s_kv;
    size_t nq = (size_t)(bh * cd->s_q * cd->d), nk = (size_t)(bh / group * cd->s_kv * cd->d);
    size_t nm = (size_t)(bh * cd->s_q * cd->s_kv);
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4), *o = malloc(nq * 4), *ref = malloc(nq * 4);
    float *m = cd->mask ? malloc(nm * 4) : NULL;
    wgnn_tensor *tq = NULL, *tk = NULL, *tv = NULL, *to = NULL, *tm = NULL;
    int ok = 1;
    tu_fill(q, nq, -cd->range, cd->range);
    tu_fill(k, nk, -cd->range, cd->range);
    tu_fill(v, nk, -1, 1);
    if (m) make_mask(m, bh * cd->s_q, cd->s_kv, cd->mask);
    double scale = cd->explicit_scale ? cd->scale : 1.0 / sqrt((double)cd->d);
    wgnn_ref_sdpa_ex(q, k, v, m, bh, group, cd->s_q, cd->s_kv, cd->d, scale, causal, ref);

    wgnn_status s = wgnn_tensor_create(ctx, WGNN_F32, r, qd, &tq);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F32, r, kd, &tk);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F32, r, kd, &tv);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F32, r, qd, &to);
    if (s == WGNN_OK && m) s = wgnn_tensor_create(ctx, WGNN_F32, r, md, &tm);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tq, q, nq * 4);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tk, k, nk * 4);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tv, v, nk * 4);
    if (s == WGNN_OK && m) s = wgnn_tensor_upload(ctx, tm, m, nm * 4);
    CHECK(s == WGNN_OK, "setup: %s", wgnn_context_error(ctx));
    if (s != WGNN_OK) {
        ok = 0;
        goto cleanup;
    }
    for (size_t i = 0; i < n_impls; i++) {
        /* Poison the output so an unwritten element cannot pass. */
        for (size_t j = 0; j < nq; j++) o[j] = NAN;
        s = wgnn_tensor_upload(ctx, to, o, nq * 4);
        wgnn_sdpa_options opt = {tm, cd->scale, cd->explicit_scale, impls[i], causal, group > 1};
        if (s == WGNN_OK) s = wgnn_sdpa(ctx, tq, tk, tv, &opt, to);
        if (s == WGNN_OK) s = wgnn_tensor_download(ctx, to, o, nq * 4);
        const char *name = k_impl_names[impls[i] == WGNN_SDPA_AUTO ? 3 : (int)impls[i] - 1];
        CHECK(s == WGNN_OK, "rank %d s_q %lld s_kv %lld d %lld %s: %s", r, (long long)cd->s_q, (long long)cd->s_kv,
              (long long)cd->d, name, wgnn_context_error(ctx));
        if (s != WGNN_OK) {
            ok = 0;
            continue;
        }
        double e;
        int close = tu_close(o, ref, nq, ATOL, RTOL, &e);
        CHECK(close, "rank %d bh %llu group %llu s_q %lld s_kv %lld d %lld mask %d causal %d %s: max abs err %g", r,
              (unsigned long long)bh, (unsigned long long)group, (long long)cd->s_q, (long long)cd->s_kv,
              (long long)cd->d, (int)cd->mask, causal, name, e);
        ok &= close;
        if (causal) { /* rows that see no key must be exactly zero */
            int64_t off = causal == WGNN_SDPA_CAUSAL_BOTTOM_RIGHT ? cd->s_kv - cd->s_q : 0, zeros = 1;
            for (uint64_t row = 0; row < bh * (uint64_t)cd->s_q; row++) {
                if ((int64_t)(row % (uint64_t)cd->s_q) + off >= 0) continue;
                for (int64_t x = 0; x < cd->d; x++) zeros &= o[row * cd->d + x] == 0.0f;
            }
            CHECK(zeros, "%s: causal rows without keys are exactly 0", name);
            ok &= (int)zeros;
        }
        if (m) { /* rows masked everywhere must be exactly zero */
            int zeros = 1;
            for (uint64_t row = 0; row < bh * (uint64_t)cd->s_q; row++) {
                int all_inf = 1;
                for (int64_t c = 0; c < cd->s_kv && all_inf; c++) all_inf = isinf(m[row * cd->s_kv + c]) != 0;
                for (int64_t x = 0; all_inf && x < cd->d; x++) zeros &= o[row * cd->d + x] == 0.0f;
            }
            CHECK(zeros, "%s: fully masked rows are exactly 0", name);
            ok &= zeros;
        }
    }
cleanup:
    wgnn_tensor_destroy(tq);
    wgnn_tensor_destroy(tk);
    wgnn_tensor_destroy(tv);
    wgnn_tensor_destroy(to);
    wgnn_tensor_destroy(tm);
    free(q);
    free(k);
    free(v);
    free(o);
    free(ref);
    free(m);
    return ok;
}

static int run_case(wgnn_context *ctx, const case_desc *cd, const wgnn_sdpa_impl *impls, size_t n_impls) {
    return run_case_ex(ctx, cd, 0, WGNN_SDPA_CAUSAL_NONE, impls, n_impls);
}

#define ALL k_impls, 4

/* Causal masking and grouped-query attention (fused only; auto routes them
 * there). Split-KV is forced by few query rows and long S_kv. */
static void test_causal_gqa(wgnn_context *ctx) {
    static const wgnn_sdpa_impl fa[] = {WGNN_SDPA_FUSED, WGNN_SDPA_AUTO};
    static const int causals[] = {WGNN_SDPA_CAUSAL_NONE, WGNN_SDPA_CAUSAL_TOP_LEFT, WGNN_SDPA_CAUSAL_BOTTOM_RIGHT};
    /* GQA alone: 8 q heads / 2 kv heads, 4 / 1 */
    case_desc g1 = {4, {2, 8}, 13, 29, 16, MASK_NONE, 0, 0, 1};
    run_case_ex(ctx, &g1, 2, WGNN_SDPA_CAUSAL_NONE, fa, 2);
    case_desc g2 = {4, {1, 4}, 7, 40, 32, MASK_RANDOM, 0, 0, 1};
    run_case_ex(ctx, &g2, 1, WGNN_SDPA_CAUSAL_NONE, fa, 2);
    for (int ci = 1; ci < 3; ci++) {
        int c = causals[ci];
        case_desc sq = {4, {1, 2}, 37, 37, 16, MASK_NONE, 0, 0, 1}; /* S_q == S_kv */
        run_case_ex(ctx, &sq, 0, c, fa, 2);
        case_desc lt = {4, {2, 2}, 5, 37, 8, MASK_NONE, 0, 0, 1}; /* S_q < S_kv */
        run_case_ex(ctx, &lt, 0, c, fa, 2);
        case_desc dec = {4, {1, 4}, 1, 37, 12, MASK_NONE, 0, 0, 1}; /* decode */
        run_case_ex(ctx, &dec, 2, c, fa, 2);
        /* S_q > S_kv: bottom_right leaves the first rows no key */
        case_desc gt = {4, {1, 2}, 41, 19, 8, MASK_NONE, 0, 0, 1};
        run_case_ex(ctx, &gt, 0, c, fa, 2);
        case_desc mk1 = {4, {2, 8}, 23, 31, 20, MASK_INF_ROWS, 0, 0, 1}; /* with a mask, GQA 8/2 */
        run_case_ex(ctx, &mk1, 2, c, fa, 2);
        case_desc mk2 = {3, {4}, 9, 9, 4, MASK_NEG_MAX, 1, 0.4f, 1}; /* rank 3: H is dim 0, GQA 4/1 */
        run_case_ex(ctx, &mk2, 1, c, fa, 2);
        for (int64_t s_q = 1; s_q <= 4; s_q++) { /* split-KV */
            case_desc sp = {4, {1, 8}, s_q, 600, 64, s_q == 3 ? MASK_RANDOM : MASK_NONE, 0, 0, 1};
            run_case_ex(ctx, &sp, 2, c, fa, 2);
        }
        case_desc big = {4, {1, 4}, 67, 133, 36, MASK_NONE, 0, 0, 1}; /* several query and key tiles, odd D4 */
        run_case_ex(ctx, &big, 1, c, fa, 2);
    }
}

/* The fused kernel over chunks of heads (sdpa_fused.c fused_chunk): a
 * 16 KiB storage binding at 16-byte offsets holds one kv head's group of
 * q heads (4 x 23 x 20 floats: 7360 bytes) and its mask rows (11408), so
 * B*H = 16 q heads run as 4 dispatches; causal, GQA 8/2, a random mask. */
static void test_fused_head_chunks(wgnn_context *ctx) {
    static const wgnn_sdpa_impl fused[] = {WGNN_SDPA_FUSED};
    WGPULimits saved = ctx->limits;
    ctx->limits.maxStorageBufferBindingSize = 16384;
    ctx->limits.minStorageBufferOffsetAlignment = 16;
    case_desc c = {4, {2, 8}, 23, 31, 20, MASK_RANDOM, 0, 0, 1};
    run_case_ex(ctx, &c, 2, WGNN_SDPA_CAUSAL_TOP_LEFT, fused, 1);
    case_desc plain = {4, {2, 8}, 23, 31, 20, MASK_NONE, 0, 0, 1};
    run_case_ex(ctx, &plain, 1, WGNN_SDPA_CAUSAL_NONE, fused, 1);
    ctx->limits = saved;
}

static void test_suite_shapes(wgnn_context *ctx) {
    /* ExecuTorch's suite: (B, H, S_q, S_kv, D). */
    case_desc c1 = {4, {1, 4}, 8, 8, 16, MASK_NONE, 0, 0, 1};
    run_case(ctx, &c1, ALL);
    case_desc c2 = {4, {1, 8}, 4, 16, 16, MASK_NONE, 0, 0, 1}; /* asymmetric */
    run_case(ctx, &c2, ALL);
    case_desc c3 = {4, {1, 4}, 8, 8, 16, MASK_RANDOM, 0, 0, 1};
    run_case(ctx, &c3, ALL);
    case_desc c4 = {4, {1, 4}, 6, 6, 128, MASK_NONE, 0, 0, 1};
    run_case(ctx, &c4, ALL);
    case_desc c5 = {4, {1, 8}, 32, 256, 64, MASK_NONE, 0, 0, 1}; /* channel attention */
    run_case(ctx, &c5, ALL);
    case_desc c6 = {4, {1, 12}, 576, 576, 64, MASK_NONE, 0, 0, 1}; /* SigLIP-like */
    run_case(ctx, &c6, ALL);
    /* Rank 3 and rank 5. */
    case_desc c7 = {3, {3}, 10, 13, 8, MASK_RANDOM, 0, 0, 1};
    run_case(ctx, &c7, ALL);
    case_desc c8 = {5, {2, 3, 2}, 9, 5, 12, MASK_RANDOM, 0, 0, 1};
    run_case(ctx, &c8, ALL);
}

static void test_masks_and_scale(wgnn_context *ctx) {
    case_desc a = {4, {2, 3}, 17, 23, 32, MASK_INF_ROWS, 0, 0, 1};
    run_case(ctx, &a, ALL);
    case_desc b = {4, {1, 2}, 16, 40, 16, MASK_NEG_MAX, 0, 0, 1};
    run_case(ctx, &b, ALL);
    case_desc c = {4, {1, 2}, 9, 9, 16, MASK_NONE, 1, 0.37f, 1};
    run_case(ctx, &c, ALL);
    /* Default scale equals an explicit 1/sqrt(D): same numbers. */
    case_desc d = {4, {1, 2}, 9, 9, 16, MASK_NONE, 1, 0.25f, 1};
    run_case(ctx, &d, ALL);
    /* Large logits: |q.k| * scale in the hundreds stays finite and exact. */
    case_desc e = {4, {1, 2}, 33, 47, 64, MASK_RANDOM, 1, 1.0f, 3};
    run_case(ctx, &e, ALL);
}

static void test_many_rows(wgnn_context *ctx, int with_chunking) {
    /* 2 * 32800 = 65600 softmax rows: the 2-D grid fold past 65535. */
    case_desc c = {3, {2}, 32800, 3, 4, MASK_RANDOM, 0, 0, 1};
    run_case(ctx, &c, ALL);
    /* Scores past the binding limit: three-pass chunks over batch*heads
     * (on lavapipe's 128 MiB: 3 heads of 64 MiB of scores -> 2 chunks). */
    wgnn_limits lim;
    wgnn_context_limits(ctx, &lim);
    int64_t s = 4096;
    while ((uint64_t)(s * s) * 4u * 2u < lim.max_storage_buffer_binding_size) s *= 2;
    if (with_chunking && (uint64_t)(s * s) * 4u <= lim.max_storage_buffer_binding_size && s <= 8192) {
        static const wgnn_sdpa_impl three[] = {WGNN_SDPA_THREE_PASS};
        case_desc big = {3, {3}, s, s, 4, MASK_NONE, 0, 0, 1};
        run_case(ctx, &big, three, 1);
    }
    /* A mask past the binding limit: fused splits its dispatch over heads
     * (lavapipe: 9 heads x 16 MiB of mask, 8 heads a dispatch). */
    int64_t sm = 2048;
    if (with_chunking && (uint64_t)(9 * sm * sm) * 4u > lim.max_storage_buffer_binding_size &&
        (uint64_t)(sm * sm) * 4u <= lim.max_storage_buffer_binding_size) {
        static const wgnn_sdpa_impl fused[] = {WGNN_SDPA_FUSED};
        case_desc big = {4, {1, 9}, sm, sm, 4, MASK_INF_ROWS, 0, 0, 1};
        run_case(ctx, &big, fused, 1);
    }
}

static void test_random_sweep(wgnn_context *ctx) {
    static const int64_t ds[] = {4, 8, 12, 20, 36, 64, 100, 128, 196, 256};
    static const int64_t ss[] = {1, 2, 3, 5, 7, 13, 31, 64, 97, 127, 211, 293};
    static const wgnn_sdpa_impl two[] = {WGNN_SDPA_FUSED, WGNN_SDPA_THREE_PASS};
    for (int it = 0; it < 24; it++) {
        case_desc c = {0};
        c.rank = 3 + (int)(tu_next() % 3);
        for (int i = 0; i < c.rank - 2; i++) c.lead[i] = 1 + (int64_t)(tu_next() % 3);
        c.d = ds[tu_next() % (sizeof ds / sizeof ds[0])];
        c.s_q = ss[tu_next() % (sizeof ss / sizeof ss[0])];
        c.s_kv = tu_next() % 2 ? c.s_q : ss[tu_next() % (sizeof ss / sizeof ss[0])];
        c.mask = (mask_kind)(tu_next() % 4);
        c.explicit_scale = (int)(tu_next() % 2);
        c.scale = tu_uniform(0.05f, 0.5f);
        c.range = 1;
        run_case(ctx, &c, two, 2);
    }
}

/* One float16-storage case: f16 q, k, v and out [sh0, sh1, S, D] for sh =
 * {sh0, sh1, S_q, S_kv, D}, with an fp32 mask (MASK_INF_ROWS) or none,
 * through impl; fp32 accumulation. The reference sees the same f16-rounded
 * inputs; the output's own rounding to f16 dominates the error (documented
 * in wgnn.h). refuse_three_pass: also check that three-pass turns float16
 * away. */
static void f16_case(wgnn_context *ctx, const int64_t sh[5], int with_mask, wgnn_sdpa_impl impl, int refuse_three_pass,
                     const char *label) {
    uint64_t bh = (uint64_t)(sh[0] * sh[1]);
    size_t nq = (size_t)(bh * sh[2] * sh[4]), nk = (size_t)(bh * sh[3] * sh[4]), nm = (size_t)(bh * sh[2] * sh[3]);
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4), *ref = malloc(nq * 4), *got = malloc(nq * 4);
    float *m = malloc(nm * 4);
    uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *ho = malloc(nq * 2);
    tu_fill(q, nq, -1, 1);
    tu_fill(k, nk, -1, 1);
    tu_fill(v, nk, -1, 1);
    make_mask(m, bh * (uint64_t)sh[2], (uint64_t)sh[3], MASK_INF_ROWS);
    wgnn_f32_to_f16(q, hq, nq);
    wgnn_f32_to_f16(k, hk, nk);
    wgnn_f32_to_f16(v, hv, nk);
    wgnn_f16_to_f32(hq, q, nq); /* the reference sees the rounded inputs */
    wgnn_f16_to_f32(hk, k, nk);
    wgnn_f16_to_f32(hv, v, nk);
    wgnn_ref_sdpa(q, k, v, with_mask ? m : NULL, bh, (uint64_t)sh[2], (uint64_t)sh[3], (uint64_t)sh[4],
                  1.0 / sqrt((double)sh[4]), ref);
    int64_t qd[4] = {sh[0], sh[1], sh[2], sh[4]}, kd[4] = {sh[0], sh[1], sh[3], sh[4]}, md[4] = {sh[0], sh[1], sh[2], sh[3]};
    wgnn_tensor *tq = NULL, *tk = NULL, *tv = NULL, *to = NULL, *tm = NULL;
    wgnn_status s = wgnn_tensor_create(ctx, WGNN_F16, 4, qd, &tq);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F16, 4, kd, &tk);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F16, 4, kd, &tv);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F16, 4, qd, &to);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F32, 4, md, &tm);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tq, hq, nq * 2);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tk, hk, nk * 2);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tv, hv, nk * 2);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tm, m, nm * 4);
    wgnn_sdpa_options opt = {with_mask ? tm : NULL, 0, 0, impl, 0, 0};
    if (s == WGNN_OK) s = wgnn_sdpa(ctx, tq, tk, tv, &opt, to);
    if (s == WGNN_OK) s = wgnn_tensor_download(ctx, to, ho, nq * 2);
    CHECK(s == WGNN_OK, "%s: %s", label, wgnn_context_error(ctx));
    if (s == WGNN_OK) {
        wgnn_f16_to_f32(ho, got, nq);
        double e;
        CHECK(tu_close(got, ref, nq, 1e-3, 1e-3, &e), "%s: max abs err %g", label, e);
    }
    if (refuse_three_pass) {
        opt.impl = WGNN_SDPA_THREE_PASS;
        CHECK(wgnn_sdpa(ctx, tq, tk, tv, &opt, to) == WGNN_ERR_UNSUPPORTED &&
                  strstr(wgnn_context_error(ctx), "only in the fused") != NULL,
              "f16 three-pass refused: %s", wgnn_context_error(ctx));
    }
    wgnn_tensor_destroy(tq);
    wgnn_tensor_destroy(tk);
    wgnn_tensor_destroy(tv);
    wgnn_tensor_destroy(to);
    wgnn_tensor_destroy(tm);
    free(q), free(k), free(v), free(ref), free(got), free(m), free(hq), free(hk), free(hv), free(ho);
}

static void test_f16(wgnn_context *ctx) {
    /* float16 storage needs no shader-f16 (pack2x16float / unpack2x16float);
     * the caller runs this on a context without optional features too */
    static const int64_t shapes[][5] = {{1, 4, 33, 47, 64}, {2, 3, 17, 300, 16}, {1, 2, 1, 700, 128}, {1, 1, 64, 64, 12}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        char label[32];
        snprintf(label, sizeof label, "f16 case %zu", t);
        f16_case(ctx, shapes[t], t % 2 == 0, WGNN_SDPA_AUTO, 1, label);
    }
}

/* ---- validation ------------------------------------------------------------ */

static wgnn_tensor *mk(wgnn_context *ctx, wgnn_dtype t, int rank, int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t dims[4] = {a, b, c, d};
    wgnn_tensor *x = NULL;
    wgnn_tensor_create(ctx, t, rank, dims, &x);
    return x;
}

static void expect(wgnn_context *ctx, wgnn_status got, wgnn_status want, const char *needle, const char *what) {
    CHECK(got == want, "%s: status %d, want %d (%s)", what, (int)got, (int)want, wgnn_context_error(ctx));
    CHECK(strstr(wgnn_context_error(ctx), needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
          wgnn_context_error(ctx), needle);
}

static void test_validation(wgnn_context *ctx) {
    wgnn_tensor *q = mk(ctx, WGNN_F32, 4, 1, 2, 5, 8), *k = mk(ctx, WGNN_F32, 4, 1, 2, 7, 8);
    wgnn_tensor *v = mk(ctx, WGNN_F32, 4, 1, 2, 7, 8), *o = mk(ctx, WGNN_F32, 4, 1, 2, 5, 8);
    wgnn_tensor *q6 = mk(ctx, WGNN_F32, 4, 1, 2, 5, 6), *k6 = mk(ctx, WGNN_F32, 4, 1, 2, 7, 6);
    wgnn_tensor *v6 = mk(ctx, WGNN_F32, 4, 1, 2, 7, 6), *o6 = mk(ctx, WGNN_F32, 4, 1, 2, 5, 6);
    wgnn_tensor *q2 = mk(ctx, WGNN_F32, 2, 5, 8, 0, 0);
    wgnn_tensor *k3 = mk(ctx, WGNN_F32, 3, 2, 7, 8, 0);
    wgnn_tensor *v_bad = mk(ctx, WGNN_F32, 4, 1, 2, 6, 8);
    wgnn_tensor *k_h = mk(ctx, WGNN_F32, 4, 1, 3, 7, 8), *v_h = mk(ctx, WGNN_F32, 4, 1, 3, 7, 8);
    wgnn_tensor *k_b = mk(ctx, WGNN_F32, 4, 2, 2, 7, 8), *v_b = mk(ctx, WGNN_F32, 4, 2, 2, 7, 8);
    wgnn_tensor *k_d = mk(ctx, WGNN_F32, 4, 1, 2, 7, 12), *v_d = mk(ctx, WGNN_F32, 4, 1, 2, 7, 12);
    wgnn_tensor *m_ok = mk(ctx, WGNN_F32, 4, 1, 2, 5, 7), *m_bad = mk(ctx, WGNN_F32, 4, 1, 2, 7, 5);
    wgnn_tensor *m_i32 = mk(ctx, WGNN_I32, 4, 1, 2, 5, 7), *q_f16 = mk(ctx, WGNN_F16, 4, 1, 2, 5, 8);
    wgnn_tensor *o_bad = mk(ctx, WGNN_F32, 4, 1, 2, 7, 8);
    wgnn_sdpa_options opt = {0};

    expect(ctx, wgnn_sdpa(ctx, q6, k6, v6, NULL, o6), WGNN_ERR_INVALID_ARGUMENT, "D=6 must be a multiple of 4", "D%4");
    expect(ctx, wgnn_sdpa(ctx, q2, k, v, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "rank >= 3", "rank 2");
    expect(ctx, wgnn_sdpa(ctx, q, k3, v, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "same rank", "rank mismatch");
    expect(ctx, wgnn_sdpa(ctx, q, k, v_bad, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "k [1,2,7,8] and v [1,2,6,8]",
           "k.dims != v.dims");
    expect(ctx, wgnn_sdpa(ctx, q, k_h, v_h, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "unless enable_gqa=true",
           "H mismatch without enable_gqa");
    opt.enable_gqa = 1;
    expect(ctx, wgnn_sdpa(ctx, q, k_h, v_h, &opt, o), WGNN_ERR_INVALID_ARGUMENT, "must be a multiple of k's and v's 3",
           "H_q % H_kv != 0");
    opt.enable_gqa = 0;
    opt.causal = 3;
    expect(ctx, wgnn_sdpa(ctx, q, k, v, &opt, o), WGNN_ERR_INVALID_ARGUMENT, "unknown causal", "bad causal");
    opt.causal = WGNN_SDPA_CAUSAL_TOP_LEFT;
    opt.impl = WGNN_SDPA_THREE_PASS;
    expect(ctx, wgnn_sdpa(ctx, q, k, v, &opt, o), WGNN_ERR_UNSUPPORTED, "causal attention runs only in the fused",
           "causal three-pass");
    opt.impl = WGNN_SDPA_CHANNEL;
    expect(ctx, wgnn_sdpa(ctx, q, k, v, &opt, o), WGNN_ERR_UNSUPPORTED, "causal attention runs only in the fused",
           "causal channel");
    opt.causal = WGNN_SDPA_CAUSAL_NONE;
    {
        wgnn_tensor *q4 = mk(ctx, WGNN_F32, 4, 1, 4, 5, 8), *o4 = mk(ctx, WGNN_F32, 4, 1, 4, 5, 8);
        opt.enable_gqa = 1;
        expect(ctx, wgnn_sdpa(ctx, q4, k, v, &opt, o4), WGNN_ERR_UNSUPPORTED, "grouped-query attention",
               "GQA three-pass");
        uint64_t b = 0;
        wgnn_sdpa_impl rt = WGNN_SDPA_THREE_PASS;
        opt.impl = WGNN_SDPA_AUTO;
        CHECK(wgnn_sdpa_scratch_bytes(ctx, q4, k, v, &opt, &b, &rt) == WGNN_OK && rt == WGNN_SDPA_FUSED,
              "GQA routes to fused: %s", wgnn_context_error(ctx));
        opt.enable_gqa = 0;
        wgnn_tensor_destroy(q4);
        wgnn_tensor_destroy(o4);
    }
    opt.impl = WGNN_SDPA_AUTO;
    expect(ctx, wgnn_sdpa(ctx, q, k_b, v_b, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "differ in dim 0", "batch mismatch");
    expect(ctx, wgnn_sdpa(ctx, q, k_d, v_d, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "head dim D differs", "D mismatch");
    opt.mask = m_bad;
    expect(ctx, wgnn_sdpa(ctx, q, k, v, &opt, o), WGNN_ERR_INVALID_ARGUMENT, "must be [..., H, S_q, S_kv] = [1,2,5,7]",
           "mask shape");
    opt.mask = m_i32;
    expect(ctx, wgnn_sdpa(ctx, q, k, v, &opt, o), WGNN_ERR_INVALID_ARGUMENT, "mask is int32", "mask dtype");
    opt.mask = NULL;
    expect(ctx, wgnn_sdpa(ctx, q_f16, k, v, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "q is float16", "q dtype");
    expect(ctx, wgnn_sdpa(ctx, q, k, v, NULL, o_bad), WGNN_ERR_INVALID_ARGUMENT, "it must be float32 [1,2,5,8]", "out shape");
    expect(ctx, wgnn_sdpa(ctx, q, k, v, NULL, q), WGNN_ERR_INVALID_ARGUMENT, "also input 0", "out aliases q");
    expect(ctx, wgnn_sdpa(ctx, NULL, k, v, NULL, o), WGNN_ERR_INVALID_ARGUMENT, "q must not be NULL", "NULL q");
    opt.has_scale = 1;
    opt.scale = NAN;
    expect(ctx, wgnn_sdpa(ctx, q, k, v, &opt, o), WGNN_ERR_INVALID_ARGUMENT, "not finite", "NaN scale");
    opt.has_scale = 0;
    opt.impl = (wgnn_sdpa_impl)42;
    expect(ctx, wgnn_sdpa(ctx, q, k, v, &opt, o), WGNN_ERR_INVALID_ARGUMENT, "unknown impl", "bad impl");
    opt.impl = WGNN_SDPA_AUTO;
    opt.mask = m_ok;
    CHECK(wgnn_sdpa(ctx, q, k, v, &opt, o) == WGNN_OK, "the valid call still works: %s", wgnn_context_error(ctx));
    CHECK(wgnn_context_sync(ctx) == WGNN_OK, "%s", wgnn_context_error(ctx));

    /* Scratch past the device's limits: the three-pass path says which limit. */
    wgnn_limits lim;
    wgnn_context_limits(ctx, &lim);
    int64_t s = 1;
    while ((uint64_t)(s * s) * 4u <= lim.max_storage_buffer_binding_size) s *= 2;
    wgnn_tensor *qb = mk(ctx, WGNN_F32, 3, 1, s, 4, 0), *kb = mk(ctx, WGNN_F32, 3, 1, s, 4, 0);
    wgnn_tensor *vb = mk(ctx, WGNN_F32, 3, 1, s, 4, 0), *ob = mk(ctx, WGNN_F32, 3, 1, s, 4, 0);
    opt.mask = NULL;
    opt.impl = WGNN_SDPA_THREE_PASS;
    expect(ctx, wgnn_sdpa(ctx, qb, kb, vb, &opt, ob), WGNN_ERR_LIMIT, "maxStorageBufferBindingSize", "scratch limit");
    uint64_t bytes = 1;
    opt.impl = WGNN_SDPA_FUSED;
    wgnn_sdpa_impl routed;
    CHECK(wgnn_sdpa_scratch_bytes(ctx, qb, kb, vb, &opt, &bytes, &routed) == WGNN_OK && bytes == 0 &&
              routed == WGNN_SDPA_FUSED,
          "fused needs no scratch");

    wgnn_tensor *all[] = {q, k, v, o, q6, k6, v6, o6, q2, k3, v_bad, k_h, v_h, k_b, v_b, k_d, v_d,
                          m_ok, m_bad, m_i32, q_f16, o_bad, qb, kb, vb, ob};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wgnn_tensor_destroy(all[i]);
}

/* sdpa_fused_vh (D/4 = 2 x TX: D = 128 where subgroups hold 16 lanes, 64 on
 * lavapipe's 8), run with WGNN_FUSED_VH set (ctest test_sdpa_vh): partial
 * query and key tiles, one query row, grouped-query heads, float16 storage.
 * Without the knob the same cases check whatever route the shapes take. */
static void test_fused_vh(wgnn_context *ctx) {
    int64_t d = ctx->info.subgroup_min_size >= 16 ? 128 : 64;
    static const wgnn_sdpa_impl fused[] = {WGNN_SDPA_FUSED};
    case_desc a = {4, {1, 3}, 100, 70, d, MASK_NONE, 0, 0, 1};
    run_case(ctx, &a, fused, 1);
    case_desc b = {4, {2, 2}, 130, 200, d, MASK_NONE, 1, 0.3f, 3};
    run_case(ctx, &b, fused, 1);
    case_desc c = {3, {4}, 1, 65, d, MASK_NONE, 0, 0, 1};
    run_case(ctx, &c, fused, 1);
    case_desc g = {4, {1, 4}, 77, 129, d, MASK_NONE, 0, 0, 2};
    run_case_ex(ctx, &g, 2, WGNN_SDPA_CAUSAL_NONE, fused, 1); /* 4 q heads over 2 kv heads */
    const int64_t f16_shape[5] = {1, 2, 70, 90, d};
    f16_case(ctx, f16_shape, 0, WGNN_SDPA_FUSED, 0, "vh f16");
}

int main(int argc, char **argv) {
    tu_seed(argc > 1 ? strtoull(argv[1], NULL, 10) : 20261130u);
    wgnn_context *ctx = tu_context();
    if (argc > 2 && strcmp(argv[2], "vh") == 0) { /* ctest test_sdpa_vh */
        test_fused_vh(ctx);
        wgnn_context_destroy(ctx);
        return tu_finish();
    }
    test_validation(ctx);
    test_causal_gqa(ctx);
    if (argc > 2 && strcmp(argv[2], "causal") == 0) { /* quick run while developing */
        wgnn_context_destroy(ctx);
        return tu_finish();
    }
    test_suite_shapes(ctx);
    test_fused_head_chunks(ctx);
    test_masks_and_scale(ctx);
    test_many_rows(ctx, argc <= 1); /* the slow chunking case once, not in the per-tile reruns */
    test_random_sweep(ctx);
    test_f16(ctx);
    wgnn_context_options plain = {0};
    plain.disable_optional_features = 1;
    wgnn_context *ctx2 = NULL;
    CHECK(wgnn_context_create(&plain, &ctx2) == WGNN_OK && !wgnn_context_has_f16(ctx2), "a context without shader-f16: %s",
          wgnn_context_error(ctx2));
    if (ctx2) test_f16(ctx2);
    wgnn_context_destroy(ctx2);
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
    wgnn_context_destroy(ctx);
    return tu_finish();
}
