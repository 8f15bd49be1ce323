/* test_spatial.c - what the case table (tests/cases/spatial.inc) cannot say
 * about the spatial family:
 *   - output shapes against the sizes PyTorch gives (ceil_mode's last-window
 *     rule, ResNet's stem, ViT's patch embedding, ...);
 *   - max_pool2d propagates NaN and skips -inf padding;
 *   - the im2col building block (src/ops/conv.h) against a CPU im2col,
 *     from an offset sample into an offset destination;
 *   - conv2d's columns written by im2col and gathered by the GEMM, on
 *     every GEMM tile;
 *   - splitting over offset bindings, folded grids, small workgroups and
 *     little workgroup memory, made to happen on small tensors by lowering
 *     the context's copy of the device limits; the limit errors. */
#include "testutil.h"

#include "internal.h"
#include "ops/conv.h"

typedef tu_in_spec in_spec;

static in_spec f32(int rank, const int64_t *dims) {
    in_spec s;
    memset(&s, 0, sizeof s);
    s.d.dtype = WGNN_F32;
    s.d.rank = rank;
    for (int i = 0; i < rank; i++) s.d.dims[i] = dims[i];
    s.lo = -1;
    s.hi = 1;
    return s;
}

static uint64_t numel(const wgnn_desc *d) {
    uint64_t n = 1;
    for (int i = 0; i < d->rank; i++) n *= (uint64_t)d->dims[i];
    return n;
}

/* tu_run_op at this file's tolerance (1e-4 + 1e-3 |ref|) */
static void run(wgnn_context *ctx, const char *what, const char *op, const in_spec *sp, int n_in,
                const char *const *args, int n_args, const uint64_t *sp_idx, const float *sp_val, int n_sp) {
    tu_run_op(ctx, what, op, sp, n_in, args, n_args, sp_idx, sp_val, n_sp, 1e-4, 1e-3);
}

/* ---- shapes as PyTorch gives them ------------------------------------------------ */

static void shape_is(const char *op, wgnn_desc in0, const wgnn_desc *in1, const char *const *args, int n_args,
                     int rank, const int64_t *want) {
    wgnn_desc in[2] = {in0, in1 ? *in1 : in0}, out;
    int n_out = 0;
    char err[512] = "";
    wgnn_status s = wgnn_op_shapes(op, in, in1 ? 2 : 1, args, n_args, &out, 1, &n_out, err, sizeof err);
    bool same = s == WGNN_OK && out.rank == rank;
    for (int i = 0; same && i < rank; i++) same = out.dims[i] == want[i];
    char got[160] = "";
    if (s == WGNN_OK) {
        size_t m = 0;
        for (int i = 0; i < out.rank && m < sizeof got; i++)
            m += (size_t)snprintf(got + m, sizeof got - m, "%s%lld", i ? "," : "", (long long)out.dims[i]);
    }
    CHECK(same, "%s %s: got [%s] %s", op, args[0], got, err);
}

static wgnn_desc d4(int64_t a, int64_t b, int64_t c, int64_t d) { return (wgnn_desc){WGNN_F32, 4, {a, b, c, d}}; }

