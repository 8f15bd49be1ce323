/* test_graph.c - the graph runtime against the CPU references (wgnn_op_ref
 * per node, chained on the host):
 *   - an MLP-like chain run twice with new inputs (buffers and bind groups reused);
 *   - views (of inputs and of op outputs, -1 inferred), permute, softmax, cat
 *     and a multi-output op (split_with_sizes);
 *   - liveness: a chain of same-size elementwise ops shares few buffers;
 *   - an im2col conv2d (scratch) and a three-pass sdpa (scratch);
 *   - profiles;
 *   - state: index_copy in place into a constant (wgnn_graph_op_into), a KV cache;
 *   - the error cases, and an embedding index out of range found on the GPU. */
#include "testutil.h"

#define MAXN 4096

typedef struct ht {
    wgnn_desc d;
    float *p; /* MAXN floats */
} ht;

static ht ht_new(int rank, const int64_t *dims) {
    ht h;
    memset(&h, 0, sizeof h);
    h.d.dtype = WGNN_F32;
    h.d.rank = rank;
    for (int i = 0; i < rank; i++) h.d.dims[i] = dims[i];
    h.p = calloc(MAXN, sizeof(float));
    return h;
}

static size_t ht_n(const ht *h) {
    size_t n = 1;
    for (int i = 0; i < h->d.rank; i++) n *= (size_t)h->d.dims[i];
    return n;
}

static ht ht_rand(int rank, const int64_t *dims, float lo, float hi) {
    ht h = ht_new(rank, dims);
    tu_fill(h.p, ht_n(&h), lo, hi);
    return h;
}

/* The same data with another shape (a copy the caller frees). */
static ht ht_view(const ht *src, int rank, const int64_t *dims) {
    ht h = ht_new(rank, dims);
    memcpy(h.p, src->p, ht_n(src) * sizeof(float));
    return h;
}

/* Runs op's reference; out[] gets fresh host tensors; returns the count. */
static int href(const char *op, const ht *in, int n_in, const char *const *args, int n_args, ht *out) {
    wgnn_desc din[8], dout[8];
    wgnn_host_tensor hin[8], hout[8];
    char err[512] = "";
    int n_out = 0;
    for (int i = 0; i < n_in; i++) {
        din[i] = in[i].d;
        hin[i].desc = in[i].d;
        hin[i].data = in[i].p;
    }
    wgnn_status s = wgnn_op_shapes(op, din, n_in, args, n_args, dout, 8, &n_out, err, sizeof err);
    CHECK(s == WGNN_OK, "ref shapes %s: %s", op, err);
    if (s != WGNN_OK) return 0;
    for (int i = 0; i < n_out; i++) {
        out[i] = ht_new(dout[i].rank, dout[i].dims);
        hout[i].desc = dout[i];
        hout[i].data = out[i].p;
    }
    s = wgnn_op_ref(op, hin, n_in, args, n_args, hout, n_out, err, sizeof err);
    CHECK(s == WGNN_OK, "ref %s: %s", op, err);
    return n_out;
}

static wgnn_tensor *upload(wgnn_context *ctx, const ht *h) {
    wgnn_tensor *t = NULL;
    wgnn_status s = wgnn_tensor_create(ctx, WGNN_F32, h->d.rank, h->d.dims, &t);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, t, h->p, ht_n(h) * 4);
    CHECK(s == WGNN_OK, "upload: %s", wgnn_context_error(ctx));
    return t;
}

/* One op node with one output; returns its value (or -1). */
static wgnn_value gop(wgnn_graph *g, wgnn_context *ctx, const char *op, const wgnn_value *in, int n_in,
                      const char *const *args, int n_args) {
    wgnn_value out[8];
    int n_out = 0;
    wgnn_status s = wgnn_graph_op(g, op, in, n_in, args, n_args, out, 8, &n_out);
    CHECK(s == WGNN_OK && n_out >= 1, "graph_op %s: %s", op, wgnn_context_error(ctx));
    return s == WGNN_OK ? out[0] : -1;
}

static void compare_output(wgnn_graph *g, wgnn_context *ctx, wgnn_value v, const ht *ref, double tol,
                           const char *what) {
    size_t n = ht_n(ref);
    float *got = calloc(n, sizeof(float));
    wgnn_status s = wgnn_graph_read_output(g, v, got, n * 4);
    CHECK(s == WGNN_OK, "%s: read_output: %s", what, wgnn_context_error(ctx));
    double md = 0;
    if (s == WGNN_OK) CHECK(tu_close(got, ref->p, n, tol, tol, &md), "%s: max diff %g", what, md);
    free(got);
}

/* ---- (1) MLP-like chain, run twice --------------------------------------------- */

