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
 * Families keep their cases in tests/cases/<family>.inc.
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
        if (want) run_case(ctx, &k_cases[i], i);
    }
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
    wgnn_context_destroy(ctx);
    return tu_finish();
}
