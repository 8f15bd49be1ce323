/* test_norm.c - what the case table (tests/cases/norm.inc) cannot say about
 * the norm family:
 *   - softmax of rows holding -inf, +inf or NaN (PyTorch: a row that is -inf
 *     everywhere, or holds +inf or NaN, comes out NaN), in every variant of
 *     reduce_rows (scalar, vec4, strided, rows read again);
 *   - wgnn__softmax_rows, the entry SDPA's three-pass can use (empty = 0);
 *   - the workgroup-memory reductions (a context without subgroups);
 *   - splitting over offset bindings and folded grids, made to happen on
 *     small tensors by lowering the context's copy of the device limits. */
#include "testutil.h"

#include "internal.h"
#include "ops/norm.h"

/* Rows 0..3 of a [rows, n] softmax (or of its strided twin, dim 0 of
 * [n, rows]): row 0 all -inf, row 1 one +inf, row 2 one NaN, row 3 half -inf. */
static void softmax_specials(wgnn_context *ctx, const char *what, int64_t rows, int64_t n, bool strided) {
    uint64_t idx[4096];
    float val[4096];
    int k = 0;
    for (int64_t j = 0; j < n && k < 4000; j++) {
        uint64_t a0 = strided ? (uint64_t)(j * rows) : (uint64_t)j;
        uint64_t a3 = strided ? (uint64_t)(j * rows + 3) : (uint64_t)(3 * n + j);
        idx[k] = a0;
        val[k++] = -INFINITY;
        if (j % 2 == 0) {
            idx[k] = a3;
            val[k++] = -INFINITY;
        }
    }
    uint64_t mid = (uint64_t)(n / 2);
    idx[k] = strided ? mid * (uint64_t)rows + 1 : (uint64_t)n + mid;
    val[k++] = INFINITY;
    idx[k] = strided ? mid * (uint64_t)rows + 2 : 2 * (uint64_t)n + mid;
    val[k++] = NAN;
    int64_t dims[2] = {strided ? n : rows, strided ? rows : n};
    tu_in_spec sp = tu_f32(2, dims, -5, 5);
    const char *args[1] = {strided ? "dim=0" : "dim=1"};
    tu_run_op(ctx, what, "softmax", &sp, 1, args, 1, idx, val, k, 1e-4, 1e-3);
}

static void test_specials(wgnn_context *ctx) {
    softmax_specials(ctx, "specials, scalar rows", 6, 5, false);
    softmax_specials(ctx, "specials, vec4 rows", 5, 64, false);
    softmax_specials(ctx, "specials, one row a thread", 300, 8, false);
    softmax_specials(ctx, "specials, rows read again", 4, 40000, false);
    softmax_specials(ctx, "specials, strided", 7, 9, true);
    softmax_specials(ctx, "specials, strided, read again", 5, 1500, true);
    /* the values PyTorch gives, not only the reference's */
    int64_t d[2] = {2, 3};
    wgnn_tensor *x = NULL, *y = NULL;
    float h[6] = {-INFINITY, -INFINITY, -INFINITY, 1.0f, -INFINITY, 1.0f}, o[6] = {0};
    bool ok = wgnn_tensor_create(ctx, WGNN_F32, 2, d, &x) == WGNN_OK &&
              wgnn_tensor_create(ctx, WGNN_F32, 2, d, &y) == WGNN_OK && wgnn_tensor_upload(ctx, x, h, sizeof h) == WGNN_OK;
    const char *args[1] = {"dim=-1"};
    ok = ok && wgnn_op(ctx, "softmax", (const wgnn_tensor *const *)&x, 1, args, 1, &y, 1) == WGNN_OK &&
         wgnn_tensor_download(ctx, y, o, sizeof o) == WGNN_OK;
    CHECK(ok && isnan(o[0]) && isnan(o[1]) && isnan(o[2]) && fabsf(o[3] - 0.5f) < 1e-6f && o[4] == 0.0f &&
              fabsf(o[5] - 0.5f) < 1e-6f,
          "softmax([[-inf]*3, [1, -inf, 1]]) = [[nan]*3, [0.5, 0, 0.5]]: got %g %g %g %g %g %g (%s)", o[0], o[1], o[2],
          o[3], o[4], o[5], wgnn_context_error(ctx));
    wgnn_tensor_destroy(x);
    wgnn_tensor_destroy(y);
}

/* wgnn__softmax_rows as SDPA's three-pass would call it: rows of scores at
 * an offset of a buffer, a fully masked row giving zeros. */
