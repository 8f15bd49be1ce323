/* test_gemm.c - what the case table (tests/cases/gemm.inc) cannot say about
 * the shared GEMM (src/ops/gemm.c):
 *   - every register tile on the same problems (WGNN_GEMM_TILE's choices,
 *     set through the context's knobs);
 *   - splitting over the batch and over rows of A and C at aligned binding
 *     offsets, made to happen on small tensors by lowering the context's
 *     copy of the device limits, and the error when a matrix cannot split;
 *   - the fused activations of the epilogue, in both kernels (wgnn__gemm_plan directly:
 *     graph builders use them; no aten op has them). */
#include "testutil.h"

#include "internal.h"
#include "ops/gemm.h"

static void cases(wgnn_context *ctx, const char *what, bool small_b) {
    static const int64_t mm[][3] = {{1, 1, 1}, {5, 3, 7}, {33, 17, 31}, {130, 9, 70}, {64, 64, 64}, {200, 20, 129}};
    char name[160];
    for (size_t i = 0; i < sizeof mm / sizeof mm[0]; i++) {
        int64_t a[2] = {mm[i][0], mm[i][1]}, b[2] = {mm[i][1], mm[i][2]};
        if (small_b && b[0] * b[1] > 900) continue; /* B cannot split */
        tu_in_spec sp[2] = {tu_f32(2, a, -1, 1), tu_f32(2, b, -1, 1)};
        snprintf(name, sizeof name, "%s: mm %lldx%lldx%lld", what, (long long)a[0], (long long)a[1], (long long)b[1]);
        tu_run_op(ctx, name, "mm", sp, 2, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    }
    int64_t ba[3] = {7, 19, 11}, bb[3] = {7, 11, 23};
    tu_in_spec bsp[2] = {tu_f32(3, ba, -1, 1), tu_f32(3, bb, -1, 1)};
    snprintf(name, sizeof name, "%s: bmm", what);
    tu_run_op(ctx, name, "bmm", bsp, 2, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    int64_t lx[3] = {3, 21, 40}, lw[2] = {20, 40}, lb[1] = {20};
    tu_in_spec lsp[3] = {tu_f32(3, lx, -1, 1), tu_f32(2, lw, -1, 1), tu_f32(1, lb, -1, 1)};
    snprintf(name, sizeof name, "%s: linear", what);
    tu_run_op(ctx, name, "linear", lsp, 3, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    int64_t ma[4] = {2, 1, 13, 6}, mb[3] = {3, 6, 9};
    tu_in_spec msp[2] = {tu_f32(4, ma, -1, 1), tu_f32(3, mb, -1, 1)};
    snprintf(name, sizeof name, "%s: matmul broadcast", what);
    tu_run_op(ctx, name, "matmul", msp, 2, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    int64_t ca[2] = {40, 1}, xa[2] = {40, 12}, xb[2] = {12, 30};
    tu_in_spec asp[3] = {tu_f32(2, ca, -1, 1), tu_f32(2, xa, -1, 1), tu_f32(2, xb, -1, 1)};
    const char *args[2] = {"beta=0.5", "alpha=-2"};
    snprintf(name, sizeof name, "%s: addmm", what);
    tu_run_op(ctx, name, "addmm", asp, 3, args, 2, NULL, NULL, 0, 1e-4, 1e-3);
    /* a float16 B not transposed (the encoders' weights, [K, N]): four
     * halves a load where N allows, one at a time where it does not */
    static const int64_t hb[][3] = {{70, 64, 96}, {33, 17, 31}};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) {
        if (small_b && hb[i][1] * hb[i][2] * 2 > 3600) continue; /* B cannot split */
        int64_t bias[1] = {hb[i][2]}, a[2] = {hb[i][0], hb[i][1]}, b[2] = {hb[i][1], hb[i][2]};
        tu_in_spec hsp[3] = {tu_f32(1, bias, -1, 1), tu_f32(2, a, -1, 1), tu_f32(2, b, -1, 1)};
        hsp[2].d.dtype = WGNN_F16;
        const char *gelu[1] = {"activation=gelu"};
        snprintf(name, sizeof name, "%s: addmm %lldx%lldx%lld, f16 mat2, gelu", what, (long long)a[0],
                 (long long)a[1], (long long)b[1]);
        tu_run_op(ctx, name, "addmm", hsp, 3, gelu, 1, NULL, NULL, 0, 1e-4, 1e-3);
        snprintf(name, sizeof name, "%s: mm %lldx%lldx%lld, f16 other", what, (long long)a[0], (long long)a[1],
                 (long long)b[1]);
        tu_run_op(ctx, name, "mm", hsp + 1, 2, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    }
}

/* act(x @ w^T + b) through wgnn__gemm_plan against the host. */
static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelu_tanh(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

static void activations(wgnn_context *ctx, int M) {
    enum { K = 24, N = 45, MMAX = 37 };
    float a[MMAX * K], w[N * K], b[N], got[MMAX * N];
    tu_fill(a, M * K, -2, 2);
    tu_fill(w, N * K, -1, 1);
    tu_fill(b, N, -1, 1);
    int64_t da[2] = {M, K}, dw[2] = {N, K}, db[1] = {N}, dc[2] = {M, N};
    wgnn_tensor *ta = NULL, *tw = NULL, *tb = NULL, *tc = NULL;
    bool ok = wgnn_tensor_create(ctx, WGNN_F32, 2, da, &ta) == WGNN_OK &&
              wgnn_tensor_create(ctx, WGNN_F32, 2, dw, &tw) == WGNN_OK &&
              wgnn_tensor_create(ctx, WGNN_F32, 1, db, &tb) == WGNN_OK &&
              wgnn_tensor_create(ctx, WGNN_F32, 2, dc, &tc) == WGNN_OK &&
              wgnn_tensor_upload(ctx, ta, a, (size_t)M * K * 4) == WGNN_OK && wgnn_tensor_upload(ctx, tw, w, sizeof w) == WGNN_OK &&
              wgnn_tensor_upload(ctx, tb, b, sizeof b) == WGNN_OK;
    CHECK(ok, "activations: setup: %s", wgnn_context_error(ctx));
    static const char *const names[] = {"none", "relu", "gelu", "gelu_tanh", "silu"};
    for (int act = 0; ok && act <= WGNN__ACT_SILU; act++) {
        wgnn__gemm g = {.m = M, .n = N, .k = K, .batch = 1,
                        .a = {ta->buf, -1, 0, 0}, .b = {tw->buf, -1, 0, 0}, .c = {tc->buf, -1, 0, 0},
                        .bias = {tb->buf, -1, 0, 0}, .lda = K, .ldb = K, .ldc = N, .bias_rs = 0, .bias_cs = 1,
                        .trans_b = true, .alpha = 1, .beta = 1, .act = (wgnn__act)act};
        wgnn__plan p = {0};
        p.label = "gemm act";
        wgnn_status s = wgnn__gemm_plan(ctx, &p, &g);
        if (s == WGNN_OK) s = wgnn__plan_encode(ctx, &p);
        wgnn__plan_free(&p);
        if (s == WGNN_OK) s = wgnn_tensor_download(ctx, tc, got, (size_t)M * N * 4);
        CHECK(s == WGNN_OK, "activation %s, M=%d: %s", names[act], M, wgnn_context_error(ctx));
        if (s != WGNN_OK) break;
        int bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double x = b[j];
                for (int k = 0; k < K; k++) x += (double)a[i * K + k] * w[j * K + k];
                double y = act == 1 ? (x > 0 ? x : 0) : act == 2 ? gelu(x) : act == 3 ? gelu_tanh(x)
                         : act == 4 ? x / (1 + exp(-x)) : x;
                if (fabs(got[i * N + j] - y) > 1e-4 + 1e-3 * fabs(y)) bad++;
            }
        CHECK(bad == 0, "activation %s, M=%d: %d of %d values differ", names[act], M, bad, M * N);
    }
    wgnn_tensor_destroy(ta);
    wgnn_tensor_destroy(tw);
    wgnn_tensor_destroy(tb);
    wgnn_tensor_destroy(tc);
}

/* A [1, K] x [K, 1] product when one binding holds 4096 bytes: with K =
 * 2000 split-K cuts A's one row into slices that fit (and the result is
 * right); K = 2003 (prime) cannot be cut, and the error names the limit. */
static void limit_error(wgnn_context *ctx) {
    for (int64_t kk = 2000; kk <= 2003; kk += 3) {
        int64_t a[2] = {1, kk}, b[2] = {kk, 1};
        wgnn_tensor *ta = NULL, *tb = NULL, *tc = NULL;
        int64_t c[2] = {1, 1};
        bool ok = wgnn_tensor_create(ctx, WGNN_F32, 2, a, &ta) == WGNN_OK &&
                  wgnn_tensor_create(ctx, WGNN_F32, 2, b, &tb) == WGNN_OK &&
                  wgnn_tensor_create(ctx, WGNN_F32, 2, c, &tc) == WGNN_OK;
        CHECK(ok, "limit: setup");
        float *x = malloc((size_t)kk * sizeof *x), *y = malloc((size_t)kk * sizeof *y);
        tu_fill(x, (size_t)kk, -1, 1);
        tu_fill(y, (size_t)kk, -1, 1);
        if (ok) ok = wgnn_tensor_upload(ctx, ta, x, (size_t)kk * 4) == WGNN_OK &&
                     wgnn_tensor_upload(ctx, tb, y, (size_t)kk * 4) == WGNN_OK;
        if (ok) {
            const wgnn_tensor *in[2] = {ta, tb};
            wgnn_status s = wgnn_op(ctx, "mm", in, 2, NULL, 0, &tc, 1);
            if (kk == 2000 && getenv("WGNN_GEMM_SPLIT")) {
                /* a forced slice count may not fit: not what this checks */
            } else if (kk == 2000) {
                float got = 0;
                double ref = 0;
                for (int64_t i = 0; i < kk; i++) ref += (double)x[i] * y[i];
                CHECK(s == WGNN_OK && wgnn_tensor_download(ctx, tc, &got, 4) == WGNN_OK &&
                          fabs(got - ref) <= 1e-4 + 1e-3 * fabs(ref),
                      "split-K past the binding limit: %d %s: %g vs %g", s, wgnn_context_error(ctx), got, ref);
            } else {
                CHECK(s == WGNN_ERR_LIMIT &&
                          strstr(wgnn_context_error(ctx), "one row of a 1 x 2003 x 1 product passes"),
                      "a matrix past the binding limit: %d %s", s, wgnn_context_error(ctx));
            }
        }
        free(x);
        free(y);
        wgnn_tensor_destroy(ta);
        wgnn_tensor_destroy(tb);
        wgnn_tensor_destroy(tc);
    }
}

int main(void) {
    tu_seed(20261201u);
    wgnn_context *ctx = tu_context();
    cases(ctx, "default tiles", false);
    static const uint32_t tiles[][5] = {{16, 16, 8, 8, 8}, {16, 16, 4, 4, 8}, {8, 8, 4, 4, 8},
                                        {16, 16, 8, 4, 8}, {8, 16, 4, 8, 8}, {16, 16, 4, 4, 16}};
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "tile %ux%ux%ux%ux%u", tiles[i][0], tiles[i][1], tiles[i][2], tiles[i][3],
                 tiles[i][4]);
        memcpy(ctx->knobs.gemm_tile, tiles[i], sizeof tiles[i]);
        cases(ctx, what, false);
        /* the epilogue's activations with a bias of one row in the
         * accumulators on this tile (gemm.wgsl applies them in a loop of
         * their own before the store loop) */
        activations(ctx, 37);
    }
    memset(ctx->knobs.gemm_tile, 0, sizeof ctx->knobs.gemm_tile);
    {
        /* a product with a bias big enough for the 128 x 128 tile: the bias
         * (times beta / alpha) in its accumulators, the activation of alpha
         * times them before the store; with WGNN_GEMM_BIAS_INIT=0 the plain
         * product into scratch, the bias (and beta, alpha) in gemm_reduce */
        tu_in_spec sp[3] = {{{WGNN_F32, 2, {2945}}, -1, 1},
                            {{WGNN_F32, 2, {2945, 5}}, -1, 1},
                            {{WGNN_F32, 2, {5, 2945}}, -1, 1}};
        sp[0].d.rank = 1;
        const char *args[3] = {"beta=0.5", "alpha=2", "activation=gelu"};
        tu_run_op(ctx, "addmm 2945x5x2945, bias in the accumulators", "addmm", sp, 3, args, 2, NULL, NULL, 0, 1e-4,
                  1e-3);
        tu_run_op(ctx, "addmm 2945x5x2945 gelu, bias in the accumulators", "addmm", sp, 3, args, 3, NULL, NULL, 0,
                  1e-4, 1e-3);
        int bi = ctx->knobs.gemm_bias_init;
        ctx->knobs.gemm_bias_init = 0;
        tu_run_op(ctx, "addmm 2945x5x2945, bias pass", "addmm", sp, 3, args, 2, NULL, NULL, 0, 1e-4, 1e-3);
        tu_run_op(ctx, "addmm 2945x5x2945 gelu, bias pass", "addmm", sp, 3, args, 3, NULL, NULL, 0, 1e-4, 1e-3);
        ctx->knobs.gemm_bias_init = bi;
    }
    {
        /* wave-balanced products (gemm_split.c's wave_choose and tail plan,
         * gemm.wgsl's SK), made to happen by the compute units the context
         * is told: the first tiles whole, the last ones in K slices. With a
         * bias of one row (in the accumulators) and no residual, the tail
         * plan: the slices into scratch, the whole tiles into C with their
         * epilogue, and gemm_tail sums the slices into C with the bias and
         * the activation. 2945 x 2945 on 128 x
         * 128 tiles is 24 x 24 = 576 tiles: with 280 units, 560 whole and
         * 16 in 2 slices of K = 32 (gemm_tail one float a thread: n odd),
         * with alpha and beta, then ReLU, then as a plain mm; 2945 x 2944
         * (552 tiles) with 270 units, 540 whole and 12 in 4 slices of K =
         * 64 (quads), with GELU and a float16 weight. linear's bias and
         * residual (no tail plan: the residual) run the tiles whole. */
        uint32_t units = ctx->knobs.compute_units;
        tu_in_spec odd[3] = {{{WGNN_F32, 1, {2945}}, -1, 1},
                             {{WGNN_F32, 2, {2945, 32}}, -1, 1},
                             {{WGNN_F32, 2, {32, 2945}}, -1, 1}};
        const char *ab[2] = {"beta=0.5", "alpha=2"};
        ctx->knobs.compute_units = 280;
        tu_run_op(ctx, "addmm 2945x32x2945, 280 units: 16 tiles in 2 K slices", "addmm", odd, 3, ab, 2, NULL, NULL, 0,
                  1e-4, 1e-3);
        const char *ab_relu[3] = {"beta=0.5", "alpha=2", "activation=relu"};
        tu_run_op(ctx, "addmm 2945x32x2945 relu, 280 units: 16 tiles in 2 K slices", "addmm", odd, 3, ab_relu, 3, NULL,
                  NULL, 0, 1e-4, 1e-3);
        tu_run_op(ctx, "mm 2945x32x2945, 280 units: 16 tiles in 2 K slices", "mm", odd + 1, 2, NULL, 0, NULL, NULL, 0,
                  1e-4, 1e-3);
        tu_in_spec quad[3] = {{{WGNN_F32, 1, {2944}}, -1, 1},
                              {{WGNN_F32, 2, {2945, 64}}, -1, 1},
                              {{WGNN_F32, 2, {64, 2944}}, -1, 1}};
        const char *gelu[1] = {"activation=gelu"};
        ctx->knobs.compute_units = 270;
        tu_run_op(ctx, "addmm 2945x64x2944 gelu, 270 units: 12 tiles in 4 K slices", "addmm", quad, 3, gelu, 1, NULL,
                  NULL, 0, 1e-4, 1e-3);
        tu_in_spec lin[4] = {{{WGNN_F32, 2, {2945, 64}}, -1, 1},
                             {{WGNN_F32, 2, {2944, 64}}, -1, 1},
                             {{WGNN_F32, 1, {2944}}, -1, 1},
                             {{WGNN_F32, 2, {2945, 2944}}, -1, 1}};
        const char *res[1] = {"residual=true"};
        tu_run_op(ctx, "linear 2945x64x2944 bias and residual, 270 units: 12 tiles in 4 K slices", "linear", lin, 4,
                  res, 1, NULL, NULL, 0, 1e-4, 1e-3);
        tu_in_spec lin16[3] = {{{WGNN_F32, 2, {2945, 64}}, -1, 1},
                               {{WGNN_F16, 2, {2944, 64}}, -1, 1},
                               {{WGNN_F32, 1, {2944}}, -1, 1}};
        tu_run_op(ctx, "linear 2945x64x2944 f16 weight, 270 units: 12 tiles in 4 K slices", "linear", lin16, 3, NULL,
                  0, NULL, NULL, 0, 1e-4, 1e-3);
        /* too few tiles for the bias pass (16 x 14 = 224 < 512) but two
         * waves' worth at 100 units: the 128 x 128 tile all the same, 200
         * tiles whole and 24 in 4 slices; a bias column */
        tu_in_spec col[3] = {{{WGNN_F32, 2, {2000, 1}}, -1, 1},
                             {{WGNN_F32, 2, {2000, 64}}, -1, 1},
                             {{WGNN_F32, 2, {64, 1700}}, -1, 1}};
        ctx->knobs.compute_units = 100;
        tu_run_op(ctx, "addmm 2000x64x1700 bias column, 100 units: 24 tiles in 4 K slices", "addmm", col, 3, ab, 2,
                  NULL, NULL, 0, 1e-4, 1e-3);
        /* a wave only when K is split: 16 tiles, K = 1024, 40 units: 2
         * uniform slices on the 128 x 128 tile, the bias and ReLU in the reduce */
        tu_in_spec two[3] = {{{WGNN_F32, 1, {500}}, -1, 1},
                             {{WGNN_F32, 2, {500, 1024}}, -1, 1},
                             {{WGNN_F32, 2, {1024, 500}}, -1, 1}};
        const char *relu[1] = {"activation=relu"};
        ctx->knobs.compute_units = 40;
        tu_run_op(ctx, "addmm 500x1024x500 relu, 40 units: 2 K slices on 128 x 128", "addmm", two, 3, relu, 1, NULL,
                  NULL, 0, 1e-4, 1e-3);
        ctx->knobs.compute_units = units;
    }
    {
        /* the tail plan's choice (wgnn__gemm_tail_plan) where the 128 x 128
         * tile runs (256 threads, no forced tile or split): ViT-B/16's fc1
         * at batch 32 (6304 x 3072 x 768, 1200 tiles) with the H200's 132
         * units: 1188 whole (4.5 waves), 12 in 11 slices; none with the
         * units unknown, for SigLIP-B/16's 6272 rows (1176 tiles: 120 left,
         * too many for two slices each), or with a residual */
        uint32_t units = ctx->knobs.compute_units;
        if (ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 && !ctx->knobs.gemm_tile[0] && ctx->knobs.gemm_split < 1 &&
            ctx->knobs.gemm_waves != 0 && ctx->knobs.gemm_bias_init != 0) {
            wgnn__gemm g = {.m = 6304, .n = 3072, .k = 768, .batch = 1, .lda = 768, .ldb = 3072, .ldc = 3072, .bias_cs = 1,
                            .alpha = 1, .beta = 1, .act = WGNN__ACT_GELU};
            g.bias.scratch = 0;
            g.res.scratch = -1;
            uint32_t dp = 0, ts = 0;
            ctx->knobs.compute_units = 132;
            CHECK(wgnn__gemm_tail_plan(ctx, &g, &dp, &ts) && dp == 1188 && ts == 11,
                  "tail plan 6304x3072x768 at 132 units: %u whole, %u slices (want 1188, 11)", dp, ts);
            ctx->knobs.compute_units = 0;
            CHECK(!wgnn__gemm_tail_plan(ctx, &g, &dp, &ts), "tail plan 6304x3072x768, units unknown: none");
            ctx->knobs.compute_units = 132;
            g.m = 6272;
            CHECK(!wgnn__gemm_tail_plan(ctx, &g, &dp, &ts), "tail plan 6272x3072x768 at 132 units: none");
            g.m = 6304;
            g.res.buf = (WGPUBuffer)(uintptr_t)1; /* only tested for NULL */
            CHECK(!wgnn__gemm_tail_plan(ctx, &g, &dp, &ts), "tail plan with a residual: none");
        }
        ctx->knobs.compute_units = units;
    }
    {
        /* gemvn.wgsl's route (wgnn__gemm_pick_tile): 1-4 rows against an
         * untransposed B of whole quads, and not otherwise (N or B's row
         * stride not a multiple of 4, five rows, a transposed B: gemv.wgsl);
         * its column quads for mm 1 x 4096 x 4096 (1024 quads): 4 with the
         * H200's 132 units (a workgroup a unit), 4 with none known (256);
         * for 1 x 768 (192 quads) 2, the fewest */
        uint32_t units = ctx->knobs.compute_units, forced = ctx->knobs.gemvn_quads;
        ctx->knobs.gemvn_quads = 0;
        wgnn__gemm g = {.m = 1, .n = 4096, .k = 4096, .batch = 1, .lda = 4096, .ldb = 4096, .ldc = 4096, .alpha = 1,
                        .beta = 1};
        g.bias.scratch = g.res.scratch = -1;
        ctx->knobs.compute_units = 132;
        wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(t.gemv_n && t.gemv_mr == 1 && t.wy == 4, "gemvn 1x4096x4096, 132 units: gemv_n %d, rows %u, quads %u",
              t.gemv_n, t.gemv_mr, t.wy);
        g.n = g.ldb = g.ldc = 768;
        t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(t.gemv_n && t.wy == 2, "gemvn 1x4096x768, 132 units: quads %u (want 2)", t.wy);
        g.n = g.ldb = g.ldc = 4096;
        ctx->knobs.compute_units = 0;
        t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(t.gemv_n && t.wy == 4, "gemvn 1x4096x4096, units unknown: quads %u (want 4)", t.wy);
        g.m = 4;
        t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(t.gemv_n && t.gemv_mr == 4, "gemvn 4 rows: gemv_n %d, rows %u", t.gemv_n, t.gemv_mr);
        {
            /* threads halved until the partial sums (threads x rows vec4)
             * fit workgroup memory: 1024 at 4 rows are 64 KiB */
            uint32_t wg_knob = ctx->knobs.gemv_wg, storage = ctx->limits.maxComputeWorkgroupStorageSize;
            ctx->knobs.gemv_wg = 1024;
            ctx->limits.maxComputeWorkgroupStorageSize = 16384;
            t = wgnn__gemm_pick_tile(ctx, &g);
            CHECK(t.gemv_n && t.wx >= 32 && (uint64_t)t.wx * 4 * 16 <= 16384,
                  "gemvn 4 rows, 1024 threads asked, 16 KiB: %u threads", t.wx);
            ctx->knobs.gemv_wg = wg_knob;
            ctx->limits.maxComputeWorkgroupStorageSize = storage;
        }
        g.m = 5;
        CHECK(!wgnn__gemm_pick_tile(ctx, &g).gemv_n, "gemvn: not for 5 rows");
        g.m = 1;
        g.n = 4094;
        CHECK(!wgnn__gemm_pick_tile(ctx, &g).gemv_n, "gemvn: not for N = 4094");
        g.n = 4096;
        g.ldb = 4098;
        CHECK(!wgnn__gemm_pick_tile(ctx, &g).gemv_n, "gemvn: not for a row stride of 4098");
        g.ldb = 4096;
        g.trans_b = true;
        t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(!t.gemv_n && t.gemv_mr == 1, "a transposed B: gemv.wgsl (gemv_n %d, rows %u)", t.gemv_n, t.gemv_mr);
        ctx->knobs.compute_units = units;
        ctx->knobs.gemvn_quads = forced;
    }
    {
        /* conv2d's gathered product (cols) on wgnn__gemm_pick_tile: 128 x 64
         * where that tile gives a workgroup a compute unit (here 132), else
         * 64 x 64 (3x3 64 -> 64: 128-row tiles half padding; a product too
         * small for 132 of either), never the small-M tile; the same
         * product without cols takes the small-M tile. */
        uint32_t units = ctx->knobs.compute_units, forced = ctx->knobs.gemm_tile[0];
        ctx->knobs.gemm_tile[0] = 0;
        ctx->knobs.compute_units = 132;
        wgnn__conv2d_geom geom = {0};
        wgnn__gemm g = {.m = 256, .n = 6272, .k = 1152, .batch = 1, .lda = 1152, .ldb = 6272, .ldc = 6272,
                        .alpha = 1, .cols = &geom};
        g.bias.scratch = g.res.scratch = -1;
        wgnn__gemm_tile t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(t.wy * t.tm == 128 && t.wx * t.tn == 64, "cols 256 x 6272: %u x %u (want 128 x 64)", t.wy * t.tm,
              t.wx * t.tn);
        g.m = 64, g.n = g.ldb = g.ldc = 25088, g.k = g.lda = 576;
        t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(t.wy * t.tm == 64 && t.wx * t.tn == 64, "cols 64 x 25088: %u x %u (want 64 x 64)", t.wy * t.tm,
              t.wx * t.tn);
        g.m = 32, g.n = g.ldb = g.ldc = 256;
        t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(t.wy * t.tm == 64 && t.wx * t.tn == 64, "cols 32 x 256: %u x %u (want 64 x 64)", t.wy * t.tm,
              t.wx * t.tn);
        g.cols = NULL;
        t = wgnn__gemm_pick_tile(ctx, &g);
        CHECK(!wgnn__gemm_small_tile_ok(ctx) || (t.wy * t.tm == 32 && t.wx * t.tn == 64),
              "32 x 256 without cols: %u x %u (want the small-M tile)", t.wy * t.tm, t.wx * t.tn);
        ctx->knobs.compute_units = units;
        ctx->knobs.gemm_tile[0] = forced;
    }
    {
        /* split-K (8 slices of 128) with the reduce in quads (n and the
         * offsets multiples of 4): a bias row with GELU, a bias column, and
         * linear's bias and residual */
        tu_in_spec row[3] = {{{WGNN_F32, 1, {96}}, -1, 1},
                             {{WGNN_F32, 2, {64, 1024}}, -1, 1},
                             {{WGNN_F32, 2, {1024, 96}}, -1, 1}};
        const char *gelu[1] = {"activation=gelu"};
        tu_run_op(ctx, "addmm 64x1024x96 split, quads, bias row, gelu", "addmm", row, 3, gelu, 1, NULL, NULL, 0, 1e-4,
                  1e-3);
        tu_in_spec col[3] = {{{WGNN_F32, 2, {64, 1}}, -1, 1},
                             {{WGNN_F32, 2, {64, 1024}}, -1, 1},
                             {{WGNN_F32, 2, {1024, 96}}, -1, 1}};
        tu_run_op(ctx, "addmm 64x1024x96 split, quads, bias column", "addmm", col, 3, NULL, 0, NULL, NULL, 0, 1e-4,
                  1e-3);
        tu_in_spec lin[4] = {{{WGNN_F32, 2, {64, 1024}}, -1, 1},
                             {{WGNN_F32, 2, {96, 1024}}, -1, 1},
                             {{WGNN_F32, 1, {96}}, -1, 1},
                             {{WGNN_F32, 2, {64, 96}}, -1, 1}};
        const char *res[1] = {"residual=true"};
        tu_run_op(ctx, "linear 64x1024x96 split, quads, bias and residual", "linear", lin, 4, res, 1, NULL, NULL, 0,
                  1e-4, 1e-3);
    }
    {
        /* wgnn__gemm_bias_pass_alone (the encoders' q|k|v bias moves into
         * sdpa_qkvpacked where it holds): ViT-B/16's q|k|v at batch 32 runs
         * on the 128 x 128 tile with the bias in its accumulators (plain + a
         * bias pass with WGNN_GEMM_BIAS_INIT=0), with no compute units known
         * and with the H200's 132; at batch 8 with 132 units the wave plan
         * puts it on the 128 x 128 tile for its bias, where the plain product
         * would take a smaller one; 197 rows take the 32 x 64 tile with the
         * bias in it */
        uint32_t units = ctx->knobs.compute_units;
        bool big = ctx->limits.maxComputeInvocationsPerWorkgroup >= 256 && ctx->knobs.gemm_split < 1; /* a forced split: never */
        bool pass = big && ctx->knobs.gemm_bias_init == 0;
        ctx->knobs.compute_units = 0;
        CHECK(wgnn__gemm_bias_pass_alone(ctx, 6304, 2304, 768, false, false) == pass, "bias pass alone: 6304, no units");
        CHECK(wgnn__gemm_bias_pass_alone(ctx, 6304, 2304, 768, true, true) == pass, "bias pass alone: 6304 f16 linear");
        CHECK(!wgnn__gemm_bias_pass_alone(ctx, 197, 2304, 768, false, false), "bias pass alone: 197 rows");
        ctx->knobs.compute_units = 132;
        CHECK(wgnn__gemm_bias_pass_alone(ctx, 6304, 2304, 768, false, false) == pass, "bias pass alone: 6304, 132 units");
        /* 1576 rows: 234 tiles, one wave at 132 units: the plain product on the 128 x 128 tile too */
        CHECK(wgnn__gemm_bias_pass_alone(ctx, 1576, 2304, 768, false, false) == big, "bias pass alone: 1576, 132 units");
        ctx->knobs.compute_units = 100;
        /* 312 tiles (1576 x 3072) past two waves of 100: the wide plan's 128 x 128 tile for the biased product, a
           smaller one for the plain one */
        CHECK(!wgnn__gemm_bias_pass_alone(ctx, 1576, 3072, 768, false, false), "bias pass alone: 1576 x 3072, 100 units");
        ctx->knobs.compute_units = units;
    }
    {
        /* a plain product of one wave of 128 x 128 tiles (gemm.c's one_wave):
         * 1000 x 700 is 8 x 6 = 48 tiles, one wave at 40 units */
        uint32_t units = ctx->knobs.compute_units;
        ctx->knobs.compute_units = 40;
        tu_in_spec mm[2] = {{{WGNN_F32, 2, {1000, 96}}, -1, 1}, {{WGNN_F32, 2, {96, 700}}, -1, 1}};
        tu_run_op(ctx, "mm 1000x96x700, one wave of 128 x 128 tiles at 40 units", "mm", mm, 2, NULL, 0, NULL, NULL, 0,
                  1e-4, 1e-3);
        ctx->knobs.compute_units = units;
    }
    {
        /* wgnn__gemm_kw, the K groups inside the small-M tile's workgroups,
         * at ViT-B/16's batch-1 products (M = 197) with the H200's 132
         * units: the fewest slices' worth of threads on the busiest unit,
         * ties to the most groups (session 17 call 1); with the units
         * unknown, the most groups that divide the slices */
        const WGPULimits *lim = &ctx->limits;
        if (!ctx->knobs.gemm_tile[0] && ctx->knobs.gemm_db != 1 && ctx->knobs.gemm_kw < 0 &&
            wgnn__gemm_small_tile_ok(ctx) && lim->maxComputeInvocationsPerWorkgroup >= 256 &&
            lim->maxComputeWorkgroupSizeX >= 256 && lim->maxComputeWorkgroupStorageSize >= 27 * 1024) {
            uint32_t units = ctx->knobs.compute_units;
            static const uint32_t shapes[][5] = {/* n, k, s, kw at 132 units, kw at 0 */
                                                 {3072, 768, 2, 2, 2}, {768, 3072, 6, 2, 3}, {2304, 768, 3, 3, 3},
                                                 {768, 768, 6, 2, 3},  {768, 768, 5, 1, 1},  {768, 768, 1, 1, 1}};
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                wgnn__gemm g = {.m = 197, .n = shapes[i][0], .k = shapes[i][1], .batch = 1, .lda = shapes[i][1],
                                .ldb = shapes[i][0], .ldc = shapes[i][0], .bias_cs = 1, .alpha = 1, .beta = 1};
                g.bias.scratch = g.res.scratch = -1;
                ctx->knobs.compute_units = 132;
                uint32_t kw = wgnn__gemm_kw(ctx, &g, shapes[i][2]);
                CHECK(kw == shapes[i][3], "gemm_kw 197x%ux%u, %u slices, 132 units: %u groups, want %u", shapes[i][0],
                      shapes[i][1], shapes[i][2], kw, shapes[i][3]);
                ctx->knobs.compute_units = 0;
                kw = wgnn__gemm_kw(ctx, &g, shapes[i][2]);
                CHECK(kw == shapes[i][4], "gemm_kw 197x%ux%u, %u slices, units unknown: %u groups, want %u",
                      shapes[i][0], shapes[i][1], shapes[i][2], kw, shapes[i][4]);
            }
            ctx->knobs.compute_units = units;
        }
    }
    activations(ctx, 37); /* tiles */
    activations(ctx, 3);  /* gemv */
    /* 4 KiB bindings at 256-byte offsets: bmm's batch, and the rows of mm's
     * A and C (130 x 9, 130 x 70 floats), split; grids of 4 workgroups a
     * dimension: the batch splits into dispatches of 4 */
    WGPULimits saved = ctx->limits;
    ctx->limits.maxStorageBufferBindingSize = 4096;
    ctx->limits.minStorageBufferOffsetAlignment = 256;
    ctx->limits.maxComputeWorkgroupsPerDimension = 8;
    cases(ctx, "4 KiB bindings", true);
    limit_error(ctx);
    ctx->limits = saved;
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
    wgnn_context_destroy(ctx);
    return tu_finish();
}
