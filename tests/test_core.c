/* test_core.c - dispatch math, context, tensors, pipelines, error capture. */
#include "internal.h"
#include "testutil.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static void test_grid_math(void) {
    uint32_t x, y;
    CHECK(wgnn__grid_2d(1, 65535, &x, &y) && x == 1 && y == 1, "1 group");
    CHECK(wgnn__grid_2d(65535, 65535, &x, &y) && x == 65535 && y == 1, "at the limit: 1-D");
    /* Past the limit: near-square, covers every group, overshoot < one row. */
    const uint64_t ns[] = {65536, 65537, 100000, 1000003, 123456789, 65535ull * 65535ull};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        uint64_t n = ns[i];
        int ok = wgnn__grid_2d(n, 65535, &x, &y);
        CHECK(ok, "n=%llu fits", (unsigned long long)n);
        if (!ok) continue;
        uint64_t cover = (uint64_t)x * y;
        CHECK(x <= 65535 && y <= 65535, "n=%llu: %u x %u within the limit", (unsigned long long)n, x, y);
        CHECK(cover >= n, "n=%llu covered by %u x %u", (unsigned long long)n, x, y);
        CHECK(cover - n < x, "n=%llu: overshoot %llu is less than one row of %u", (unsigned long long)n,
              (unsigned long long)(cover - n), x);
        CHECK(x >= y && x - y <= 1 + x / 1000, "n=%llu near-square %u x %u", (unsigned long long)n, x, y);
    }
    CHECK(!wgnn__grid_2d(65535ull * 65535ull + 1, 65535, &x, &y), "past 65535^2 does not fit");
    /* Exhaustive small limit: every n gets exact coverage with max 7. */
    for (uint64_t n = 1; n <= 49; n++) {
        int ok = wgnn__grid_2d(n, 7, &x, &y);
        CHECK(ok && (uint64_t)x * y >= n && (uint64_t)x * y - n < x && x <= 7 && y <= 7, "n=%llu max 7",
              (unsigned long long)n);
    }
    CHECK(!wgnn__grid_2d(50, 7, &x, &y), "50 > 7*7");
    uint64_t p;
    CHECK(wgnn__mul_u64(1ull << 32, 1ull << 31, &p) && p == 1ull << 63, "mul ok");
    CHECK(!wgnn__mul_u64(1ull << 32, 1ull << 32, &p), "mul overflow caught");
}