static void test_softmax_rows(wgnn_context *ctx) {
    enum { ROWS = 37, COLS = 129, SKIP = 4 };
    int64_t d[1] = {(ROWS + SKIP) * COLS};
    wgnn_tensor *x = NULL, *y = NULL;
    float *h = malloc(sizeof(float) * (size_t)d[0]), *o = malloc(sizeof(float) * (size_t)d[0]);
    bool ok = h && o && wgnn_tensor_create(ctx, WGNN_F32, 1, d, &x) == WGNN_OK &&
              wgnn_tensor_create(ctx, WGNN_F32, 1, d, &y) == WGNN_OK;
    if (ok) {
        tu_fill(h, (size_t)d[0], -3, 3);
        for (int c = 0; c < COLS; c++) h[(SKIP + 5) * COLS + c] = -INFINITY; /* row 5: fully masked */
        for (int64_t i = 0; i < d[0]; i++) o[i] = 7.0f;
        ok = wgnn_tensor_upload(ctx, x, h, sizeof(float) * (size_t)d[0]) == WGNN_OK &&
             wgnn_tensor_upload(ctx, y, o, sizeof(float) * (size_t)d[0]) == WGNN_OK;
    }
    if (ok) {
        wgnn__plan p = {0};
        p.label = "softmax rows";
        uint64_t off = SKIP * COLS * 4u; /* a multiple of 16: minStorageBufferOffsetAlignment here */
        wgnn_status s = wgnn__softmax_rows(ctx, &p, ROWS, COLS, 0.0f, (wgnn__binding){x->buf, off, 0, 0},
                                           (wgnn__binding){y->buf, off, 0, 0});
        if (s == WGNN_OK) s = wgnn__plan_encode(ctx, &p);
        wgnn__plan_free(&p);
        CHECK(s == WGNN_OK, "softmax_rows: %s", wgnn_context_error(ctx));
        ok = s == WGNN_OK && wgnn_tensor_download(ctx, y, o, sizeof(float) * (size_t)d[0]) == WGNN_OK;
    }
    if (ok) {
        int bad = 0;
        for (int i = 0; i < SKIP * COLS; i++) bad += o[i] != 7.0f;
        for (int r = 0; r < ROWS; r++) {
            const float *xr = h + (SKIP + r) * COLS, *yr = o + (SKIP + r) * COLS;
            double m = -INFINITY, sum = 0;
            for (int c = 0; c < COLS; c++) m = fmax(m, xr[c]);
            for (int c = 0; c < COLS; c++) sum += exp(xr[c] - m);
            for (int c = 0; c < COLS; c++) {
                double want = r == 5 ? 0.0 : exp(xr[c] - m) / sum;
                bad += !(fabs(yr[c] - want) <= 1e-6 + 1e-4 * want);
            }
        }
        CHECK(bad == 0, "softmax_rows at an offset, masked row -> zeros: %d elements wrong", bad);
    }
    free(h);
    free(o);
    wgnn_tensor_destroy(x);
    wgnn_tensor_destroy(y);
}