static void test_mlp(wgnn_context *ctx) {
    int64_t dx[2] = {5, 12}, dw1[2] = {16, 12}, db1[1] = {16}, dw2[2] = {12, 16}, db2[1] = {12};
    ht w1 = ht_rand(2, dw1, -0.5f, 0.5f), b1 = ht_rand(1, db1, -0.5f, 0.5f);
    ht w2 = ht_rand(2, dw2, -0.5f, 0.5f), b2 = ht_rand(1, db2, -0.5f, 0.5f);
    wgnn_tensor *tw1 = upload(ctx, &w1), *tb1 = upload(ctx, &b1), *tw2 = upload(ctx, &w2), *tb2 = upload(ctx, &b2);
    wgnn_graph *g = NULL;
    CHECK(wgnn_graph_create(ctx, &g) == WGNN_OK, "create: %s", wgnn_context_error(ctx));
    wgnn_value x, cw1, cb1, cw2, cb2;
    CHECK(wgnn_graph_input(g, "x", WGNN_F32, 2, dx, &x) == WGNN_OK, "input: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_constant(g, tw1, 1, &cw1) == WGNN_OK, "const: %s", wgnn_context_error(ctx)); /* taken */
    CHECK(wgnn_graph_constant(g, tb1, 0, &cb1) == WGNN_OK, "const: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_constant(g, tw2, 0, &cw2) == WGNN_OK, "const: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_constant(g, tb2, 0, &cb2) == WGNN_OK, "const: %s", wgnn_context_error(ctx));
    wgnn_value a1[3] = {x, cw1, cb1};
    wgnn_value h = gop(g, ctx, "linear", a1, 3, NULL, 0);
    wgnn_graph_set_label(g, h, "mlp.fc1");
    wgnn_value gg = gop(g, ctx, "gelu", &h, 1, NULL, 0);
    wgnn_value a2[3] = {gg, cw2, cb2};
    wgnn_value y = gop(g, ctx, "linear", a2, 3, NULL, 0);
    wgnn_graph_set_label(g, y, "mlp.fc2");
    wgnn_value a3[2] = {y, x};
    wgnn_value o = gop(g, ctx, "add", a3, 2, NULL, 0);
    CHECK(wgnn_graph_output(g, o) == WGNN_OK, "output: %s", wgnn_context_error(ctx));
    wgnn_desc od;
    CHECK(wgnn_graph_desc(g, o, &od) == WGNN_OK && od.rank == 2 && od.dims[0] == 5 && od.dims[1] == 12, "desc");
    wgnn_status s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "build: %s", wgnn_context_error(ctx));
    for (int run = 0; run < 2 && s == WGNN_OK; run++) {
        ht hx = ht_rand(2, dx, -1, 1), r[4][1];
        CHECK(wgnn_graph_set_input(g, x, hx.p, ht_n(&hx) * 4) == WGNN_OK, "set_input: %s", wgnn_context_error(ctx));
        int profile = run == 1;
        s = wgnn_graph_run(g, profile);
        CHECK(s == WGNN_OK, "run %d: %s", run, wgnn_context_error(ctx));
        ht i1[3] = {hx, w1, b1};
        href("linear", i1, 3, NULL, 0, r[0]);
        href("gelu", r[0], 1, NULL, 0, r[1]);
        ht i2[3] = {r[1][0], w2, b2};
        href("linear", i2, 3, NULL, 0, r[2]);
        ht i3[2] = {r[2][0], hx};
        href("add", i3, 2, NULL, 0, r[3]);
        compare_output(g, ctx, o, &r[3][0], 1e-4, run ? "mlp, second run" : "mlp, first run");
        for (int k = 0; k < 4; k++) free(r[k][0].p);
        free(hx.p);
        /* (5) profile */
        if (profile) {
            const wgnn_graph_prof *recs = NULL;
            int n = 0;
            uint64_t total = 0;
            wgnn_status ps = wgnn_graph_profile(g, &recs, &n, &total);
            if (!wgnn_context_has_timestamps(ctx)) {
                printf("note: no timestamp queries on this device; profile checks skipped\n");
                CHECK(ps == WGNN_ERR_UNSUPPORTED, "profile without timestamps: %d", (int)ps);
            } else {
                CHECK(ps == WGNN_OK && n == 4, "profile: %d records: %s", n, wgnn_context_error(ctx));
                for (int k = 0; ps == WGNN_OK && k < n; k++) {
                    CHECK(recs[k].node == k && recs[k].dispatches >= 1 && recs[k].op && recs[k].label,
                          "profile record %d", k);
                    printf("  node %d %-8s %-8s %d dispatches %llu ns\n", k, recs[k].op, recs[k].label,
                           recs[k].dispatches, (unsigned long long)recs[k].gpu_ns);
                }
                CHECK(ps == WGNN_OK && strcmp(recs[0].label, "mlp.fc1") == 0 && strcmp(recs[1].label, "") == 0 &&
                          strcmp(recs[3].op, "add") == 0 && recs[3].value == o,
                      "profile labels");
            }
        } else {
            const wgnn_graph_prof *recs = NULL;
            int n = 0;
            wgnn_status ps = wgnn_graph_profile(g, &recs, &n, NULL);
            CHECK(ps != WGNN_OK, "profile of an unprofiled run must fail");
        }
    }
    wgnn_graph_stats st;
    CHECK(wgnn_graph_get_stats(g, &st) == WGNN_OK, "stats");
    CHECK(st.n_nodes == 4 && st.n_inputs == 1 && st.n_outputs == 1 && st.n_values == 9 && st.n_dispatches >= 4 &&
              st.constant_bytes == (16 * 12 + 16 + 12 * 16 + 12) * 4 && st.io_bytes == 2 * 5 * 12 * 4 &&
              st.uniform_bytes > 0,
          "mlp stats: values %d nodes %d dispatches %d const %llu io %llu", st.n_values, st.n_nodes, st.n_dispatches,
          (unsigned long long)st.constant_bytes, (unsigned long long)st.io_bytes);
    wgnn_tensor *ti = NULL, *to = NULL;
    CHECK(wgnn_graph_tensor(g, x, &ti) == WGNN_OK && ti && wgnn_tensor_numel(ti) == 60, "graph_tensor(input)");
    CHECK(wgnn_graph_tensor(g, o, &to) == WGNN_OK && to && wgnn_tensor_numel(to) == 60, "graph_tensor(output)");
    CHECK(wgnn_graph_tensor(g, h, &to) == WGNN_ERR_INVALID_ARGUMENT, "graph_tensor(intermediate) must fail");
    wgnn_graph_destroy(g);
    wgnn_tensor_destroy(tb1);
    wgnn_tensor_destroy(tw2);
    wgnn_tensor_destroy(tb2);
    free(w1.p), free(b1.p), free(w2.p), free(b2.p);
}

/* ---- (2) views, permute, softmax, cat, split_with_sizes -------------------------- */