static void test_context(wgnn_context *ctx) {
    wgnn_adapter_info ai;
    wgnn_context_adapter(ctx, &ai);
    CHECK(strcmp(ai.backend, "null") != 0, "never Dawn's Null backend (got %s)", ai.backend);
    CHECK(strcmp(ai.backend, "vulkan") == 0, "Vulkan backend (got %s)", ai.backend);
    wgnn_limits l;
    wgnn_context_limits(ctx, &l);
    CHECK(l.max_compute_workgroup_storage_size >= 16384, "workgroup storage %u", l.max_compute_workgroup_storage_size);
    CHECK(l.max_storage_buffer_binding_size >= (128u << 20), "binding size %llu",
          (unsigned long long)l.max_storage_buffer_binding_size);
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "healthy");
    size_t n = 0;
    wgnn_adapter_info list[8];
    char err[256];
    CHECK(wgnn_adapters_list(list, 8, &n, err, sizeof err) == WGNN_OK && n >= 1, "adapter list: %zu", n);

    wgnn_context *bad = NULL;
    wgnn_context_options o = {0};
    o.adapter = "no-such-adapter-xyz";
    CHECK(wgnn_context_create(&o, &bad) == WGNN_ERR_NO_ADAPTER, "unknown adapter name refused");
    CHECK(bad && strstr(wgnn_context_error(bad), "no-such-adapter-xyz"), "message names it: %s",
          wgnn_context_error(bad));
    wgnn_context_destroy(bad);
    wgnn_context_destroy(NULL);

    /* compute units: none known for lavapipe; WGNN_COMPUTE_UNITS when set
     * (0 or past 4096: none) */
    CHECK(wgnn_context_compute_units(NULL) == 0, "compute units of no context: 0");
    if (!getenv("WGNN_COMPUTE_UNITS"))
        CHECK(wgnn_context_compute_units(ctx) == 0, "lavapipe: no known compute units (got %u)",
              wgnn_context_compute_units(ctx));
    static const struct { const char *env; uint32_t want; } units[] = {{"12", 12}, {"0", 0}, {"100000", 0}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        setenv("WGNN_COMPUTE_UNITS", units[i].env, 1);
        wgnn_context *c = NULL;
        CHECK(wgnn_context_create(NULL, &c) == WGNN_OK && wgnn_context_compute_units(c) == units[i].want,
              "WGNN_COMPUTE_UNITS=%s: %u compute units", units[i].env, c ? wgnn_context_compute_units(c) : 0u);
        wgnn_context_destroy(c);
    }
    unsetenv("WGNN_COMPUTE_UNITS");

    /* a context whose waits poll first (poll_us) reads back what it wrote,
     * whether the work is done within the polling window (1 s) or not (1 us) */
    static const uint32_t polls[] = {1000000, 1};
    for (size_t i = 0; i < sizeof polls / sizeof polls[0]; i++) {
        wgnn_context_options po = {0};
        po.poll_us = polls[i];
        wgnn_context *c = NULL;
        CHECK(wgnn_context_create(&po, &c) == WGNN_OK, "poll_us %u: %s", polls[i], c ? wgnn_context_error(c) : "");
        int64_t d[1] = {1000};
        wgnn_tensor *t = NULL;
        float in[1000], out[1000];
        tu_fill(in, 1000, -1, 1);
        memset(out, 0, sizeof out);
        CHECK(c && wgnn_tensor_create(c, WGNN_F32, 1, d, &t) == WGNN_OK && wgnn_tensor_upload(c, t, in, sizeof in) == WGNN_OK &&
                  wgnn_tensor_download(c, t, out, sizeof out) == WGNN_OK && memcmp(in, out, sizeof in) == 0,
              "poll_us %u: round trip", polls[i]);
        CHECK(c && wgnn_context_sync(c) == WGNN_OK, "poll_us %u: sync", polls[i]);
        wgnn_tensor_destroy(t);
        wgnn_context_destroy(c);
    }

    /* a wait with an expected end (spin_from_ns: a plain graph run's,
     * src/graph/graph_run.c) returns when the work is done, whether that is
     * long before the expectation (60 s ahead: it must not sleep till then)
     * or after it (in the past: it polls, then blocks) */
    {
        wgnn_context *c = tu_context();
        int64_t d[1] = {1000};
        wgnn_tensor *t = NULL;
        float in[1000], out[1000];
        tu_fill(in, 1000, -1, 1);
        CHECK(wgnn_tensor_create(c, WGNN_F32, 1, d, &t) == WGNN_OK && wgnn_tensor_upload(c, t, in, sizeof in) == WGNN_OK,
              "spin_from: setup: %s", wgnn_context_error(c));
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        static const int64_t ahead_ms[] = {60000, -1};
        for (size_t i = 0; i < sizeof ahead_ms / sizeof ahead_ms[0]; i++) {
            memset(out, 0, sizeof out);
            c->spin_from_ns = (uint64_t)((int64_t)now + ahead_ms[i] * 1000000);
            time_t t0 = time(NULL);
            CHECK(wgnn_tensor_download(c, t, out, sizeof out) == WGNN_OK && memcmp(in, out, sizeof in) == 0,
                  "spin_from %lld ms ahead: round trip: %s", (long long)ahead_ms[i], wgnn_context_error(c));
            CHECK(time(NULL) - t0 < 30, "spin_from %lld ms ahead: the wait returned when the work was done",
                  (long long)ahead_ms[i]);
            CHECK(c->spin_from_ns == 0, "spin_from %lld ms ahead: used once", (long long)ahead_ms[i]);
        }
        wgnn_tensor_destroy(t);
        wgnn_context_destroy(c);
    }
}