/* A spread of every op's variants (the same on each context below). */
static void test_ops(wgnn_context *ctx, const char *tag) {
    char what[256];
    const char *a_last[1] = {"dim=-1"}, *a_mid[1] = {"dim=1"};
    static const int64_t sm[][3] = {{9, 5, 1}, {6, 64, 1}, {3, 4097, 1}, {2, 40000, 1}, {300, 12, 1},
                                     {4, 33, 7}, {3, 1500, 3}, {12, 3, 2}};
    for (size_t i = 0; i < sizeof sm / sizeof sm[0]; i++) {
        int rank = sm[i][2] > 1 ? 3 : 2;
        tu_in_spec sp = tu_f32(rank, sm[i], -20, 20);
        snprintf(what, sizeof what, "%s: softmax [%lld,%lld,%lld]", tag, (long long)sm[i][0], (long long)sm[i][1],
                 (long long)sm[i][2]);
        tu_run_op(ctx, what, "softmax", &sp, 1, rank == 3 ? a_mid : a_last, 1, NULL, NULL, 0, 1e-4, 1e-3);
    }
    static const int64_t ln[][2] = {{5, 3}, {6, 64}, {3, 4097}, {2, 40000}, {300, 12}, {3, 1000}};
    for (size_t i = 0; i < sizeof ln / sizeof ln[0]; i++) {
        tu_in_spec sp[3] = {tu_f32(2, ln[i], -3, 3), tu_f32(1, &ln[i][1], -2, 2), tu_f32(1, &ln[i][1], -2, 2)};
        char ns[64];
        snprintf(ns, sizeof ns, "normalized_shape=%lld", (long long)ln[i][1]);
        const char *args[1] = {ns};
        snprintf(what, sizeof what, "%s: layer_norm [%lld,%lld]", tag, (long long)ln[i][0], (long long)ln[i][1]);
        tu_run_op(ctx, what, "layer_norm", sp, 3, args, 1, NULL, NULL, 0, 1e-4, 1e-3);
    }
    /* sizes that fold on the small grids below too */
    static const int64_t bx[4] = {6, 5, 3, 4}, bc[1] = {5}, bo[3] = {8, 5, 25};
    tu_in_spec bsp[5] = {tu_f32(4, bx, -3, 3), tu_f32(1, bc, -2, 2), tu_f32(1, bc, -2, 2), tu_f32(1, bc, -1, 1), tu_f32(1, bc, 0.5f, 2)};
    snprintf(what, sizeof what, "%s: batch_norm [6,5,3,4]", tag);
    tu_run_op(ctx, what, "batch_norm", bsp, 5, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    bsp[0] = tu_f32(3, bo, -3, 3);
    snprintf(what, sizeof what, "%s: batch_norm [8,5,25]", tag);
    tu_run_op(ctx, what, "batch_norm", bsp, 5, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    static const int64_t rx[4] = {5, 3, 7, 40}, rc[4] = {5, 1, 7, 40}, rs[2] = {7, 40}, rx2[3] = {30, 7, 6}, rs2[2] = {7, 6};
    tu_in_spec r1[3] = {tu_f32(4, rx, -2, 2), tu_f32(4, rc, -1, 1), tu_f32(4, rc, -1, 1)};
    snprintf(what, sizeof what, "%s: rope [5,3,7,40] cos [5,1,7,40]", tag);
    tu_run_op(ctx, what, "apply_rotary_emb_hf", r1, 3, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    tu_in_spec r2[3] = {tu_f32(4, rx, -2, 2), tu_f32(2, rs, -1, 1), tu_f32(2, rs, -1, 1)};
    snprintf(what, sizeof what, "%s: rope [5,3,7,40] cos [7,40]", tag);
    tu_run_op(ctx, what, "apply_rotary_emb_hf", r2, 3, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    tu_in_spec r3[3] = {tu_f32(3, rx2, -2, 2), tu_f32(2, rs2, -1, 1), tu_f32(2, rs2, -1, 1)};
    snprintf(what, sizeof what, "%s: rope [30,7,6] cos [7,6]", tag);
    tu_run_op(ctx, what, "apply_rotary_emb_hf", r3, 3, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
}

/* Shapes past a 4 KiB binding, split at 256-byte offsets (each op's
 * alignment step: rows of 12, 9 and 64 floats, blocks, samples, slices). */
static void test_chunks(wgnn_context *ctx) {
    const char *a_last[1] = {"dim=-1"}, *a_mid[1] = {"dim=1"};
    static const int64_t s1[2] = {300, 12}, s2[2] = {40, 64}, s3[2] = {300, 9}, s4[3] = {200, 3, 4};
    tu_in_spec sp = tu_f32(2, s1, -9, 9);
    tu_run_op(ctx, "chunks: softmax [300,12]", "softmax", &sp, 1, a_last, 1, NULL, NULL, 0, 1e-4, 1e-3);
    sp = tu_f32(2, s2, -9, 9);
    tu_run_op(ctx, "chunks: softmax [40,64]", "softmax", &sp, 1, a_last, 1, NULL, NULL, 0, 1e-4, 1e-3);
    sp = tu_f32(2, s3, -9, 9);
    tu_run_op(ctx, "chunks: softmax [300,9]", "softmax", &sp, 1, a_last, 1, NULL, NULL, 0, 1e-4, 1e-3);
    sp = tu_f32(3, s4, -9, 9);
    tu_run_op(ctx, "chunks: softmax [200,3,4] dim=1", "softmax", &sp, 1, a_mid, 1, NULL, NULL, 0, 1e-4, 1e-3);
    tu_in_spec l1[3] = {tu_f32(2, s2, -3, 3), tu_f32(1, &s2[1], -2, 2), tu_f32(1, &s2[1], -2, 2)};
    const char *n64[1] = {"normalized_shape=64"}, *n9[1] = {"normalized_shape=9"};
    tu_run_op(ctx, "chunks: layer_norm [40,64]", "layer_norm", l1, 3, n64, 1, NULL, NULL, 0, 1e-4, 1e-3);
    tu_in_spec l2[2] = {tu_f32(2, s3, -3, 3), tu_f32(1, &s3[1], -2, 2)};
    tu_run_op(ctx, "chunks: layer_norm [300,9]", "layer_norm", l2, 2, n9, 1, NULL, NULL, 0, 1e-4, 1e-3);
    static const int64_t bx[4] = {40, 5, 3, 4}, bc[1] = {5};
    tu_in_spec b[5] = {tu_f32(4, bx, -3, 3), tu_f32(1, bc, -2, 2), tu_f32(1, bc, -2, 2), tu_f32(1, bc, -1, 1), tu_f32(1, bc, 0.5f, 2)};
    tu_run_op(ctx, "chunks: batch_norm [40,5,3,4]", "batch_norm", b, 5, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    static const int64_t rx[4] = {50, 3, 7, 16}, rc[2] = {7, 16}, rx2[4] = {20, 2, 4, 16}, rc2[4] = {20, 1, 4, 16};
    tu_in_spec r1[3] = {tu_f32(4, rx, -2, 2), tu_f32(2, rc, -1, 1), tu_f32(2, rc, -1, 1)};
    tu_run_op(ctx, "chunks: rope [50,3,7,16] cos [7,16]", "apply_rotary_emb_hf", r1, 3, NULL, 0, NULL, NULL, 0, 1e-4, 1e-3);
    tu_in_spec r2[3] = {tu_f32(4, rx2, -2, 2), tu_f32(4, rc2, -1, 1), tu_f32(4, rc2, -1, 1)};
    tu_run_op(ctx, "chunks: rope [20,2,4,16] cos [20,1,4,16]", "apply_rotary_emb_hf", r2, 3, NULL, 0, NULL, NULL, 0, 1e-4,
        1e-3);
}

/* A limit the ops must name when one row cannot fit a binding. */
static void test_limit_errors(wgnn_context *ctx) {
    int64_t d[2] = {2, 2000};
    wgnn_tensor *x = NULL, *y = NULL;
    bool ok = wgnn_tensor_create(ctx, WGNN_F32, 2, d, &x) == WGNN_OK &&
              wgnn_tensor_create(ctx, WGNN_F32, 2, d, &y) == WGNN_OK;
    const char *args[1] = {"dim=1"};
    wgnn_status s = ok ? wgnn_op(ctx, "softmax", (const wgnn_tensor *const *)&x, 1, args, 1, &y, 1) : WGNN_ERR_GPU;
    CHECK(s == WGNN_ERR_LIMIT && strstr(wgnn_context_error(ctx), "maxStorageBufferBindingSize"),
          "a row past the binding limit: %s", wgnn_context_error(ctx));
    wgnn_tensor_destroy(x);
    wgnn_tensor_destroy(y);
}

int main(void) {
    tu_seed(20261202u);
    wgnn_context *ctx = tu_context();
    test_specials(ctx);
    test_softmax_rows(ctx);
    test_ops(ctx, "default");
    /* Lower limits than the device's (Dawn checks the real ones, which these
     * stay within): grids folded past 4 workgroups a dimension and 64
     * threads a workgroup (rows read again from 64 * 8 floats on); then
     * 4 KiB storage bindings at 256-byte offsets. */
    WGPULimits saved = ctx->limits;
    ctx->limits.maxComputeWorkgroupsPerDimension = 4;
    ctx->limits.maxComputeInvocationsPerWorkgroup = 64;
    test_specials(ctx);
    test_ops(ctx, "small grids");
    ctx->limits = saved;
    ctx->limits.maxStorageBufferBindingSize = 4096;
    ctx->limits.minStorageBufferOffsetAlignment = 256;
    test_chunks(ctx);
    test_limit_errors(ctx);
    ctx->limits = saved;
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
    wgnn_context_destroy(ctx);

    /* Without subgroups: the workgroup-memory reductions. */
    wgnn_context_options o = {0};
    o.disable_optional_features = 1;
    ctx = NULL;
    if (wgnn_context_create(&o, &ctx) != WGNN_OK) {
        CHECK(0, "context without optional features: %s", wgnn_context_error(ctx));
    } else {
        CHECK(!wgnn_context_has_subgroups(ctx), "subgroups off");
        test_specials(ctx);
        test_ops(ctx, "no subgroups");
        CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
    }
    wgnn_context_destroy(ctx);
    return tu_finish();
}
