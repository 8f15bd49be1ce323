/* test_ops.c - every op of the table against its CPU reference, from case
 * tables: one case = op, input specs, arguments, tolerance, and either a
 * result to compare or the error expected.
 *
 * Input spec: "DTYPE[d0,d1,...]" with DTYPE f32, f16 or i32, optionally
 * followed by "{lo,hi}" for the range of the random values (default
 * [-1, 1); integers in [lo, hi)). "f32[]" is a 0-d scalar.
 *   {"linear", {"f32[3,5]", "f32[4,5]", "f32[4]"}, {NULL}, TOL}
 *   {"embedding", {"f32[10,4]", "i32[7]{0,10}"}, {NULL}, EXACT}
 *   {"softmax", {"f32[2,3]"}, {"dim=5"}, ERR(WGNN_ERR_INVALID_ARGUMENT, "dim")}
 * Families keep their cases in tests/cases/<family>.inc. Cases whose data
 * matters (NaN, ties, sample's choices) are written out in test_data_cases.
 *   test_ops            all cases
 *   test_ops NAME...    the cases of those ops */
#include "testutil.h"

typedef struct op_case {
    const char *op;
    const char *in[17];   /* NULL-terminated */
    const char *args[9];  /* NULL-terminated */
    double atol, rtol;
    wgnn_status expect;   /* WGNN_OK: compare with the reference; else this error */
    const char *expect_msg;
} op_case;

#define TOL 1e-4, 1e-3, WGNN_OK, NULL
#define TOL_F16 2e-3, 2e-3, WGNN_OK, NULL
#define EXACT 0, 0, WGNN_OK, NULL
#define ERR(status, msg) 0, 0, status, msg

static const op_case k_cases[] = {
#include "cases/sdpa.inc"
#include "cases/families.inc"
};

typedef struct spec {
    wgnn_desc d;
    double lo, hi;
} spec;

static int parse_spec(const char *s, spec *out) {
    memset(out, 0, sizeof *out);
    out->lo = -1;
    out->hi = 1;
    if (strncmp(s, "f32[", 4) == 0) out->d.dtype = WGNN_F32;
    else if (strncmp(s, "f16[", 4) == 0) out->d.dtype = WGNN_F16;
    else if (strncmp(s, "i32[", 4) == 0) {
        out->d.dtype = WGNN_I32;
        out->lo = 0;
        out->hi = 10;
    } else return 0;
    const char *p = s + 4;
    while (*p && *p != ']') {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || out->d.rank >= WGNN_MAX_RANK) return 0;
        out->d.dims[out->d.rank++] = v;
        p = end;
        if (*p == ',') p++;
    }
    if (*p != ']') return 0;
    p++;
    if (*p == '{' && sscanf(p, "{%lf,%lf}", &out->lo, &out->hi) != 2) return 0;
    return 1;
}

static uint64_t numel_of(const wgnn_desc *d) {
    uint64_t n = 1;
    for (int i = 0; i < d->rank; i++) n *= (uint64_t)d->dims[i];
    return n;
}

static void *random_data(const spec *sp) {
    uint64_t n = numel_of(&sp->d);
    size_t es = wgnn_dtype_size(sp->d.dtype);
    void *p = malloc((size_t)n * es + 4);
    if (!p) return NULL;
    for (uint64_t i = 0; i < n; i++) {
        if (sp->d.dtype == WGNN_I32) {
            int64_t span = (int64_t)sp->hi - (int64_t)sp->lo;
            ((int32_t *)p)[i] = (int32_t)((int64_t)sp->lo + (span > 0 ? (int64_t)(tu_next() % (uint64_t)span) : 0));
        } else {
            float f = tu_uniform((float)sp->lo, (float)sp->hi);
            if (sp->d.dtype == WGNN_F32) ((float *)p)[i] = f;
            else wgnn_f32_to_f16(&f, &((uint16_t *)p)[i], 1);
        }
    }
    return p;
}