static void test_shapes(void) {
    wgnn_desc x;
    /* ceil_mode: [5,5] k2 -> 3 (2 without); the last window must start inside: [2,2] k1 s2 -> 1, not 2 */
    x = d4(1, 1, 5, 5);
    shape_is("max_pool2d", x, NULL, (const char *[]){"kernel_size=2", "ceil_mode=true"}, 2, 4,
             (const int64_t[]){1, 1, 3, 3});
    shape_is("max_pool2d", x, NULL, (const char *[]){"kernel_size=2"}, 1, 4, (const int64_t[]){1, 1, 2, 2});
    x = d4(1, 1, 2, 2);
    shape_is("max_pool2d", x, NULL, (const char *[]){"kernel_size=1", "stride=2", "ceil_mode=true"}, 3, 4,
             (const int64_t[]){1, 1, 1, 1});
    /* [6,6] k3 s2: 3 with ceil, 2 without; [10,10] k3 s3 p1 ceil: 4, as without */
    x = d4(1, 1, 6, 6);
    shape_is("max_pool2d", x, NULL, (const char *[]){"kernel_size=3", "stride=2", "ceil_mode=true"}, 3, 4,
             (const int64_t[]){1, 1, 3, 3});
    shape_is("max_pool2d", x, NULL, (const char *[]){"kernel_size=3", "stride=2"}, 2, 4, (const int64_t[]){1, 1, 2, 2});
    x = d4(1, 1, 10, 10);
    shape_is("max_pool2d", x, NULL, (const char *[]){"kernel_size=3", "stride=3", "padding=1", "ceil_mode=true"}, 4, 4,
             (const int64_t[]){1, 1, 4, 4});
    /* ResNet's stem: conv 7x7 s2 p3 on 224 -> 112, maxpool 3x3 s2 p1 -> 56 */
    x = d4(1, 3, 224, 224);
    wgnn_desc w = d4(64, 3, 7, 7);
    shape_is("conv2d", x, &w, (const char *[]){"stride=2", "padding=3"}, 2, 4, (const int64_t[]){1, 64, 112, 112});
    x = d4(1, 64, 112, 112);
    shape_is("max_pool2d", x, NULL, (const char *[]){"kernel_size=3", "stride=2", "padding=1"}, 3, 4,
             (const int64_t[]){1, 64, 56, 56});
    /* ViT patch embedding: 224 / 16 -> 14; dilation 2 on 12 -> 8; rank 3 */
    x = d4(2, 3, 224, 224);
    w = d4(768, 3, 16, 16);
    shape_is("conv2d", x, &w, (const char *[]){"stride=16"}, 1, 4, (const int64_t[]){2, 768, 14, 14});
    x = d4(1, 4, 12, 13);
    w = d4(8, 2, 3, 3);
    shape_is("conv2d", x, &w, (const char *[]){"dilation=2", "groups=2"}, 2, 4, (const int64_t[]){1, 8, 8, 9});
    x = (wgnn_desc){WGNN_F32, 3, {4, 9, 9}};
    w = d4(4, 1, 3, 3);
    shape_is("conv2d", x, &w, (const char *[]){"groups=4", "stride=2,1"}, 2, 3, (const int64_t[]){4, 4, 7});
    x = d4(2, 3, 5, 7);
    shape_is("upsample_bilinear2d", x, NULL, (const char *[]){"output_size=1,20"}, 1, 4, (const int64_t[]){2, 3, 1, 20});
}

/* ---- NaN and -inf in max_pool2d --------------------------------------------------- */

static void test_pool_specials(wgnn_context *ctx) {
    static const int64_t xd[4] = {1, 2, 6, 6};
    in_spec sp = f32(4, xd);
    uint64_t idx[4] = {0, 14, 40, 47};
    float val[4] = {NAN, -INFINITY, INFINITY, NAN};
    const char *a1[3] = {"kernel_size=3", "stride=2", "padding=1"};
    run(ctx, "max_pool2d NaN / inf", "max_pool2d", &sp, 1, a1, 3, idx, val, 4);
    const char *a2[2] = {"kernel_size=2", "ceil_mode=true"};
    run(ctx, "max_pool2d NaN / inf, ceil_mode", "max_pool2d", &sp, 1, a2, 2, idx, val, 4);
}

/* ---- im2col -------------------------------------------------------------------------- */

static void cpu_im2col(const float *x, const wgnn__conv2d_geom *g, int64_t n0, int64_t cnt, float *cols) {
    int64_t k = g->c * g->kh * g->kw, np = g->ho * g->wo;
    for (int64_t s = 0; s < cnt; s++)
        for (int64_t r = 0; r < k; r++) {
            int64_t ci = r / (g->kh * g->kw), ky = r / g->kw % g->kh, kx = r % g->kw;
            for (int64_t p = 0; p < np; p++) {
                int64_t iy = p / g->wo * g->sh - g->ph + ky * g->dh, ix = p % g->wo * g->sw - g->pw + kx * g->dw;
                bool in = iy >= 0 && iy < g->h && ix >= 0 && ix < g->w;
                cols[(s * k + r) * np + p] = in ? x[(((n0 + s) * g->c + ci) * g->h + iy) * g->w + ix] : 0.0f;
            }
        }
}