static void test_views(wgnn_context *ctx) {
    int64_t da[3] = {2, 3, 4}, d64[2] = {6, 4}, d46[2] = {4, -1}, d46r[2] = {4, 6}, dflat[1] = {48};
    ht a = ht_rand(3, da, -2, 2);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value x, v64, v46, vflat;
    CHECK(wgnn_graph_input(g, "a", WGNN_F32, 3, da, &x) == WGNN_OK, "input");
    CHECK(wgnn_graph_view(g, x, 2, d64, &v64) == WGNN_OK, "view: %s", wgnn_context_error(ctx));
    const char *pa[1] = {"dims=1,0"}, *sa[1] = {"dim=-1"}, *ca[1] = {"dim=0"}, *spa[2] = {"split_sizes=3,5", "dim=0"};
    wgnn_value p = gop(g, ctx, "permute", &v64, 1, pa, 1);
    wgnn_value sm = gop(g, ctx, "softmax", &p, 1, sa, 1);
    wgnn_value smv;
    CHECK(wgnn_graph_view(g, sm, 2, d46, &v46) == WGNN_OK, "view -1: %s", wgnn_context_error(ctx));
    wgnn_desc vd;
    CHECK(wgnn_graph_desc(g, v46, &vd) == WGNN_OK && vd.dims[1] == 6, "inferred dim %lld", (long long)vd.dims[1]);
    int64_t d24[2] = {2, 12};
    CHECK(wgnn_graph_view(g, sm, 2, d24, &smv) == WGNN_OK, "view of op output");
    wgnn_value smvv;
    CHECK(wgnn_graph_view(g, smv, 2, d46r, &smvv) == WGNN_OK, "view of a view");
    wgnn_value xv;
    CHECK(wgnn_graph_view(g, x, 2, d46r, &xv) == WGNN_OK, "view of input");
    wgnn_value cin[2] = {smvv, xv};
    wgnn_value c = gop(g, ctx, "cat", cin, 2, ca, 1); /* [8, 6] */
    wgnn_value parts[4];
    int np = 0;
    wgnn_status s = wgnn_graph_op(g, "split_with_sizes", &c, 1, spa, 2, parts, 4, &np);
    CHECK(s == WGNN_OK && np == 2, "split: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_view(g, c, 1, dflat, &vflat) == WGNN_OK, "flat view");
    wgnn_graph_output(g, parts[0]);
    wgnn_graph_output(g, parts[1]);
    wgnn_graph_output(g, vflat); /* a view as output: its root keeps a buffer of its own */
    s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "build: %s", wgnn_context_error(ctx));
    if (s == WGNN_OK) {
        wgnn_graph_set_input(g, x, a.p, ht_n(&a) * 4);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "run: %s", wgnn_context_error(ctx));
    }
    if (s == WGNN_OK) {
        ht r1[1], r2[1], r3[1], r4[2];
        ht a64 = ht_view(&a, 2, d64);
        href("permute", &a64, 1, pa, 1, r1);
        href("softmax", r1, 1, sa, 1, r2);
        ht a46 = ht_view(&a, 2, d46r);
        ht cat_in[2] = {r2[0], a46};
        href("cat", cat_in, 2, ca, 1, r3);
        href("split_with_sizes", r3, 1, spa, 2, r4);
        compare_output(g, ctx, parts[0], &r4[0], 1e-5, "split part 0");
        compare_output(g, ctx, parts[1], &r4[1], 1e-5, "split part 1");
        ht flat = ht_view(&r3[0], 1, dflat);
        compare_output(g, ctx, vflat, &flat, 1e-5, "flat view of cat");
        free(a64.p), free(a46.p), free(r1[0].p), free(r2[0].p), free(r3[0].p), free(r4[0].p), free(r4[1].p),
            free(flat.p);
    }
    wgnn_graph_destroy(g);
    free(a.p);
}

/* ---- (3) liveness ------------------------------------------------------------------ */

static void test_liveness(wgnn_context *ctx) {
    int64_t d[2] = {8, 33};
    ht hx = ht_rand(2, d, -1, 1);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value x, y;
    wgnn_graph_input(g, "x", WGNN_F32, 2, d, &x);
    const char *alpha[1] = {"alpha=0.5"};
    y = x;
    for (int i = 0; i < 10; i++) {
        if (i % 2 == 0) {
            y = gop(g, ctx, "tanh", &y, 1, NULL, 0);
        } else {
            wgnn_value in[2] = {y, x};
            y = gop(g, ctx, "add", in, 2, alpha, 1);
        }
    }
    wgnn_graph_output(g, y);
    wgnn_status s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "build: %s", wgnn_context_error(ctx));
    wgnn_graph_stats st;
    memset(&st, 0, sizeof st);
    wgnn_graph_get_stats(g, &st);
    printf("  chain of 10: %d pooled buffers, peak %llu bytes, unplanned %llu\n", st.n_pool_buffers,
           (unsigned long long)st.peak_bytes, (unsigned long long)st.unplanned_bytes);
    CHECK(st.n_pool_buffers <= 3 && st.peak_bytes < st.unplanned_bytes && st.unplanned_bytes == 10ull * 8 * 33 * 4,
          "liveness: %d pooled buffers, peak %llu, unplanned %llu", st.n_pool_buffers,
          (unsigned long long)st.peak_bytes, (unsigned long long)st.unplanned_bytes);
    if (s == WGNN_OK) {
        wgnn_graph_set_input(g, x, hx.p, ht_n(&hx) * 4);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "run: %s", wgnn_context_error(ctx));
    }
    if (s == WGNN_OK) {
        ht cur = ht_view(&hx, 2, d), r[1];
        for (int i = 0; i < 10; i++) {
            if (i % 2 == 0) {
                href("tanh", &cur, 1, NULL, 0, r);
            } else {
                ht in[2] = {cur, hx};
                href("add", in, 2, alpha, 1, r);
            }
            free(cur.p);
            cur = r[0];
        }
        compare_output(g, ctx, y, &cur, 1e-5, "chain of 10");
        free(cur.p);
    }
    wgnn_graph_destroy(g);
    free(hx.p);
}

/* Values of different sizes in one pooled buffer: a small value lands in the
 * buffer a large one used, and the kernels that read lengths from
 * arrayLength (gather: slice, cat) must see the value's size, not the buffer's. */
static void test_pool_sizes(wgnn_context *ctx) {
    int64_t d[1] = {64};
    ht hx = ht_rand(1, d, -1, 1);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value x;
    wgnn_graph_input(g, "x", WGNN_F32, 1, d, &x);
    const char *ca[1] = {"dim=0"}, *sl[3] = {"dim=0", "start=3", "end=13"};
    wgnn_value four[4] = {x, x, x, x};
    wgnn_value big = gop(g, ctx, "cat", four, 4, ca, 1);   /* [256] */
    wgnn_value s = gop(g, ctx, "slice", &big, 1, sl, 3);  /* [10] */
    wgnn_value t = gop(g, ctx, "tanh", &s, 1, NULL, 0);   /* [10], in big's buffer */
    wgnn_value ts[2] = {t, s};
    wgnn_value c = gop(g, ctx, "cat", ts, 2, ca, 1);      /* [20] */
    wgnn_value u = gop(g, ctx, "sigmoid", &c, 1, NULL, 0);
    wgnn_graph_output(g, u);
    wgnn_status st = wgnn_graph_build(g);
    CHECK(st == WGNN_OK, "build: %s", wgnn_context_error(ctx));
    if (st == WGNN_OK) {
        wgnn_graph_set_input(g, x, hx.p, ht_n(&hx) * 4);
        st = wgnn_graph_run(g, 0);
        CHECK(st == WGNN_OK, "run: %s", wgnn_context_error(ctx));
    }
    if (st == WGNN_OK) {
        ht r0[1], r1[1], r2[1], r3[1], r4[1];
        ht in4[4] = {hx, hx, hx, hx};
        href("cat", in4, 4, ca, 1, r0);
        href("slice", r0, 1, sl, 3, r1);
        href("tanh", r1, 1, NULL, 0, r2);
        ht in2[2] = {r2[0], r1[0]};
        href("cat", in2, 2, ca, 1, r3);
        href("sigmoid", r3, 1, NULL, 0, r4);
        compare_output(g, ctx, u, &r4[0], 1e-5, "mixed sizes in pooled buffers");
        free(r0[0].p), free(r1[0].p), free(r2[0].p), free(r3[0].p), free(r4[0].p);
    }
    wgnn_graph_destroy(g);
    free(hx.p);
}