/* Compares one output; returns 1 when every element is within tolerance. */
static int compare(const wgnn_desc *d, const void *got, const void *want, double atol, double rtol, double *worst,
                   uint64_t *where) {
    uint64_t n = numel_of(d);
    *worst = 0;
    *where = 0;
    int ok = 1;
    for (uint64_t i = 0; i < n; i++) {
        double g, w;
        if (d->dtype == WGNN_I32) {
            g = ((const int32_t *)got)[i];
            w = ((const int32_t *)want)[i];
        } else if (d->dtype == WGNN_F16) {
            float a, b;
            wgnn_f16_to_f32(&((const uint16_t *)got)[i], &a, 1);
            wgnn_f16_to_f32(&((const uint16_t *)want)[i], &b, 1);
            g = a;
            w = b;
        } else {
            g = ((const float *)got)[i];
            w = ((const float *)want)[i];
        }
        if (isnan(w) && isnan(g)) continue;
        if (isinf(w) && g == w) continue;
        double e = fabs(g - w);
        if (!(e <= atol + rtol * fabs(w))) {
            if (ok || e > *worst || e != e) {
                *worst = e;
                *where = i;
            }
            ok = 0;
        } else if (ok && e > *worst) {
            *worst = e;
        }
    }
    return ok;
}