static void im2col_case(wgnn_context *ctx, const char *what, const char *const *args, int n_args, wgnn_desc xd,
                        wgnn_desc wd, int64_t n0, int64_t cnt, uint64_t dst_off_elems) {
    wgnn_desc in[2] = {xd, wd}, out;
    int n_out;
    char err[512] = "";
    /* the geometry of a checked node, as conv2d's plan sees it */
    wgnn_status s = wgnn_op_shapes("conv2d", in, 2, args, n_args, &out, 1, &n_out, err, sizeof err);
    CHECK(s == WGNN_OK, "%s: %s", what, err);
    if (s != WGNN_OK) return;
    wgnn__conv2d_geom g = {xd.dims[0], xd.dims[1], xd.dims[2], xd.dims[3], wd.dims[0], out.dims[2], out.dims[3],
                           wd.dims[2], wd.dims[3], 1, 1, 0, 0, 1, 1, 1, false};
    for (int i = 0; i < n_args; i++) {
        long long a, b;
        int m;
        if ((m = sscanf(args[i], "stride=%lld,%lld", &a, &b)) >= 1) g.sh = a, g.sw = m > 1 ? b : a;
        if ((m = sscanf(args[i], "padding=%lld,%lld", &a, &b)) >= 1) g.ph = a, g.pw = m > 1 ? b : a;
        if ((m = sscanf(args[i], "dilation=%lld,%lld", &a, &b)) >= 1) g.dh = a, g.dw = m > 1 ? b : a;
    }
    uint64_t nx = numel(&xd), k = (uint64_t)(g.c * g.kh * g.kw), np = (uint64_t)(g.ho * g.wo);
    uint64_t ncols = (uint64_t)cnt * k * np;
    float *hx = malloc(nx * 4), *want = malloc(ncols * 4 + 4), *got = malloc((dst_off_elems + ncols) * 4 + 4);
    wgnn_tensor *tx = NULL, *tc = NULL;
    int64_t cd[1] = {(int64_t)(dst_off_elems + ncols)};
    bool ok = hx && want && got && wgnn_tensor_create(ctx, WGNN_F32, 4, xd.dims, &tx) == WGNN_OK &&
              wgnn_tensor_create(ctx, WGNN_F32, 1, cd, &tc) == WGNN_OK;
    if (ok) {
        tu_fill(hx, nx, -1, 1);
        ok = wgnn_tensor_upload(ctx, tx, hx, nx * 4) == WGNN_OK;
    }
    CHECK(ok, "%s: setup: %s", what, wgnn_context_error(ctx));
    if (ok) {
        wgnn__plan p = {0};
        p.label = "im2col";
        s = wgnn__im2col_plan(ctx, &p, tx, &g, (uint64_t)n0, (uint64_t)cnt,
                              (wgnn__binding){tc->buf, dst_off_elems * 4, 0, 0});
        if (s == WGNN_OK) s = wgnn__plan_encode(ctx, &p);
        wgnn__plan_free(&p);
        CHECK(s == WGNN_OK, "%s: %s", what, wgnn_context_error(ctx));
        ok = s == WGNN_OK && wgnn_tensor_download(ctx, tc, got, (dst_off_elems + ncols) * 4) == WGNN_OK;
    }
    if (ok) {
        cpu_im2col(hx, &g, n0, cnt, want);
        uint64_t bad = 0, first = 0;
        for (uint64_t i = 0; i < ncols; i++)
            if (got[dst_off_elems + i] != want[i] && bad++ == 0) first = i;
        CHECK(bad == 0, "%s: %llu of %llu columns elements differ, first at %llu", what, (unsigned long long)bad,
              (unsigned long long)ncols, (unsigned long long)first);
    }
    free(hx);
    free(want);
    free(got);
    wgnn_tensor_destroy(tx);
    wgnn_tensor_destroy(tc);
}