/* ---- (4) conv2d (im2col scratch) and sdpa ---------------------------------------------- */

static void test_conv_sdpa(wgnn_context *ctx) {
    int64_t dx[4] = {1, 3, 8, 8}, dw[4] = {4, 3, 3, 3}, db[1] = {4};
    ht hx = ht_rand(4, dx, -1, 1), hw = ht_rand(4, dw, -0.5f, 0.5f), hb = ht_rand(1, db, -0.5f, 0.5f);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value x, w, b;
    wgnn_graph_input(g, "image", WGNN_F32, 4, dx, &x);
    wgnn_graph_constant(g, upload(ctx, &hw), 1, &w);
    wgnn_graph_constant(g, upload(ctx, &hb), 1, &b);
    const char *cargs[1] = {"padding=1"};
    wgnn_value cin[3] = {x, w, b};
    wgnn_value cv = gop(g, ctx, "conv2d", cin, 3, cargs, 1); /* [1, 4, 8, 8]: B=1, H=4, S=8, D=8 */
    wgnn_value qkv[3] = {cv, cv, cv};
    const char *sargs[1] = {"impl=three-pass"};
    wgnn_value at = gop(g, ctx, "sdpa", qkv, 3, sargs, 1);
    wgnn_graph_output(g, cv);
    wgnn_graph_output(g, at);
    wgnn_status s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "build: %s", wgnn_context_error(ctx));
    wgnn_graph_stats st;
    memset(&st, 0, sizeof st);
    wgnn_graph_get_stats(g, &st);
    CHECK(st.scratch_bytes > 0, "conv2d/sdpa scratch: %llu bytes", (unsigned long long)st.scratch_bytes);
    if (s == WGNN_OK) {
        wgnn_graph_set_input(g, x, hx.p, ht_n(&hx) * 4);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "run: %s", wgnn_context_error(ctx));
    }
    if (s == WGNN_OK) {
        ht r1[1], r2[1];
        ht i1[3] = {hx, hw, hb};
        href("conv2d", i1, 3, cargs, 1, r1);
        ht i2[3] = {r1[0], r1[0], r1[0]};
        href("sdpa", i2, 3, sargs, 1, r2);
        compare_output(g, ctx, cv, &r1[0], 1e-4, "conv2d");
        compare_output(g, ctx, at, &r2[0], 1e-4, "sdpa");
        free(r1[0].p), free(r2[0].p);
    }
    wgnn_graph_destroy(g);
    free(hx.p), free(hw.p), free(hb.p);
}

/* A long graph: more nodes than one timestamp query set holds (2048). */
static void test_long(wgnn_context *ctx) {
    enum { N = 2100 };
    int64_t d[1] = {8};
    float hx[8] = {-3, -1, 0, 1, 2, 3, 4, -5}, got[8] = {0};
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value x, y;
    wgnn_graph_input(g, "x", WGNN_F32, 1, d, &x);
    y = x;
    for (int i = 0; i < N; i++) y = gop(g, ctx, "relu", &y, 1, NULL, 0);
    wgnn_graph_output(g, y);
    wgnn_status s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "long build: %s", wgnn_context_error(ctx));
    if (s == WGNN_OK) {
        wgnn_graph_set_input(g, x, hx, sizeof hx);
        s = wgnn_graph_run(g, 1);
        CHECK(s == WGNN_OK, "long run: %s", wgnn_context_error(ctx));
    }
    if (s == WGNN_OK) {
        CHECK(wgnn_graph_read_output(g, y, got, sizeof got) == WGNN_OK && got[0] == 0 && got[4] == 2 && got[7] == 0,
              "relu^%d", N);
        const wgnn_graph_prof *recs = NULL;
        int n = 0;
        uint64_t total = 0;
        if (wgnn_context_has_timestamps(ctx)) {
            CHECK(wgnn_graph_profile(g, &recs, &n, &total) == WGNN_OK && n == N && recs[N - 1].node == N - 1 &&
                      recs[N - 1].dispatches >= 1 && total > 0,
                  "long profile: %d records, total %llu", n, (unsigned long long)total);
        }
    }
    wgnn_graph_stats st;
    wgnn_graph_get_stats(g, &st);
    CHECK(st.n_pool_buffers <= 2, "long chain: %d pooled buffers", st.n_pool_buffers);
    wgnn_graph_destroy(g);
}

static int has(const char *msg, const char *part) { return strstr(msg, part) != NULL; }

/* ---- (6) state: op_into and index_copy in place (a KV cache) ------------------------------ */