static void run_case(wgnn_context *ctx, const op_case *c, size_t idx) {
    spec sp[17];
    int n_in = 0, n_args = 0;
    while (c->in[n_in]) {
        if (!parse_spec(c->in[n_in], &sp[n_in])) {
            CHECK(0, "case %zu (%s): bad input spec %s", idx, c->op, c->in[n_in]);
            return;
        }
        n_in++;
    }
    while (c->args[n_args]) n_args++;
    char label[512];
    size_t m = (size_t)snprintf(label, sizeof label, "case %zu: %s", idx, c->op);
    for (int i = 0; i < n_in && m < sizeof label; i++) m += (size_t)snprintf(label + m, sizeof label - m, " %s", c->in[i]);
    for (int i = 0; i < n_args && m < sizeof label; i++)
        m += (size_t)snprintf(label + m, sizeof label - m, " %s", c->args[i]);

    wgnn_desc din[17], dout[16];
    for (int i = 0; i < n_in; i++) din[i] = sp[i].d;
    int n_out = 0;
    char err[1024] = "";
    wgnn_status s = wgnn_op_shapes(c->op, din, n_in, c->args, n_args, dout, 16, &n_out, err, sizeof err);
    if (c->expect != WGNN_OK && s != WGNN_OK) {
        CHECK(s == c->expect && strstr(err, c->expect_msg), "%s: expected %s \"%s\", got %s: %s", label,
              wgnn_status_str(c->expect), c->expect_msg, wgnn_status_str(s), err);
        return;
    }
    if (s != WGNN_OK) {
        CHECK(0, "%s: shapes: %s", label, err);
        return;
    }
    void *hin[17] = {0}, *ref[16] = {0}, *got[16] = {0};
    wgnn_tensor *tin[17] = {0}, *tout[16] = {0};
    wgnn_host_tensor hi[17], ho[16];
    int ok = 1;
    for (int i = 0; i < n_in && ok; i++) {
        hin[i] = random_data(&sp[i]);
        hi[i].desc = sp[i].d;
        hi[i].data = hin[i];
        ok = hin[i] != NULL;
        if (ok) ok = wgnn_tensor_create(ctx, sp[i].d.dtype, sp[i].d.rank, sp[i].d.dims, &tin[i]) == WGNN_OK;
        if (ok) ok = wgnn_tensor_upload(ctx, tin[i], hin[i], (size_t)numel_of(&sp[i].d) * wgnn_dtype_size(sp[i].d.dtype)) == WGNN_OK;
    }
    for (int i = 0; i < n_out && ok; i++) {
        size_t bytes = (size_t)numel_of(&dout[i]) * wgnn_dtype_size(dout[i].dtype);
        ref[i] = calloc(1, bytes + 4);
        got[i] = calloc(1, bytes + 4);
        ho[i].desc = dout[i];
        ho[i].data = ref[i];
        ok = ref[i] && got[i] &&
             wgnn_tensor_create(ctx, dout[i].dtype, dout[i].rank, dout[i].dims, &tout[i]) == WGNN_OK;
    }
    CHECK(ok, "%s: setup: %s", label, wgnn_context_error(ctx));
    if (ok) {
        s = wgnn_op(ctx, c->op, (const wgnn_tensor *const *)tin, n_in, c->args, n_args, tout, n_out);
        if (c->expect != WGNN_OK && s == WGNN_OK) {
            /* An error in the data (embedding's indices): found on the GPU,
             * reported by the next download (then cleared); the reference
             * reports it at once. */
            size_t bytes = (size_t)numel_of(&dout[0]) * wgnn_dtype_size(dout[0].dtype);
            s = wgnn_tensor_download(ctx, tout[0], got[0], bytes);
            CHECK(s == c->expect && strstr(wgnn_context_error(ctx), c->expect_msg), "%s: download: expected %s \"%s\", got %s: %s",
                  label, wgnn_status_str(c->expect), c->expect_msg, wgnn_status_str(s), wgnn_context_error(ctx));
            CHECK(wgnn_tensor_download(ctx, tout[0], got[0], bytes) == WGNN_OK, "%s: the error is reported once: %s", label,
                  wgnn_context_error(ctx));
            err[0] = '\0';
            s = wgnn_op_ref(c->op, hi, n_in, c->args, n_args, ho, n_out, err, sizeof err);
            CHECK(s == c->expect && strstr(err, c->expect_msg), "%s: reference: expected %s \"%s\", got %s: %s", label,
                  wgnn_status_str(c->expect), c->expect_msg, wgnn_status_str(s), err);
            ok = 0;
        } else if (c->expect != WGNN_OK) {
            CHECK(s == c->expect && strstr(wgnn_context_error(ctx), c->expect_msg), "%s: expected %s \"%s\", got %s: %s",
                  label, wgnn_status_str(c->expect), c->expect_msg, wgnn_status_str(s), wgnn_context_error(ctx));
            ok = 0;
        } else {
            CHECK(s == WGNN_OK, "%s: %s", label, wgnn_context_error(ctx));
            ok = s == WGNN_OK;
        }
    }
    if (ok) {
        err[0] = '\0';
        s = wgnn_op_ref(c->op, hi, n_in, c->args, n_args, ho, n_out, err, sizeof err);
        CHECK(s == WGNN_OK, "%s: reference: %s", label, err);
        ok = s == WGNN_OK;
    }
    for (int i = 0; i < n_out && ok; i++) {
        size_t bytes = (size_t)numel_of(&dout[i]) * wgnn_dtype_size(dout[i].dtype);
        s = wgnn_tensor_download(ctx, tout[i], got[i], bytes);
        CHECK(s == WGNN_OK, "%s: download: %s", label, wgnn_context_error(ctx));
        if (s != WGNN_OK) break;
        double worst;
        uint64_t where;
        int same = compare(&dout[i], got[i], ref[i], c->atol, c->rtol, &worst, &where);
        CHECK(same, "%s: output %d differs from the reference: |err| %g at element %llu", label, i, worst,
              (unsigned long long)where);
    }
    for (int i = 0; i < n_in; i++) {
        free(hin[i]);
        wgnn_tensor_destroy(tin[i]);
    }
    for (int i = 0; i < n_out; i++) {
        free(ref[i]);
        free(got[i]);
        wgnn_tensor_destroy(tout[i]);
    }
}

/* ---- cases with chosen data ------------------------------------------------- */

/* The cases with chosen data: op's output shape (one output), its inputs
 * made from data (din's dtypes), the output made and op run. The tensors
 * go into tin and *tout for the caller to destroy, also on failure; *ok
 * false (and a CHECK failed) where a step did not succeed. */