static void test_im2col(wgnn_context *ctx) {
    im2col_case(ctx, "im2col 3x3 p1", (const char *[]){"padding=1"}, 1, d4(2, 3, 7, 6), d4(4, 3, 3, 3), 0, 2, 0);
    im2col_case(ctx, "im2col s2 d2, sample 1 on, dst offset 5", (const char *[]){"stride=2,1", "padding=2,1",
                "dilation=2"}, 3, d4(3, 2, 9, 8), d4(4, 2, 3, 2), 1, 2, 5);
    im2col_case(ctx, "im2col patches", (const char *[]){"stride=4"}, 1, d4(1, 3, 8, 12), d4(5, 3, 4, 4), 0, 1, 64);
    /* arguments the block refuses */
    wgnn__conv2d_geom g = {2, 3, 4, 4, 2, 2, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1, false};
    wgnn_tensor *x = NULL;
    int64_t xd[4] = {2, 3, 4, 4};
    if (wgnn_tensor_create(ctx, WGNN_F32, 4, xd, &x) != WGNN_OK) {
        CHECK(0, "setup: %s", wgnn_context_error(ctx));
        return;
    }
    wgnn__plan p = {0};
    wgnn_status s = wgnn__im2col_plan(ctx, &p, x, &g, 1, 2, (wgnn__binding){.scratch = 1});
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && strstr(wgnn_context_error(ctx), "samples [1, 3)"), "im2col past N: %s",
          wgnn_context_error(ctx));
    wgnn__plan_free(&p);
    wgnn_tensor_destroy(x);
}

/* ---- lowered limits ----------------------------------------------------------------- */

static void test_ops(wgnn_context *ctx, const char *tag) {
    char what[160];
    static const int64_t x1[4] = {20, 3, 5, 5}, w1[4] = {6, 3, 3, 3}, b1[1] = {6};
    in_spec c1[3] = {f32(4, x1), f32(4, w1), f32(1, b1)};
    snprintf(what, sizeof what, "%s: conv2d [20,3,5,5] 3x3 p1", tag);
    run(ctx, what, "conv2d", c1, 3, (const char *[]){"padding=1"}, 1, NULL, NULL, 0);
    static const int64_t x2[4] = {7, 8, 9, 9}, w2[4] = {8, 1, 3, 3};
    in_spec c2[2] = {f32(4, x2), f32(4, w2)};
    snprintf(what, sizeof what, "%s: conv2d depthwise [7,8,9,9]", tag);
    run(ctx, what, "conv2d", c2, 2, (const char *[]){"groups=8", "stride=2", "padding=1"}, 3, NULL, NULL, 0);
    static const int64_t x6[4] = {5, 3, 12, 12}, w6[4] = {6, 1, 7, 7}, b6[1] = {6};
    in_spec c6[3] = {f32(4, x6), f32(4, w6), f32(1, b6)};
    snprintf(what, sizeof what, "%s: conv2d depthwise 7x7, multiplier 2 [5,3,12,12]", tag);
    run(ctx, what, "conv2d", c6, 3, (const char *[]){"groups=3", "padding=3"}, 2, NULL, NULL, 0);
    static const int64_t x7[4] = {3, 64, 5, 5}, w7[4] = {64, 32, 3, 3}, b7[1] = {64};
    in_spec c7[3] = {f32(4, x7), f32(4, w7), f32(1, b7)};
    snprintf(what, sizeof what, "%s: conv2d grouped, 32 channels a group [3,64,5,5]", tag);
    run(ctx, what, "conv2d", c7, 3, (const char *[]){"groups=2", "padding=1"}, 2, NULL, NULL, 0);
    static const int64_t x3[4] = {3, 2, 5, 5}, w3[4] = {32, 2, 3, 3};
    in_spec c3[2] = {f32(4, x3), f32(4, w3)};
    snprintf(what, sizeof what, "%s: conv2d wide [3,2,5,5] -> 32", tag);
    run(ctx, what, "conv2d", c3, 2, (const char *[]){"padding=1"}, 1, NULL, NULL, 0);
    static const int64_t x4[4] = {30, 3, 5, 7};
    in_spec p1 = f32(4, x4);
    snprintf(what, sizeof what, "%s: max_pool2d [30,3,5,7]", tag);
    run(ctx, what, "max_pool2d", &p1, 1, (const char *[]){"kernel_size=3", "stride=2", "padding=1"}, 3, NULL, NULL, 0);
    static const int64_t x5[4] = {10, 3, 4, 5};
    in_spec u1 = f32(4, x5);
    snprintf(what, sizeof what, "%s: upsample_bilinear2d [10,3,4,5] -> 8,9", tag);
    run(ctx, what, "upsample_bilinear2d", &u1, 1, (const char *[]){"output_size=8,9"}, 1, NULL, NULL, 0);
    snprintf(what, sizeof what, "%s: upsample_nearest2d [10,3,4,5] -> 3,11", tag);
    run(ctx, what, "upsample_nearest2d", &u1, 1, (const char *[]){"output_size=3,11"}, 1, NULL, NULL, 0);
}