static void test_state(wgnn_context *ctx) {
    /* cache [1, 2, 6, 4] as a constant; each run writes two rows (positions
     * from an input) in place and reads the whole cache after the write. */
    int64_t cd[4] = {1, 2, 6, 4}, sd[4] = {1, 2, 2, 4}, pd[1] = {2};
    float host_cache[48], want[48], got[48], src[16];
    for (int i = 0; i < 48; i++) host_cache[i] = want[i] = (float)(100 + i);
    wgnn_tensor *cache = NULL;
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &cache);
    wgnn_tensor_upload(ctx, cache, host_cache, sizeof host_cache);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value c, pos, x, y;
    wgnn_graph_constant(g, cache, 0, &c);
    wgnn_graph_input(g, "pos", WGNN_I32, 1, pd, &pos);
    wgnn_graph_input(g, "x", WGNN_F32, 4, sd, &x);
    const char *dim2[1] = {"dim=2"};
    wgnn_value before = gop(g, ctx, "relu", &c, 1, NULL, 0); /* reads the old contents */
    wgnn_status s = wgnn_graph_op_into(g, "index_copy", (wgnn_value[]){c, pos, x}, 3, dim2, 1, c);
    CHECK(s == WGNN_OK, "op_into index_copy: %s", wgnn_context_error(ctx));
    y = gop(g, ctx, "relu", &c, 1, NULL, 0); /* reads the new contents */
    wgnn_graph_output(g, before);
    wgnn_graph_output(g, y);
    s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "state build: %s", wgnn_context_error(ctx));
    for (int run = 0; s == WGNN_OK && run < 3; run++) {
        int32_t p[2] = {run * 2, run * 2 + 1};
        if (run == 2) p[0] = 5, p[1] = 0; /* out of order */
        float old[48];
        memcpy(old, want, sizeof old);
        for (int i = 0; i < 16; i++) src[i] = (float)(run * 16 + i + 1);
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 2; j++)
                for (int e = 0; e < 4; e++) want[(h * 6 + p[j]) * 4 + e] = src[(h * 2 + j) * 4 + e];
        wgnn_graph_set_input(g, pos, p, sizeof p);
        wgnn_graph_set_input(g, x, src, sizeof src);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "state run %d: %s", run, wgnn_context_error(ctx));
        if (s != WGNN_OK) break;
        wgnn_graph_read_output(g, before, got, sizeof got);
        CHECK(memcmp(got, old, sizeof got) == 0, "state run %d: the node before the write saw new data", run);
        wgnn_graph_read_output(g, y, got, sizeof got);
        CHECK(memcmp(got, want, sizeof got) == 0, "state run %d: cache after the write differs", run);
    }
    wgnn_tensor_download(ctx, cache, got, sizeof got);
    CHECK(memcmp(got, want, sizeof got) == 0, "state: the constant's own data differs");

    /* an index out of range: nothing written, the run reports it */
    int32_t bad[2] = {1, 6};
    wgnn_graph_set_input(g, pos, bad, sizeof bad);
    s = wgnn_graph_run(g, 0);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "out of range"),
          "state: index 6 of 6 gave %d (%s)", (int)s, wgnn_context_error(ctx));
    wgnn_graph_destroy(g);

    /* refused nodes */
    wgnn_graph_create(ctx, &g);
    wgnn_graph_constant(g, cache, 0, &c);
    wgnn_graph_input(g, "pos", WGNN_I32, 1, pd, &pos);
    wgnn_graph_input(g, "x", WGNN_F32, 4, sd, &x);
    wgnn_value r = gop(g, ctx, "relu", &c, 1, NULL, 0);
    s = wgnn_graph_op_into(g, "relu", &c, 1, NULL, 0, r);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "must be an input or a constant"),
          "op_into an op output: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "relu", &x, 1, NULL, 0, c);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "but dst is float32 [1,2,6,4]"),
          "op_into a mis-shaped dst: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "relu", &c, 1, NULL, 0, c);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "does not work in place"),
          "op_into relu in place: %s", wgnn_context_error(ctx));
    wgnn_value cv;
    wgnn_graph_view(g, c, 2, (int64_t[]){12, 4}, &cv);
    int64_t xd2[2] = {12, 4};
    wgnn_value x2;
    wgnn_graph_input(g, "x2", WGNN_F32, 2, xd2, &x2);
    s = wgnn_graph_op_into(g, "add", (wgnn_value[]){x2, cv}, 2, NULL, 0, x2);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "input 0 reads dst"),
          "op_into add reading dst: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "index_copy", (wgnn_value[]){c, pos, x}, 3, dim2, 1, -1);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT, "op_into dst -1");
    wgnn_graph_destroy(g);

    /* eager: index_copy in place; other ops refuse an output that is an input */
    wgnn_tensor *ti = NULL, *tx = NULL;
    wgnn_tensor_create(ctx, WGNN_I32, 1, pd, &ti);
    wgnn_tensor_create(ctx, WGNN_F32, 4, sd, &tx);
    int32_t p2[2] = {3, 1};
    wgnn_tensor_upload(ctx, ti, p2, sizeof p2);
    for (int i = 0; i < 16; i++) src[i] = (float)(-1 - i);
    wgnn_tensor_upload(ctx, tx, src, sizeof src);
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 2; j++)
            for (int e = 0; e < 4; e++) want[(h * 6 + p2[j]) * 4 + e] = src[(h * 2 + j) * 4 + e];
    const wgnn_tensor *ein[3] = {cache, ti, tx};
    s = wgnn_op(ctx, "index_copy", ein, 3, dim2, 1, &cache, 1);
    CHECK(s == WGNN_OK, "eager index_copy in place: %s", wgnn_context_error(ctx));
    wgnn_tensor_download(ctx, cache, got, sizeof got);
    CHECK(memcmp(got, want, sizeof got) == 0, "eager index_copy in place: data differs");
    s = wgnn_op(ctx, "relu", ein, 1, NULL, 0, &cache, 1);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "output 0 is also input 0"),
          "eager relu in place: %s", wgnn_context_error(ctx));
    wgnn_tensor_destroy(ti);
    wgnn_tensor_destroy(tx);
    wgnn_tensor_destroy(cache);
}

/* A new graph with qkv_rope_cache's inputs: qkv, cos, sin, pos as inputs
 * (1 token, 2 heads on 1 of D = 4) and the caches tk, tv as constants. */
static wgnn_graph *rope_cache_graph(wgnn_context *ctx, wgnn_tensor *tk, wgnn_tensor *tv, wgnn_value in[6]) {
    int64_t qd[3] = {1, 1, 16}, td[2] = {1, 4}, pd[1] = {1};
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_graph_input(g, "qkv", WGNN_F32, 3, qd, &in[0]);
    wgnn_graph_input(g, "cos", WGNN_F32, 2, td, &in[1]);
    wgnn_graph_input(g, "sin", WGNN_F32, 2, td, &in[2]);
    wgnn_graph_input(g, "pos", WGNN_I32, 1, pd, &in[3]);
    wgnn_graph_constant(g, tk, 0, &in[4]);
    wgnn_graph_constant(g, tv, 0, &in[5]);
    return g;
}

/* qkv_rope_cache writing two caches in place (wgnn_graph_op_into_n): one
 * token a run at positions 3, 1, 4; the caches and q against the reference
 * run the same way. */