static void chosen_run(wgnn_context *ctx, const char *label, const char *op, int n_in, const wgnn_desc *din,
                       const void *const *data, const char *const *args, int n_args, wgnn_tensor **tin,
                       wgnn_tensor **tout, wgnn_desc *dout, bool *ok) {
    int n_out = 0;
    char err[1024] = "";
    wgnn_status s = wgnn_op_shapes(op, din, n_in, args, n_args, dout, 2, &n_out, err, sizeof err);
    CHECK(s == WGNN_OK && n_out == 1, "%s: shapes: %s", label, err);
    *ok = s == WGNN_OK && n_out == 1;
    for (int i = 0; i < n_in && *ok; i++)
        *ok = wgnn_tensor_create(ctx, din[i].dtype, din[i].rank, din[i].dims, &tin[i]) == WGNN_OK &&
              wgnn_tensor_upload(ctx, tin[i], data[i], (size_t)numel_of(&din[i]) * wgnn_dtype_size(din[i].dtype)) ==
                  WGNN_OK;
    if (*ok) *ok = wgnn_tensor_create(ctx, dout[0].dtype, dout[0].rank, dout[0].dims, tout) == WGNN_OK;
    if (*ok) *ok = wgnn_op(ctx, op, (const wgnn_tensor *const *)tin, n_in, args, n_args, tout, 1) == WGNN_OK;
    if (n_out == 1) CHECK(*ok, "%s: recorded: %s", label, wgnn_context_error(ctx));
}

/* Runs op on the given float32 inputs; its one int32 output must be want,
 * on the GPU and in the reference. */
static void data_case(wgnn_context *ctx, const char *label, const char *op, int n_in, const wgnn_desc *din,
                      const float *const *data, const char *const *args, int n_args, const int32_t *want) {
    wgnn_desc dout[2];
    wgnn_tensor *tin[2] = {0}, *tout = NULL;
    const void *vdata[2] = {data[0], n_in > 1 ? data[1] : NULL};
    bool ok;
    chosen_run(ctx, label, op, n_in, din, vdata, args, n_args, tin, &tout, dout, &ok);
    CHECK(!ok || dout[0].dtype == WGNN_I32, "%s: an int32 output", label);
    uint64_t no = ok ? numel_of(&dout[0]) : 0;
    int32_t *got = calloc((size_t)no + 1, 4), *ref = calloc((size_t)no + 1, 4);
    ok = ok && got && ref && dout[0].dtype == WGNN_I32;
    if (ok) {
        ok = wgnn_tensor_download(ctx, tout, got, (size_t)no * 4) == WGNN_OK;
        CHECK(ok, "%s: %s", label, wgnn_context_error(ctx));
    }
    if (ok) {
        char err[1024] = "";
        wgnn_host_tensor hi[2], ho = {dout[0], ref};
        for (int i = 0; i < n_in; i++) hi[i] = (wgnn_host_tensor){din[i], (void *)data[i]};
        ok = wgnn_op_ref(op, hi, n_in, args, n_args, &ho, 1, err, sizeof err) == WGNN_OK;
        CHECK(ok, "%s: reference: %s", label, err);
    }
    for (uint64_t i = 0; ok && i < no; i++) {
        CHECK(got[i] == want[i], "%s: output %llu is %d, expected %d", label, (unsigned long long)i, got[i], want[i]);
        CHECK(ref[i] == want[i], "%s: reference output %llu is %d, expected %d", label, (unsigned long long)i, ref[i],
              want[i]);
    }
    for (int i = 0; i < n_in; i++) wgnn_tensor_destroy(tin[i]);
    wgnn_tensor_destroy(tout);
    free(got);
    free(ref);
}

/* sample over rows of r1 with one u a row (B = 3). r1's probabilities in
 * index order, cumulative: 0.015 0.126 0.167 0.470 0.476 0.975 1 1 (x7 is
 * -inf: never picked); the u values sit far from every boundary of the
 * kept set, except 0 (the first kept token) and 0.999999 (the last one of
 * nonzero mass). Expected ids follow docs/OPS.md's rule by hand. */
static void sample_rows(wgnn_context *ctx, const char *label, const float *row, int v, const float *u,
                        const char *const *args, int n_args, const int32_t *want) {
    float x[3 * 8];
    for (int b = 0; b < 3; b++) memcpy(x + b * v, row, (size_t)v * sizeof *row);
    wgnn_desc d[2] = {{WGNN_F32, 2, {3, v}}, {WGNN_F32, 1, {3}}};
    const float *data[2] = {x, u};
    data_case(ctx, label, "sample", 2, d, data, args, n_args, want);
}

/* Runs op on int32 / float32 inputs made from the given values; the
 * download of output 0 must fail naming want (the data-error words of
 * src/internal.h), and the next one succeed (the words are cleared). */