/* conv2d with groups = 1 on both ways of getting its columns
 * (WGNN_CONV_ROUTE=im2col: written to scratch; =implicit: gathered by the
 * GEMM's loads, gemm.h's cols) on every tile of gemm.wgsl (WGNN_GEMM_TILE's
 * knob): output rows of whole quads (four-pixel gathers) and not, stride,
 * dilation, uneven padding, a 1x1 kernel with stride 2, a bias and none. */
static void test_conv_routes(wgnn_context *ctx) {
    static const uint32_t tiles[6][5] = {
        {0}, {16, 16, 8, 8, 8}, {16, 16, 8, 4, 16}, {16, 16, 4, 4, 16}, {8, 8, 4, 4, 8}, {16, 4, 8, 4, 16}};
    static const int64_t xa[4] = {2, 5, 12, 16}, wa[4] = {40, 5, 3, 3}, ba[1] = {40};
    static const int64_t xb[4] = {2, 3, 11, 13}, wb[4] = {70, 3, 3, 3};
    static const int64_t xc[4] = {3, 4, 9, 10}, wc[4] = {9, 4, 3, 3}, bc[1] = {9};
    static const int64_t xd[4] = {2, 8, 9, 9}, wd[4] = {16, 8, 1, 1};
    in_spec ca[3] = {f32(4, xa), f32(4, wa), f32(1, ba)}, cb[2] = {f32(4, xb), f32(4, wb)};
    in_spec cc[3] = {f32(4, xc), f32(4, wc), f32(1, bc)}, cd[2] = {f32(4, xd), f32(4, wd)};
    int saved_route = ctx->knobs.conv_route;
    uint32_t saved_tile[5];
    memcpy(saved_tile, ctx->knobs.gemm_tile, sizeof saved_tile);
    /* every shape on both routes at the picked tile; the other tiles
     * gathered alone, at one shape of each load width (each pipeline costs
     * lavapipe a compile) */
    for (int route = WGNN__CONV_IM2COL; route <= WGNN__CONV_IMPLICIT; route++)
        for (int t = 0; t < (route == WGNN__CONV_IMPLICIT ? 6 : 1); t++) {
            ctx->knobs.conv_route = route;
            memcpy(ctx->knobs.gemm_tile, tiles[t], sizeof tiles[t]);
            char what[160];
            const char *rn = route == WGNN__CONV_IM2COL ? "im2col" : "implicit";
            snprintf(what, sizeof what, "%s, tile %u: conv2d [2,5,12,16] 3x3 p1 -> 40", rn, tiles[t][0]);
            run(ctx, what, "conv2d", ca, 3, (const char *[]){"padding=1"}, 1, NULL, NULL, 0);
            snprintf(what, sizeof what, "%s, tile %u: conv2d [3,4,9,10] d2 p1,3 -> 9", rn, tiles[t][0]);
            run(ctx, what, "conv2d", cc, 3, (const char *[]){"dilation=2", "padding=1,3"}, 2, NULL, NULL, 0);
            if (t > 0) continue;
            snprintf(what, sizeof what, "%s: conv2d [2,3,11,13] s1,2 p1,2 -> 70", rn);
            run(ctx, what, "conv2d", cb, 2, (const char *[]){"stride=1,2", "padding=1,2"}, 2, NULL, NULL, 0);
            snprintf(what, sizeof what, "%s: conv2d [2,8,9,9] 1x1 s2 -> 16", rn);
            run(ctx, what, "conv2d", cd, 2, (const char *[]){"stride=2"}, 1, NULL, NULL, 0);
        }
    ctx->knobs.conv_route = saved_route;
    memcpy(ctx->knobs.gemm_tile, saved_tile, sizeof saved_tile);
}