static void test_state_multi(wgnn_context *ctx) {
    int64_t qd[3] = {1, 1, 16}, td[2] = {1, 4}, cd[4] = {1, 1, 5, 4}, pd[1] = {1};
    const char *args[2] = {"num_heads=2", "num_kv_heads=1"};
    ht kc = ht_rand(4, cd, -1, 1), vc = ht_rand(4, cd, -1, 1);
    wgnn_tensor *tk = NULL, *tv = NULL;
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tk);
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tv);
    wgnn_tensor_upload(ctx, tk, kc.p, ht_n(&kc) * 4);
    wgnn_tensor_upload(ctx, tv, vc.p, ht_n(&vc) * 4);
    wgnn_value in[6], outs[3];
    wgnn_graph *g = rope_cache_graph(ctx, tk, tv, in);
    wgnn_value x = in[0], c = in[1], sn = in[2], pos = in[3], k = in[4], v = in[5];
    int n_out = 0;
    wgnn_status s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in, 6, args, 2, (wgnn_value[]){-1, k, v}, 3, outs, 3, &n_out);
    CHECK(s == WGNN_OK && n_out == 3 && outs[1] == k && outs[2] == v, "op_into_n qkv_rope_cache: %s",
          wgnn_context_error(ctx));
    wgnn_graph_output(g, outs[0]);
    s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "op_into_n build: %s", wgnn_context_error(ctx));
    static const int32_t order[3] = {3, 1, 4};
    for (int run = 0; s == WGNN_OK && run < 3; run++) {
        ht hx = ht_rand(3, qd, -1, 1), hc = ht_rand(2, td, -1, 1), hs = ht_rand(2, td, -1, 1), hp = ht_new(1, pd);
        hp.d.dtype = WGNN_I32;
        memcpy(hp.p, &order[run], 4);
        wgnn_graph_set_input(g, x, hx.p, ht_n(&hx) * 4);
        wgnn_graph_set_input(g, c, hc.p, ht_n(&hc) * 4);
        wgnn_graph_set_input(g, sn, hs.p, ht_n(&hs) * 4);
        wgnn_graph_set_input(g, pos, &order[run], 4);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "op_into_n run %d: %s", run, wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, hp, kc, vc}, r[3];
        int nr = href("qkv_rope_cache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            compare_output(g, ctx, outs[0], &r[0], 1e-5, "op_into_n q");
            float got[20];
            double md;
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, 20, 1e-5, 1e-5, &md), "op_into_n run %d: k cache differs by %g", run, md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, 20, 1e-5, 1e-5, &md), "op_into_n run %d: v cache differs by %g", run, md);
            memcpy(kc.p, r[1].p, 20 * 4); /* the reference's caches carry over too */
            memcpy(vc.p, r[2].p, 20 * 4);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        free(hx.p), free(hc.p), free(hs.p), free(hp.p);
    }
    wgnn_graph_destroy(g);

    /* refused: more dst values than outputs; an input reading a dst that is
     * not the output's in-place input; one dst for two outputs */
    wgnn_value in2[6];
    g = rope_cache_graph(ctx, tk, tv, in2);
    k = in2[4];
    v = in2[5];
    s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in2, 6, args, 2, (wgnn_value[]){-1, k, v, -1}, 4, outs, 3, &n_out);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "4 dst values for the op's 3 outputs"),
          "op_into_n 4 dst: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in2, 6, args, 2, (wgnn_value[]){-1, v, k}, 3, outs, 3, &n_out);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "reads dst"),
          "op_into_n swapped caches: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in2, 6, args, 2, (wgnn_value[]){-1, k, k}, 3, outs, 3, &n_out);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "have one dst"),
          "op_into_n one dst twice: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "qkv_rope_cache", in2, 6, args, 2, k);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "op_into takes one"),
          "op_into of a 3-output op: %s", wgnn_context_error(ctx));
    wgnn_graph_destroy(g);

    /* eager, in place: the caches passed as outputs 1 and 2 get only row 2
     * written; swapped (k_cache as output 2) is refused */
    {
        ht hx = ht_rand(3, qd, -1, 1), hc = ht_rand(2, td, -1, 1), hs = ht_rand(2, td, -1, 1), hp = ht_new(1, pd);
        hp.d.dtype = WGNN_I32;
        int32_t p2 = 2;
        memcpy(hp.p, &p2, 4);
        wgnn_tensor *ex = NULL, *ec = NULL, *es = NULL, *ep = NULL, *eq = NULL;
        wgnn_tensor_create(ctx, WGNN_F32, 3, qd, &ex);
        wgnn_tensor_create(ctx, WGNN_F32, 2, td, &ec);
        wgnn_tensor_create(ctx, WGNN_F32, 2, td, &es);
        wgnn_tensor_create(ctx, WGNN_I32, 1, pd, &ep);
        wgnn_tensor_create(ctx, WGNN_F32, 4, (int64_t[]){1, 2, 1, 4}, &eq);
        wgnn_tensor_upload(ctx, ex, hx.p, ht_n(&hx) * 4);
        wgnn_tensor_upload(ctx, ec, hc.p, ht_n(&hc) * 4);
        wgnn_tensor_upload(ctx, es, hs.p, ht_n(&hs) * 4);
        wgnn_tensor_upload(ctx, ep, &p2, 4);
        wgnn_tensor_download(ctx, tk, kc.p, ht_n(&kc) * 4); /* the caches as the runs above left them */
        wgnn_tensor_download(ctx, tv, vc.p, ht_n(&vc) * 4);
        const wgnn_tensor *ein[6] = {ex, ec, es, ep, tk, tv};
        s = wgnn_op(ctx, "qkv_rope_cache", ein, 6, args, 2, (wgnn_tensor *[]){eq, tk, tv}, 3);
        CHECK(s == WGNN_OK, "eager qkv_rope_cache in place: %s", wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, hp, kc, vc}, r[3];
        int nr = href("qkv_rope_cache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            float got[20];
            double md;
            wgnn_tensor_download(ctx, eq, got, 8 * sizeof(float));
            CHECK(tu_close(got, r[0].p, 8, 1e-5, 1e-5, &md), "eager in place: q differs by %g", md);
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, 20, 1e-5, 1e-5, &md), "eager in place: k cache differs by %g", md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, 20, 1e-5, 1e-5, &md), "eager in place: v cache differs by %g", md);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        s = wgnn_op(ctx, "qkv_rope_cache", ein, 6, args, 2, (wgnn_tensor *[]){eq, tv, tk}, 3);
        CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "is also input"),
              "eager qkv_rope_cache with swapped caches: %s", wgnn_context_error(ctx));
        wgnn_tensor *ts[5] = {ex, ec, es, ep, eq};
        for (int i = 0; i < 5; i++) wgnn_tensor_destroy(ts[i]);
        free(hx.p), free(hc.p), free(hs.p), free(hp.p);
    }
    free(kc.p);
    free(vc.p);
    wgnn_tensor_destroy(tk);
    wgnn_tensor_destroy(tv);
}

/* qkv_sdpa_kvcache as a decoder runs it: one graph, the caches constants
 * written in place (wgnn_graph_op_into_n), one token a run at cache
 * lengths 1..4 (the decode kernel's QKV mode where the adapter has it);
 * the attention and both caches against the reference run the same way,
 * its caches carried over. Then eager in place with two tokens. */