static void data_error_case(wgnn_context *ctx, const char *label, const char *op, int n_in, const wgnn_desc *din,
                            const void *const *data, const char *const *args, int n_args, const char *want) {
    wgnn_desc dout[2];
    wgnn_tensor *tin[4] = {0}, *tout = NULL;
    bool ok;
    chosen_run(ctx, label, op, n_in, din, data, args, n_args, tin, &tout, dout, &ok);
    size_t ob = ok ? (size_t)numel_of(&dout[0]) * wgnn_dtype_size(dout[0].dtype) : 0;
    void *got = ok ? malloc(ob) : NULL;
    if (got) {
        wgnn_status s = wgnn_tensor_download(ctx, tout, got, ob);
        CHECK(s == WGNN_ERR_INVALID_ARGUMENT && strstr(wgnn_context_error(ctx), want),
              "%s: the wait reports '%s': %s", label, want, wgnn_context_error(ctx));
        printf("  %-32s -> %s\n", label, wgnn_context_error(ctx));
        CHECK(wgnn_tensor_download(ctx, tout, got, ob) == WGNN_OK, "%s: cleared: %s", label, wgnn_context_error(ctx));
    }
    for (int i = 0; i < n_in; i++) wgnn_tensor_destroy(tin[i]);
    wgnn_tensor_destroy(tout);
    free(got);
}

static void test_data_errors(wgnn_context *ctx) {
    {
        const float self[8] = {0}, src[4] = {1, 2, 3, 4};
        const int32_t idx[2] = {0, 4};
        wgnn_desc d[3] = {{WGNN_F32, 2, {4, 2}}, {WGNN_I32, 1, {2}}, {WGNN_F32, 2, {2, 2}}};
        const void *data[3] = {self, idx, src};
        const char *args[] = {"dim=0"};
        data_error_case(ctx, "index_copy index 4 of 4 rows", "index_copy", 3, d, data, args, 1,
                        "index_copy index is out of range: index[1] = 4, valid 0..3");
    }
    {
        const float w[8] = {0};
        const int32_t idx[3] = {1, -2, 0};
        wgnn_desc d[2] = {{WGNN_F32, 2, {4, 2}}, {WGNN_I32, 1, {3}}};
        const void *data[2] = {w, idx};
        data_error_case(ctx, "embedding index -2", "embedding", 2, d, data, NULL, 0,
                        "indices[1] = -2, valid 0..3");
    }
    {
        /* sdpa_kvcache over a cache of 6 positions, a length of 9 */
        float q[1 * 2 * 1 * 4] = {0}, kc[1 * 2 * 6 * 4] = {0};
        const int32_t lens[1] = {9};
        wgnn_desc d[4] = {{WGNN_F32, 4, {1, 2, 1, 4}}, {WGNN_F32, 4, {1, 2, 6, 4}}, {WGNN_F32, 4, {1, 2, 6, 4}},
                          {WGNN_I32, 1, {1}}};
        const void *data[4] = {q, kc, kc, lens};
        data_error_case(ctx, "sdpa_kvcache length 9 of 6", "sdpa_kvcache", 4, d, data, NULL, 0,
                        "cache_seqlens[0] = 9, valid 0..6");
    }
}