static void test_limit_errors(wgnn_context *ctx) {
    static const struct {
        const char *op;
        int64_t x[4], w[4];
        const char *arg;
    } k[3] = {{"conv2d", {2, 3, 20, 20}, {2, 3, 3, 3}, "padding=1"},
              {"max_pool2d", {2, 1, 40, 40}, {0}, "kernel_size=2"},
              {"upsample_nearest2d", {1, 1, 4, 4}, {0}, "output_size=40,40"}};
    for (int i = 0; i < 3; i++) {
        wgnn_desc in[2] = {d4(k[i].x[0], k[i].x[1], k[i].x[2], k[i].x[3]), d4(k[i].w[0], k[i].w[1], k[i].w[2], k[i].w[3])};
        int n_in = k[i].w[0] ? 2 : 1, n_out;
        wgnn_desc od;
        char err[256];
        wgnn_tensor *t[2] = {0}, *y = NULL;
        bool ok = wgnn_op_shapes(k[i].op, in, n_in, &k[i].arg, 1, &od, 1, &n_out, err, sizeof err) == WGNN_OK &&
                  wgnn_tensor_create(ctx, WGNN_F32, 4, in[0].dims, &t[0]) == WGNN_OK &&
                  (n_in < 2 || wgnn_tensor_create(ctx, WGNN_F32, 4, in[1].dims, &t[1]) == WGNN_OK) &&
                  wgnn_tensor_create(ctx, WGNN_F32, 4, od.dims, &y) == WGNN_OK;
        wgnn_status s = ok ? wgnn_op(ctx, k[i].op, (const wgnn_tensor *const *)t, n_in, &k[i].arg, 1, &y, 1)
                           : WGNN_ERR_GPU;
        CHECK(s == WGNN_ERR_LIMIT && strstr(wgnn_context_error(ctx), "maxStorageBufferBindingSize"),
              "%s: a sample / plane past the binding limit: %s", k[i].op, wgnn_context_error(ctx));
        wgnn_tensor_destroy(t[0]);
        wgnn_tensor_destroy(t[1]);
        wgnn_tensor_destroy(y);
    }
}

int main(void) {
    tu_seed(20261203u);
    test_shapes();
    wgnn_context *ctx = tu_context();
    test_pool_specials(ctx);
    test_im2col(ctx);
    test_ops(ctx, "default");
    test_conv_routes(ctx);
    /* Lower limits than the device's (Dawn checks the real ones, which these
     * stay within): grids folded past 16 workgroups a dimension, 32 threads
     * a workgroup and 2 KiB of workgroup memory (shallower K slices); then
     * 4 KiB storage bindings at 256-byte offsets (samples and planes split,
     * windows starting inside an aligned block). */
    WGPULimits saved = ctx->limits;
    ctx->limits.maxComputeWorkgroupsPerDimension = 16;
    ctx->limits.maxComputeInvocationsPerWorkgroup = 32;
    ctx->limits.maxComputeWorkgroupStorageSize = 2048;
    test_ops(ctx, "small grids");
    ctx->limits = saved;
    ctx->limits.maxStorageBufferBindingSize = 4096;
    ctx->limits.minStorageBufferOffsetAlignment = 256;
    test_ops(ctx, "4 KiB bindings");
    test_limit_errors(ctx);
    ctx->limits = saved;
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
    wgnn_context_destroy(ctx);
    return tu_finish();
}