static void test_state_attention(wgnn_context *ctx) {
    int64_t qd[3] = {1, 1, 128}, td[2] = {6, 16}, cd[4] = {1, 2, 6, 16}, ld[1] = {1};
    const char *args[2] = {"num_heads=4", "num_kv_heads=2"};
    enum { NC = 2 * 6 * 16 };
    ht kc = ht_rand(4, cd, -1, 1), vc = ht_rand(4, cd, -1, 1), hc = ht_rand(2, td, -1, 1), hs = ht_rand(2, td, -1, 1);
    wgnn_tensor *tk = NULL, *tv = NULL;
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tk);
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tv);
    wgnn_tensor_upload(ctx, tk, kc.p, NC * 4);
    wgnn_tensor_upload(ctx, tv, vc.p, NC * 4);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value in[6], outs[3];
    wgnn_graph_input(g, "qkv", WGNN_F32, 3, qd, &in[0]);
    wgnn_graph_input(g, "cos", WGNN_F32, 2, td, &in[1]);
    wgnn_graph_input(g, "sin", WGNN_F32, 2, td, &in[2]);
    wgnn_graph_constant(g, tk, 0, &in[3]);
    wgnn_graph_constant(g, tv, 0, &in[4]);
    wgnn_graph_input(g, "cache_seqlens", WGNN_I32, 1, ld, &in[5]);
    int n_out = 0;
    wgnn_status s = wgnn_graph_op_into_n(g, "qkv_sdpa_kvcache", in, 6, args, 2, (wgnn_value[]){-1, in[3], in[4]}, 3,
                                         outs, 3, &n_out);
    CHECK(s == WGNN_OK && n_out == 3 && outs[1] == in[3] && outs[2] == in[4], "op_into_n qkv_sdpa_kvcache: %s",
          wgnn_context_error(ctx));
    wgnn_graph_output(g, outs[0]);
    if (s == WGNN_OK) s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "qkv_sdpa_kvcache graph build: %s", wgnn_context_error(ctx));
    for (int32_t len = 1; s == WGNN_OK && len <= 4; len++) {
        ht hx = ht_rand(3, qd, -1, 1), hl = ht_new(1, ld);
        hl.d.dtype = WGNN_I32;
        memcpy(hl.p, &len, 4);
        wgnn_graph_set_input(g, in[0], hx.p, ht_n(&hx) * 4);
        wgnn_graph_set_input(g, in[1], hc.p, ht_n(&hc) * 4);
        wgnn_graph_set_input(g, in[2], hs.p, ht_n(&hs) * 4);
        wgnn_graph_set_input(g, in[5], &len, 4);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "qkv_sdpa_kvcache run at length %d: %s", len, wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, kc, vc, hl}, r[3];
        int nr = href("qkv_sdpa_kvcache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            compare_output(g, ctx, outs[0], &r[0], 1e-5, "qkv_sdpa_kvcache attention");
            float got[NC];
            double md;
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, NC, 1e-5, 1e-5, &md), "length %d: k cache differs by %g", len, md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, NC, 1e-5, 1e-5, &md), "length %d: v cache differs by %g", len, md);
            memcpy(kc.p, r[1].p, NC * 4);
            memcpy(vc.p, r[2].p, NC * 4);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        free(hx.p), free(hl.p);
    }
    wgnn_graph_destroy(g);

    /* eager, in place, two tokens at length 6 (rows 4 and 5) */
    {
        int64_t qd2[3] = {1, 2, 128};
        int32_t len = 6;
        ht hx = ht_rand(3, qd2, -1, 1), hl = ht_new(1, ld);
        hl.d.dtype = WGNN_I32;
        memcpy(hl.p, &len, 4);
        wgnn_tensor *ex = NULL, *ec = NULL, *es = NULL, *el = NULL, *eo = NULL;
        wgnn_tensor_create(ctx, WGNN_F32, 3, qd2, &ex);
        wgnn_tensor_create(ctx, WGNN_F32, 2, td, &ec);
        wgnn_tensor_create(ctx, WGNN_F32, 2, td, &es);
        wgnn_tensor_create(ctx, WGNN_I32, 1, ld, &el);
        wgnn_tensor_create(ctx, WGNN_F32, 4, (int64_t[]){1, 4, 2, 16}, &eo);
        wgnn_tensor_upload(ctx, ex, hx.p, ht_n(&hx) * 4);
        wgnn_tensor_upload(ctx, ec, hc.p, ht_n(&hc) * 4);
        wgnn_tensor_upload(ctx, es, hs.p, ht_n(&hs) * 4);
        wgnn_tensor_upload(ctx, el, &len, 4);
        wgnn_tensor_download(ctx, tk, kc.p, NC * 4); /* the caches as the runs above left them */
        wgnn_tensor_download(ctx, tv, vc.p, NC * 4);
        const wgnn_tensor *ein[6] = {ex, ec, es, tk, tv, el};
        s = wgnn_op(ctx, "qkv_sdpa_kvcache", ein, 6, args, 2, (wgnn_tensor *[]){eo, tk, tv}, 3);
        CHECK(s == WGNN_OK, "eager qkv_sdpa_kvcache in place: %s", wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, kc, vc, hl}, r[3];
        int nr = href("qkv_sdpa_kvcache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            float got[NC];
            double md;
            wgnn_tensor_download(ctx, eo, got, 128 * sizeof(float));
            CHECK(tu_close(got, r[0].p, 128, 1e-5, 1e-5, &md), "eager in place: attention differs by %g", md);
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, NC, 1e-5, 1e-5, &md), "eager in place: k cache differs by %g", md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, NC, 1e-5, 1e-5, &md), "eager in place: v cache differs by %g", md);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        wgnn_tensor *ts[5] = {ex, ec, es, el, eo};
        for (int i = 0; i < 5; i++) wgnn_tensor_destroy(ts[i]);
        free(hx.p), free(hl.p);
    }
    free(kc.p), free(vc.p), free(hc.p), free(hs.p);
    wgnn_tensor_destroy(tk);
    wgnn_tensor_destroy(tv);
}

/* ---- (7) errors ------------------------------------------------------------------------ */