static void test_data_cases(wgnn_context *ctx) {
    const float nan = NAN, inf = INFINITY;
    /* argmax: NaN is the largest (first NaN), ties give the first, -0 == +0 */
    {
        const float x[6][4] = {{1, nan, 3, nan},   {-0.0f, 0.0f, -1, -2}, {0.0f, -0.0f, -1, -2},
                               {-inf, -inf, -inf, -inf}, {inf, 1, inf, nan}, {2, 5, 5, -1}};
        const int32_t want[6] = {1, 0, 0, 0, 3, 1};
        wgnn_desc d = {WGNN_F32, 2, {6, 4}};
        const float *data[1] = {&x[0][0]};
        const char *args[] = {"dim=1"};
        data_case(ctx, "argmax NaN / ties / zeros, dim 1", "argmax", 1, &d, data, args, 1, want);
        /* the same rows down dim 0 (strided): columns of the transpose */
        float t[4][6];
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 4; j++) t[j][i] = x[i][j];
        wgnn_desc dt = {WGNN_F32, 2, {4, 6}};
        const float *datat[1] = {&t[0][0]};
        const char *args0[] = {"dim=0"};
        data_case(ctx, "argmax NaN / ties / zeros, dim 0", "argmax", 1, &dt, datat, args0, 1, want);
    }
    {
        /* a vocabulary-sized row: all equal (the first), then NaN late (the first NaN) */
        enum { V = 151936 };
        float *x = malloc(2 * V * sizeof *x);
        if (x) {
            for (int i = 0; i < 2 * V; i++) x[i] = 0.25f;
            x[V + 150000] = nan;
            x[V + 151000] = nan;
            x[V + 3] = 7;
            const int32_t want[2] = {0, 150000};
            wgnn_desc d = {WGNN_F32, 2, {2, V}};
            const float *data[1] = {x};
            const char *args[] = {"dim=-1"};
            data_case(ctx, "argmax [2, 151936] ties and NaN", "argmax", 1, &d, data, args, 1, want);
        }
        free(x);
    }
    /* sample */
    const float r1[8] = {0, 2, 1, 3, -1, 3.5f, 0.5f, -inf};
    {
        const float u[3] = {0, 0.5f, 0.999999f};
        const int32_t w5[3] = {5, 5, 5};
        const char *a1[] = {"top_k=1"};
        sample_rows(ctx, "sample top_k=1 is argmax", r1, 8, u, a1, 1, w5);
        const char *a2[] = {"top_p=1e-6"};
        sample_rows(ctx, "sample tiny top_p is argmax", r1, 8, u, a2, 1, w5);
        const char *a3[] = {"top_k=1", "temperature=3", "top_p=0.2"};
        sample_rows(ctx, "sample top_k=1 at temperature 3", r1, 8, u, a3, 3, w5);
        const int32_t w06[3] = {0, 5, 6};
        sample_rows(ctx, "sample, no filter: u near 0 and 1", r1, 8, u, NULL, 0, w06);
        const char *a4[] = {"top_k=8"};
        sample_rows(ctx, "sample top_k=V", r1, 8, u, a4, 1, w06);
    }
    {
        const float u[3] = {0.1f, 0.3f, 0.6f};
        const int32_t w[3] = {1, 3, 5};
        const char *a[] = {"top_k=3"};
        sample_rows(ctx, "sample top_k=3 keeps x1 x3 x5", r1, 8, u, a, 1, w);
        const float u2[3] = {0.1f, 0.3f, 0.9f};
        const int32_t w2[3] = {1, 3, 5};
        sample_rows(ctx, "sample, no filter", r1, 8, u2, NULL, 0, w2);
    }
    {
        const float u[3] = {0, 0.3f, 0.5f};
        const int32_t w[3] = {3, 3, 5};
        const char *a[] = {"top_p=0.5"};
        sample_rows(ctx, "sample top_p=0.5 keeps x3 x5", r1, 8, u, a, 1, w);
        const char *a2[] = {"temperature=2", "top_k=4", "top_p=0.7"};
        sample_rows(ctx, "sample temperature 2, top_k 4, top_p 0.7", r1, 8, u, a2, 3, w);
        const float u3[3] = {0.1f, 0.3f, 0.9f};
        const int32_t w3[3] = {3, 5, 5};
        const char *a3[] = {"temperature=0.5", "top_p=0.9"};
        sample_rows(ctx, "sample temperature 0.5, top_p 0.9", r1, 8, u3, a3, 2, w3);
    }
    {
        /* ties at the k-th logit are all kept: three 2s for top_k=2 */
        const float r2[5] = {1, 2, 2, 0, 2};
        const float u[3] = {0, 0.5f, 0.9f};
        const int32_t w[3] = {1, 2, 4};
        const char *a[] = {"top_k=2"};
        sample_rows(ctx, "sample ties at the top_k-th logit", r2, 5, u, a, 1, w);
    }
    {
        /* a row with no token of mass (all -inf; NaN): id 0 and a data
         * error naming the first such row, on the GPU and in the reference */
        const float x[3][4] = {{0, 1, 2, 3}, {-inf, -inf, -inf, -inf}, {nan, nan, nan, nan}};
        const float u[3] = {0.5f, 0.5f, 0.5f};
        wgnn_desc d[2] = {{WGNN_F32, 2, {3, 4}}, {WGNN_F32, 1, {3}}};
        wgnn_tensor *tx = NULL, *tu = NULL, *ty = NULL;
        int32_t got[3] = {-5, -5, -5}, ref[3] = {-5, -5, -5};
        char err[512] = "";
        wgnn_status s = wgnn_tensor_create(ctx, WGNN_F32, 2, d[0].dims, &tx);
        if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_F32, 1, d[1].dims, &tu);
        if (s == WGNN_OK) s = wgnn_tensor_create(ctx, WGNN_I32, 1, d[1].dims, &ty);
        if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tx, x, sizeof x);
        if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, tu, u, sizeof u);
        if (s == WGNN_OK) s = wgnn_op(ctx, "sample", (const wgnn_tensor *const[]){tx, tu}, 2, NULL, 0, &ty, 1);
        CHECK(s == WGNN_OK, "sample without mass: the op is recorded: %s", wgnn_context_error(ctx));
        s = wgnn_tensor_download(ctx, ty, got, sizeof got);
        const char *msg = wgnn_context_error(ctx); /* rows 1 and 2 race to report: either */
        CHECK(s == WGNN_ERR_INVALID_ARGUMENT && (strstr(msg, "sample: row 1 ") || strstr(msg, "sample: row 2 ")),
              "sample without mass: the wait reports row 1 or 2: %s", msg);
        s = wgnn_tensor_download(ctx, ty, got, sizeof got);
        CHECK(s == WGNN_OK && got[1] == 0 && got[2] == 0 && got[0] >= 0 && got[0] < 4,
              "sample without mass: ids %d %d %d (rows 1 and 2: 0), the error cleared", got[0], got[1], got[2]);
        wgnn_host_tensor hi[2] = {{d[0], (void *)x}, {d[1], (void *)u}}, ho = {{WGNN_I32, 1, {3}}, ref};
        s = wgnn_op_ref("sample", hi, 2, NULL, 0, &ho, 1, err, sizeof err);
        CHECK(s == WGNN_ERR_INVALID_ARGUMENT && strstr(err, "row 1 ") && ref[1] == 0 && ref[0] == got[0],
              "sample without mass: the reference fails naming row 1: %s", err);
        wgnn_tensor_destroy(tx);
        wgnn_tensor_destroy(tu);
        wgnn_tensor_destroy(ty);
    }
    {
        /* a vocabulary-sized row: -20 everywhere but x[100000] = 5 and
         * x[7] = 4.5 (mass 0.62 and 0.38 of those two; the rest ~0.4%) */
        enum { V = 151936 };
        float *x = malloc(2 * V * sizeof *x);
        if (x) {
            for (int i = 0; i < 2 * V; i++) x[i] = -20;
            for (int b = 0; b < 2; b++) {
                x[b * V + 100000] = 5;
                x[b * V + 7] = 4.5f;
            }
            const float u[2] = {0.2f, 0.9f};
            wgnn_desc d[2] = {{WGNN_F32, 2, {2, V}}, {WGNN_F32, 1, {2}}};
            const float *data[2] = {x, u};
            const int32_t w1[2] = {100000, 100000};
            const char *a1[] = {"top_k=1"};
            data_case(ctx, "sample [2, 151936] top_k=1", "sample", 2, d, data, a1, 1, w1);
            const char *a2[] = {"top_p=0.01"};
            data_case(ctx, "sample [2, 151936] tiny top_p", "sample", 2, d, data, a2, 1, w1);
            const int32_t w2[2] = {7, 100000};
            const char *a3[] = {"top_k=2"};
            data_case(ctx, "sample [2, 151936] top_k=2", "sample", 2, d, data, a3, 1, w2);
            const char *a4[] = {"top_p=0.9"};
            data_case(ctx, "sample [2, 151936] top_p=0.9", "sample", 2, d, data, a4, 1, w2);
        }
        free(x);
    }
}