static void test_tensors(wgnn_context *ctx) {
    int64_t dims[3] = {2, 3, 5};
    wgnn_tensor *t = NULL;
    CHECK(wgnn_tensor_create(ctx, WGNN_F32, 3, dims, &t) == WGNN_OK, "%s", wgnn_context_error(ctx));
    float in[30], out[30];
    tu_fill(in, 30, -1, 1);
    CHECK(wgnn_tensor_upload(ctx, t, in, sizeof in) == WGNN_OK, "%s", wgnn_context_error(ctx));
    memset(out, 0, sizeof out);
    CHECK(wgnn_tensor_download(ctx, t, out, sizeof out) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(memcmp(in, out, sizeof in) == 0, "f32 round trip");
    CHECK(wgnn_tensor_upload(ctx, t, in, 12) == WGNN_ERR_INVALID_ARGUMENT, "wrong byte count refused");
    CHECK(wgnn_tensor_numel(t) == 30 && wgnn_tensor_nbytes(t) == 120 && wgnn_tensor_rank(t) == 3, "metadata");
    wgnn_tensor_destroy(t);

    /* f16 with an odd element count: padded on the GPU, exact on the host. */
    int64_t d3[1] = {3};
    uint16_t h[3] = {0x3c00, 0xc000, 0x7bff}, hb[3] = {0};
    CHECK(wgnn_tensor_create(ctx, WGNN_F16, 1, d3, &t) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(wgnn_tensor_upload(ctx, t, h, sizeof h) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(wgnn_tensor_download(ctx, t, hb, sizeof hb) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(memcmp(h, hb, sizeof h) == 0, "f16 odd-count round trip");
    wgnn_tensor_destroy(t);

    int32_t iv[4] = {-7, 0, 1 << 30, 42}, ib[4];
    int64_t d4[2] = {2, 2};
    CHECK(wgnn_tensor_create(ctx, WGNN_I32, 2, d4, &t) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(wgnn_tensor_upload(ctx, t, iv, sizeof iv) == WGNN_OK && wgnn_tensor_download(ctx, t, ib, sizeof ib) == WGNN_OK &&
              memcmp(iv, ib, sizeof iv) == 0,
          "i32 round trip");
    wgnn_tensor_destroy(t);

    int64_t zero[2] = {2, 0};
    CHECK(wgnn_tensor_create(ctx, WGNN_F32, 2, zero, &t) == WGNN_ERR_INVALID_ARGUMENT && !t, "zero dim refused");
    CHECK(wgnn_tensor_create(ctx, WGNN_F32, 9, dims, &t) == WGNN_ERR_INVALID_ARGUMENT, "rank 9 refused");
    CHECK(wgnn_tensor_create(ctx, (wgnn_dtype)7, 1, dims, &t) == WGNN_ERR_INVALID_ARGUMENT, "unknown dtype refused");
    int64_t huge[2] = {INT64_MAX, 4};
    CHECK(wgnn_tensor_create(ctx, WGNN_F32, 2, huge, &t) == WGNN_ERR_LIMIT, "overflow refused");
    int64_t big[1] = {(int64_t)1 << 40};
    CHECK(wgnn_tensor_create(ctx, WGNN_F32, 1, big, &t) == WGNN_ERR_LIMIT, "past maxBufferSize refused");
    CHECK(strstr(wgnn_context_error(ctx), "maxBufferSize") != NULL, "message names the limit: %s",
          wgnn_context_error(ctx));
}

/* Uploads of 4 to 64 MiB go through the context's staging buffer (past
 * that a queue write): round trips of several sizes, an f16 tensor with an
 * odd element count, the staging buffer reused and grown, and an eager op
 * recorded before an upload reading the old contents. */
static void test_large_uploads(wgnn_context *ctx) {
    const int64_t sizes[] = {(int64_t)1 << 20, ((int64_t)1 << 20) + 3, (int64_t)5 << 20, ((int64_t)17 << 20) + 1};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int64_t n = sizes[c]; /* floats: 4, 4, 20, 68 MiB */
        float *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
        wgnn_tensor *t = NULL;
        CHECK(in && out, "host memory");
        if (!in || !out) goto next;
        for (int64_t i = 0; i < n; i++) in[i] = (float)(i % 65521) - (float)c;
        CHECK(wgnn_tensor_create(ctx, WGNN_F32, 1, &n, &t) == WGNN_OK, "%s", wgnn_context_error(ctx));
        for (int rep = 0; rep < 2 && t; rep++) { /* the second upload reuses the mapped staging buffer */
            in[n - 1] = (float)rep;
            memset(out, 0, (size_t)n * sizeof *out);
            CHECK(wgnn_tensor_upload(ctx, t, in, (size_t)n * sizeof *in) == WGNN_OK, "%s", wgnn_context_error(ctx));
            CHECK(wgnn_tensor_download(ctx, t, out, (size_t)n * sizeof *out) == WGNN_OK, "%s", wgnn_context_error(ctx));
            CHECK(memcmp(in, out, (size_t)n * sizeof *in) == 0, "%lld floats, upload %d: round trip", (long long)n, rep);
        }
    next:
        wgnn_tensor_destroy(t);
        free(in);
        free(out);
    }

    int64_t nh = ((int64_t)3 << 20) + 1; /* 6 MiB + 2 bytes of halves */
    uint16_t *h = malloc((size_t)nh * 2), *hb = malloc((size_t)nh * 2);
    wgnn_tensor *t = NULL;
    if (h && hb && wgnn_tensor_create(ctx, WGNN_F16, 1, &nh, &t) == WGNN_OK) {
        for (int64_t i = 0; i < nh; i++) h[i] = (uint16_t)(i * 2654435761u >> 16);
        CHECK(wgnn_tensor_upload(ctx, t, h, (size_t)nh * 2) == WGNN_OK, "%s", wgnn_context_error(ctx));
        CHECK(wgnn_tensor_download(ctx, t, hb, (size_t)nh * 2) == WGNN_OK, "%s", wgnn_context_error(ctx));
        CHECK(memcmp(h, hb, (size_t)nh * 2) == 0, "f16 odd count, staged: round trip");
    } else {
        CHECK(0, "f16 tensor: %s", wgnn_context_error(ctx));
    }
    wgnn_tensor_destroy(t);
    free(h);
    free(hb);

    /* an op recorded before the upload reads the old contents */
    int64_t n = (int64_t)2 << 20;
    float *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4), *r = malloc((size_t)n * 4);
    wgnn_tensor *x = NULL, *y = NULL;
    if (a && b && r && wgnn_tensor_create(ctx, WGNN_F32, 1, &n, &x) == WGNN_OK &&
        wgnn_tensor_create(ctx, WGNN_F32, 1, &n, &y) == WGNN_OK) {
        for (int64_t i = 0; i < n; i++) a[i] = (float)(i % 1000) - 500.0f, b[i] = 7.0f;
        wgnn_status s = wgnn_tensor_upload(ctx, x, a, (size_t)n * 4);
        if (s == WGNN_OK) s = wgnn_op(ctx, "relu", (const wgnn_tensor *const[]){x}, 1, NULL, 0, &y, 1);
        if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, x, b, (size_t)n * 4);
        if (s == WGNN_OK) s = wgnn_tensor_download(ctx, y, r, (size_t)n * 4);
        CHECK(s == WGNN_OK, "%s", wgnn_context_error(ctx));
        int bad = 0;
        for (int64_t i = 0; s == WGNN_OK && i < n; i++) bad += r[i] != (a[i] > 0 ? a[i] : 0.0f);
        CHECK(s == WGNN_OK && bad == 0, "relu recorded before a staged upload read the old data (%d wrong)", bad);
    }
    wgnn_tensor_destroy(x);
    wgnn_tensor_destroy(y);
    free(a);
    free(b);
    free(r);
}

/* Runs fn with stdout and stderr sent to a file; returns the bytes written. */
static long quietly(void (*fn)(wgnn_context *), wgnn_context *ctx) {
    fflush(stdout);
    fflush(stderr);
    char path[] = "/tmp/wgnn_quiet_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    int o1 = dup(1), o2 = dup(2);
    dup2(fd, 1);
    dup2(fd, 2);
    fn(ctx);
    fflush(stdout);
    fflush(stderr);
    dup2(o1, 1);
    dup2(o2, 2);
    close(o1);
    close(o2);
    long n = (long)lseek(fd, 0, SEEK_END);
    close(fd);
    unlink(path);
    return n;
}

static wgnn_status g_bad_status;
static char g_bad_msg[WGNN__ERR_LEN];
static void compile_bad(wgnn_context *ctx) {
    WGPUComputePipeline p = NULL;
    g_bad_status = wgnn__compile(ctx, "broken", "@compute @workgroup_size(1) fn main() { let x: f32 = undefined_thing; }",
                                 NULL, 0, &p);
    snprintf(g_bad_msg, sizeof g_bad_msg, "%s", wgnn_context_error(ctx));
}

static void test_errors(wgnn_context *ctx) {
    long printed = quietly(compile_bad, ctx);
    CHECK(g_bad_status == WGNN_ERR_GPU, "invalid WGSL -> WGNN_ERR_GPU (got %d)", (int)g_bad_status);
    CHECK(strstr(g_bad_msg, "undefined_thing") != NULL, "message names the problem: %s", g_bad_msg);
    CHECK(printed == 0, "nothing printed while compiling bad WGSL (%ld bytes)", printed);
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "a captured error leaves the context healthy");
    CHECK(wgnn__shader_source("sdpa_fused") != NULL && wgnn__shader_source("nope") == NULL, "embedded shaders");
    const wgnn__pipe *a = NULL, *b = NULL;
    wgnn__const c = {"WG", 64};
    const char *pre = "struct Params { row_base: u32, n_rows: u32, s_q: u32, s_kv: u32, d4: u32, }\n";
    CHECK(wgnn__pipeline(ctx, "sdpa_av", pre, &c, 1, &a) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(wgnn__pipeline(ctx, "sdpa_av", pre, &c, 1, &b) == WGNN_OK && a == b, "pipeline cached");
    wgnn__const c2 = {"WG", 32};
    CHECK(wgnn__pipeline(ctx, "sdpa_av", pre, &c2, 1, &b) == WGNN_OK && a != b, "variant is a new entry");
    CHECK(wgnn__pipeline(ctx, "no_such_kernel", NULL, NULL, 0, &b) == WGNN_ERR_UNSUPPORTED, "unknown kernel");
}

/* layer_norm of a row with a spread of one float32 step at 1e20: the mean
 * must not round back to the first value (it did: [0, 2, 0, 0]) */
static void test_layer_norm_offset(wgnn_context *ctx) {
    const float x[4] = {1e20f, 1.0000001e20f, 1e20f, 1e20f}, want[4] = {-0.57735f, 1.7320508f, -0.57735f, -0.57735f};
    int64_t d[1] = {4};
    wgnn_tensor *tx = NULL, *ty = NULL;
    float y[4] = {0};
    const char *args[] = {"normalized_shape=4"};
    bool ok = wgnn_tensor_create(ctx, WGNN_F32, 1, d, &tx) == WGNN_OK && wgnn_tensor_create(ctx, WGNN_F32, 1, d, &ty) == WGNN_OK &&
              wgnn_tensor_upload(ctx, tx, x, sizeof x) == WGNN_OK &&
              wgnn_op(ctx, "layer_norm", (const wgnn_tensor *const *)&tx, 1, args, 1, &ty, 1) == WGNN_OK &&
              wgnn_tensor_download(ctx, ty, y, sizeof y) == WGNN_OK;
    CHECK(ok, "layer_norm at 1e20: %s", wgnn_context_error(ctx));
    for (int i = 0; ok && i < 4; i++)
        CHECK(fabsf(y[i] - want[i]) < 1e-4f, "layer_norm at 1e20: y[%d] = %g, want %g", i, y[i], want[i]);
    wgnn_tensor_destroy(tx);
    wgnn_tensor_destroy(ty);
}

/* The data-error codes the kernels store (shaders/common/data_err.wgsl)
 * are the ones wgnn__data_error reads (src/internal.h). */
/* wgnn_op_ref refuses an output over an input's bytes (it used to compute
 * a permute or mm in place, wrongly, with WGNN_OK) */
static void test_ref_aliasing(void) {
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    char err[256] = "";
    wgnn_host_tensor i = {{WGNN_F32, 2, {2, 2}}, x}, o = {{WGNN_F32, 2, {2, 2}}, x};
    const char *a[] = {"dims=1,0"};
    CHECK(wgnn_op_ref("permute", &i, 1, a, 1, &o, 1, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT &&
              strstr(err, "overlaps input 0"),
          "permute into its own input: %s", err);
    wgnn_host_tensor o2 = {{WGNN_F32, 2, {2, 2}}, x + 2}; /* half over the input */
    CHECK(wgnn_op_ref("permute", &i, 1, a, 1, &o2, 1, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT,
          "permute over half its input: %s", err);
    wgnn_host_tensor o3 = {{WGNN_F32, 2, {2, 2}}, x + 4}; /* next to it: fine */
    CHECK(wgnn_op_ref("permute", &i, 1, a, 1, &o3, 1, err, sizeof err) == WGNN_OK && x[4] == 1 && x[5] == 3 &&
              x[6] == 2 && x[7] == 4,
          "permute next to its input: %s", err);
    CHECK(wgnn_op_ref(NULL, &i, 1, a, 1, &o3, 1, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT &&
              strstr(err, "op name is NULL"),
          "NULL op: %s", err);
    /* rms_norm's reference sums squares past FLT_MAX as the kernel does: inf, a row of zeros */
    float big[4] = {1e20f, 1.0000001e20f, 1e20f, 1e20f}, y[4] = {1, 1, 1, 1};
    wgnn_host_tensor bi = {{WGNN_F32, 1, {4}}, big}, bo = {{WGNN_F32, 1, {4}}, y};
    const char *na[] = {"normalized_shape=4"};
    CHECK(wgnn_op_ref("rms_norm", &bi, 1, na, 1, &bo, 1, err, sizeof err) == WGNN_OK && y[0] == 0 && y[1] == 0,
          "rms_norm reference past FLT_MAX: %g %g (%s)", y[0], y[1], err);
}

static void test_data_err_codes(void) {
    static const struct { const char *name; unsigned code; } codes[] = {
        {"DATA_ERR_INDEX", WGNN__DATA_ERR_INDEX},         {"DATA_ERR_INDEX_COPY", WGNN__DATA_ERR_INDEX_COPY},
        {"DATA_ERR_SEQLEN", WGNN__DATA_ERR_SEQLEN},       {"DATA_ERR_SEQLEN_NEW", WGNN__DATA_ERR_SEQLEN_NEW},
        {"DATA_ERR_SAMPLE", WGNN__DATA_ERR_SAMPLE},       {"DATA_ERR_CACHE_POS", WGNN__DATA_ERR_CACHE_POS},
    };
    const char *src = wgnn__shader_source("common/data_err");
    CHECK(src != NULL, "shaders/common/data_err.wgsl is embedded");
    if (!src) return;
    int n_consts = 0;
    for (const char *p = src; (p = strstr(p, "const DATA_ERR_")) != NULL; p++) n_consts++;
    CHECK(n_consts == (int)(sizeof codes / sizeof codes[0]), "%d DATA_ERR consts in the WGSL, %d codes in C", n_consts,
          (int)(sizeof codes / sizeof codes[0]));
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "const %s: u32 = %uu;", codes[i].name, codes[i].code);
        CHECK(strstr(src, want) != NULL, "common/data_err.wgsl has \"%s\"", want);
    }
}

/* A GPU kernel against the CPU reference: a small attention. */
static void test_kernel_vs_cpu(wgnn_context *ctx) {
    int64_t dims[4] = {1, 2, 7, 8};
    size_t n = 1 * 2 * 7 * 8;
    float q[112], k[112], v[112], o[112], ref[112];
    tu_fill(q, n, -1, 1);
    tu_fill(k, n, -1, 1);
    tu_fill(v, n, -1, 1);
    wgnn_tensor *tq, *tk, *tv, *to;
    wgnn_tensor_create(ctx, WGNN_F32, 4, dims, &tq);
    wgnn_tensor_create(ctx, WGNN_F32, 4, dims, &tk);
    wgnn_tensor_create(ctx, WGNN_F32, 4, dims, &tv);
    wgnn_tensor_create(ctx, WGNN_F32, 4, dims, &to);
    wgnn_tensor_upload(ctx, tq, q, sizeof q);
    wgnn_tensor_upload(ctx, tk, k, sizeof k);
    wgnn_tensor_upload(ctx, tv, v, sizeof v);
    CHECK(wgnn_sdpa(ctx, tq, tk, tv, NULL, to) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(wgnn_tensor_download(ctx, to, o, sizeof o) == WGNN_OK, "%s", wgnn_context_error(ctx));
    wgnn_ref_sdpa(q, k, v, NULL, 2, 7, 7, 8, 1.0 / sqrt(8.0), ref);
    double e;
    CHECK(tu_close(o, ref, n, 1e-5, 1e-4, &e), "gpu vs cpu max abs err %g", e);
    wgnn_tensor_destroy(tq);
    wgnn_tensor_destroy(tk);
    wgnn_tensor_destroy(tv);
    wgnn_tensor_destroy(to);
}

static void test_f16_conversion(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) { /* every half survives f16 -> f32 -> f16 */
        uint16_t x = (uint16_t)h, y;
        float f;
        wgnn_f16_to_f32(&x, &f, 1);
        wgnn_f32_to_f16(&f, &y, 1);
        bool nan = (x & 0x7c00u) == 0x7c00u && (x & 0x3ffu);
        if (nan ? !((y & 0x7c00u) == 0x7c00u && (y & 0x3ffu)) : y != x) bad++;
    }
    CHECK(bad == 0, "%d halves did not round-trip", bad);
    const float in[] = {1.0f, -2.0f, 65504.0f, 65520.0f, 5.9604645e-08f, 2.9802322e-08f, 8.940697e-08f, 0.1f, 1e-10f};
    const uint16_t want[] = {0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x0002, 0x2e66, 0x0000};
    uint16_t got[9];
    wgnn_f32_to_f16(in, got, 9);
    for (int i = 0; i < 9; i++) CHECK(got[i] == want[i], "f32 %g -> f16 0x%04x, want 0x%04x", (double)in[i], got[i], want[i]);
}

int main(void) {
    test_grid_math();
    test_f16_conversion();
    test_data_err_codes();
    test_ref_aliasing();
    wgnn_context *ctx = tu_context();
    test_context(ctx);
    test_tensors(ctx);
    test_large_uploads(ctx);
    test_errors(ctx);
    test_kernel_vs_cpu(ctx);
    test_layer_norm_offset(ctx);
    wgnn_context_destroy(ctx);
    return tu_finish();
}