static void test_errors(wgnn_context *ctx) {
    int64_t d[2] = {5, 12}, d2[2] = {7, 3}, bad[2] = {7, 7};
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value x, x2, o, tmp[4];
    int n = 0;
    wgnn_graph_input(g, "x", WGNN_F32, 2, d, &x);
    wgnn_graph_input(g, "x2", WGNN_F32, 2, d2, &x2);
    wgnn_value badv[1] = {99};
    CHECK(wgnn_graph_op(g, "relu", badv, 1, NULL, 0, tmp, 4, &n) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "value 99"),
          "bad value id: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_op(g, "nope", &x, 1, NULL, 0, tmp, 4, &n) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "unknown op"),
          "unknown op: %s", wgnn_context_error(ctx));
    wgnn_value mm[2] = {x, x2};
    CHECK(wgnn_graph_op(g, "add", mm, 2, NULL, 0, tmp, 4, &n) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "graph node 0") && has(wgnn_context_error(ctx), "add"),
          "shape mismatch: %s", wgnn_context_error(ctx));
    printf("  shape mismatch says: %s\n", wgnn_context_error(ctx));
    CHECK(wgnn_graph_view(g, x, 2, bad, tmp) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "60"),
          "view count: %s", wgnn_context_error(ctx));
    int64_t two_infer[2] = {-1, -1};
    CHECK(wgnn_graph_view(g, x, 2, two_infer, tmp) == WGNN_ERR_INVALID_ARGUMENT, "two -1 dims");
    CHECK(wgnn_graph_run(g, 0) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "build"),
          "run before build: %s", wgnn_context_error(ctx));
    o = gop(g, ctx, "relu", &x, 1, NULL, 0);
    wgnn_value mid = gop(g, ctx, "sigmoid", &o, 1, NULL, 0);
    wgnn_value o2 = gop(g, ctx, "relu", &mid, 1, NULL, 0);
    wgnn_graph_output(g, o2);
    /* a constant of another context */
    wgnn_context *ctx2 = NULL;
    if (wgnn_context_create(NULL, &ctx2) == WGNN_OK) {
        wgnn_tensor *t2 = NULL;
        wgnn_tensor_create(ctx2, WGNN_F32, 2, d, &t2);
        wgnn_value c;
        CHECK(wgnn_graph_constant(g, t2, 0, &c) == WGNN_ERR_INVALID_ARGUMENT &&
                  has(wgnn_context_error(ctx), "another context"),
              "foreign constant: %s", wgnn_context_error(ctx));
        wgnn_tensor_destroy(t2);
    }
    wgnn_context_destroy(ctx2);
    CHECK(wgnn_graph_build(g) == WGNN_OK, "build: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_build(g) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "already built"),
          "build twice: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_op(g, "relu", &x, 1, NULL, 0, tmp, 4, &n) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "built"),
          "op after build: %s", wgnn_context_error(ctx));
    float buf[60] = {0};
    CHECK(wgnn_graph_set_input(g, o, buf, sizeof buf) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "not an input"),
          "set_input of non-input: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_set_input(g, x, buf, 12) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "240"),
          "set_input bytes: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_set_input(g, x, buf, sizeof buf) == WGNN_OK, "set_input");
    CHECK(wgnn_graph_read_output(g, o2, buf, sizeof buf) == WGNN_ERR_INVALID_ARGUMENT, "read before run");
    CHECK(wgnn_graph_run(g, 0) == WGNN_OK, "run: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_read_output(g, mid, buf, sizeof buf) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "not an output"),
          "read_output of non-output: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_read_output(g, o2, buf, sizeof buf) == WGNN_OK && fabsf(buf[0] - 0.5f) < 1e-6f,
          "relu(sigmoid(relu(0))) = 0.5: %g", buf[0]);
    wgnn_graph_destroy(g);
    wgnn_graph_destroy(NULL);

    /* a build failure (an op output past maxBufferSize): the graph can then
     * only be destroyed */
    wgnn_limits lim;
    wgnn_context_limits(ctx, &lim);
    if (lim.max_buffer_size < (1ull << 40)) {
        int64_t d1[1] = {1};
        char pad[64];
        snprintf(pad, sizeof pad, "pad=0,%llu", (unsigned long long)(lim.max_buffer_size / 4 + 16));
        const char *pargs[1] = {pad};
        g = NULL;
        wgnn_graph_create(ctx, &g);
        wgnn_value p1;
        wgnn_graph_input(g, "p", WGNN_F32, 1, d1, &p1);
        wgnn_value big = gop(g, ctx, "constant_pad_nd", &p1, 1, pargs, 1);
        wgnn_graph_output(g, big);
        CHECK(wgnn_graph_build(g) == WGNN_ERR_LIMIT && has(wgnn_context_error(ctx), "maxBufferSize") &&
                  has(wgnn_context_error(ctx), "graph node 0"),
              "build past maxBufferSize: %s", wgnn_context_error(ctx));
        CHECK(wgnn_graph_run(g, 0) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "failed to build"),
              "run after a failed build: %s", wgnn_context_error(ctx));
        CHECK(wgnn_graph_build(g) == WGNN_ERR_INVALID_ARGUMENT, "build after a failed build");
        wgnn_graph_destroy(g);
    } else {
        printf("note: maxBufferSize is %llu; build-failure check skipped\n", (unsigned long long)lim.max_buffer_size);
    }

    /* an embedding index out of range, found on the GPU inside a graph */
    int64_t dv[2] = {4, 3}, di[1] = {2};
    ht tab = ht_rand(2, dv, -1, 1);
    g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value wv, iv;
    wgnn_graph_constant(g, upload(ctx, &tab), 1, &wv);
    wgnn_graph_input(g, "ids", WGNN_I32, 1, di, &iv);
    wgnn_value ein[2] = {wv, iv};
    wgnn_value e = gop(g, ctx, "embedding", ein, 2, NULL, 0);
    wgnn_graph_output(g, e);
    CHECK(wgnn_graph_build(g) == WGNN_OK, "embedding build: %s", wgnn_context_error(ctx));
    int32_t ids_bad[2] = {1, 7}, ids_ok[2] = {3, 0};
    wgnn_graph_set_input(g, iv, ids_bad, sizeof ids_bad);
    CHECK(wgnn_graph_run(g, 0) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "out of range"),
          "embedding out of range: %s", wgnn_context_error(ctx));
    wgnn_graph_set_input(g, iv, ids_ok, sizeof ids_ok);
    CHECK(wgnn_graph_run(g, 0) == WGNN_OK, "embedding run: %s", wgnn_context_error(ctx));
    float rows[6] = {0};
    CHECK(wgnn_graph_read_output(g, e, rows, sizeof rows) == WGNN_OK && rows[0] == tab.p[9] && rows[5] == tab.p[2],
          "embedding rows");
    wgnn_graph_destroy(g);
    free(tab.p);
}

int main(void) {
    wgnn_context *ctx = tu_context();
    test_mlp(ctx);
    test_views(ctx);
    test_liveness(ctx);
    test_pool_sizes(ctx);
    test_conv_sdpa(ctx);
    test_long(ctx);
    test_state(ctx);
    test_state_multi(ctx);
    test_state_attention(ctx);
    test_errors(ctx);
    wgnn_context_destroy(ctx);
    return tu_finish();
}