/* The table itself: names, arguments, no duplicates, find. */
static void test_table(void) {
    int n = wgnn_op_count();
    CHECK(n >= 1, "%d ops", n);
    for (int i = 0; i < n; i++) {
        const wgnn_op_info *a = wgnn_op_info_at(i);
        CHECK(a && a->name && a->summary && a->inputs && a->shapes, "row %d described", i);
        if (!a) continue;
        CHECK(wgnn_op_find(a->name) == a, "%s found by name", a->name);
        CHECK(a->min_inputs <= a->max_inputs, "%s input counts", a->name);
        for (int j = 0; j < a->n_args; j++) CHECK(a->args[j].name && a->args[j].type, "%s arg %d", a->name, j);
    }
    CHECK(wgnn_op_find("no_such_op") == NULL && wgnn_op_info_at(n) == NULL && wgnn_op_info_at(-1) == NULL,
          "unknown names and indices");
    char err[256];
    wgnn_desc d = {WGNN_F32, 1, {4}};
    wgnn_desc o[4];
    int no;
    CHECK(wgnn_op_shapes("no_such_op", &d, 1, NULL, 0, o, 4, &no, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT &&
              strstr(err, "no_such_op"),
          "unknown op named: %s", err);
    /* sizes near 2^63: refused before any shape arithmetic could overflow */
    const char *split[1] = {"split_sizes=1,9223372036854775807"};
    CHECK(wgnn_op_shapes("split_with_sizes", &d, 1, split, 1, o, 4, &no, err, sizeof err) ==
                  WGNN_ERR_INVALID_ARGUMENT && strstr(err, "they pass it"),
          "split sizes summing past 2^63: %s", err);
    wgnn_desc big[2] = {{WGNN_F32, 1, {INT64_MAX}}, {WGNN_F32, 1, {1}}};
    CHECK(wgnn_op_shapes("cat", big, 2, NULL, 0, o, 4, &no, err, sizeof err) == WGNN_ERR_LIMIT &&
              strstr(err, "input 0 has more than 2^50 elements"),
          "cat of a 2^63-element input: %s", err);
    wgnn_desc mm[2] = {{WGNN_F32, 3, {INT64_MAX, 1, 4}}, {WGNN_F32, 3, {1, 4, 1}}};
    CHECK(wgnn_op_shapes("matmul", mm, 2, NULL, 0, o, 4, &no, err, sizeof err) == WGNN_ERR_LIMIT,
          "matmul of a 2^63-row input: %s", err);
}

/* FNV-1a of a case's op, inputs and arguments: each case's random data
 * comes from its own text, so that adding, removing or filtering cases
 * leaves the others' data as they were. */
static uint64_t case_seed(const op_case *c) {
    uint64_t h = 1469598103934665603ull;
    const char *parts[1 + 17 + 9];
    int n = 0;
    parts[n++] = c->op;
    for (int i = 0; i < 17 && c->in[i]; i++) parts[n++] = c->in[i];
    for (int i = 0; i < 9 && c->args[i]; i++) parts[n++] = c->args[i];
    for (int k = 0; k < n; k++) {
        for (const char *p = parts[k]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull;
    }
    return h;
}

int main(int argc, char **argv) {
    tu_seed(20261201u);
    test_table();
    wgnn_context *ctx = tu_context();
    size_t n = sizeof k_cases / sizeof k_cases[0];
    for (size_t i = 0; i < n; i++) {
        if (!k_cases[i].op) continue;
        int want = argc <= 1;
        for (int a = 1; a < argc; a++) want |= strcmp(argv[a], k_cases[i].op) == 0;
        if (!want) continue;
        tu_seed(case_seed(&k_cases[i]));
        run_case(ctx, &k_cases[i], i);
    }
    tu_seed(20261201u);
    bool data = argc <= 1;
    for (int a = 1; a < argc; a++) data |= strcmp(argv[a], "argmax") == 0 || strcmp(argv[a], "sample") == 0;
    if (data) test_data_cases(ctx);
    if (data) test_data_errors(ctx);
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
    wgnn_context_destroy(ctx);
    return tu_finish();
}
