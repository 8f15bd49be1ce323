/* test_graph.c - the graph runtime against the CPU references (wgnn_op_ref
 * per node, chained on the host):
 *   - an MLP-like chain run twice with new inputs (buffers and bind groups reused);
 *   - views (of inputs and of op outputs, -1 inferred), permute, softmax, cat
 *     and a multi-output op (split_with_sizes);
 *   - liveness: a chain of same-size elementwise ops shares few buffers;
 *   - an im2col conv2d (scratch) and a three-pass sdpa (scratch);
 *   - profiles;
 *   - state: in tests/graph_state.c (index_copy, qkv_rope_cache and
 *     qkv_sdpa_kvcache writing caches in place);
 *   - the error cases, and an embedding index out of range found on the GPU.
 * Shared pieces: test_graph.h. */
#include "test_graph.h"

int tu_pass, tu_fail;

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
    /* six runs, a new input each: plain, profiled, plain (records the next
     * run ahead), plain (submits the run recorded ahead, records one more),
     * a span run (the run recorded ahead is kept), plain (submits it) */
    for (int run = 0; run < 6 && s == WGNN_OK; run++) {
        ht hx = ht_rand(2, dx, -1, 1), r[4][1];
        CHECK(wgnn_graph_set_input(g, x, hx.p, ht_n(&hx) * 4) == WGNN_OK, "set_input: %s", wgnn_context_error(ctx));
        int profile = run == 1 ? 1 : run == 4 ? WGNN_PROFILE_SPAN : 0;
        s = wgnn_graph_run(g, profile);
        CHECK(s == WGNN_OK, "run %d: %s", run, wgnn_context_error(ctx));
        ht i1[3] = {hx, w1, b1};
        href("linear", i1, 3, NULL, 0, r[0]);
        href("gelu", r[0], 1, NULL, 0, r[1]);
        ht i2[3] = {r[1][0], w2, b2};
        href("linear", i2, 3, NULL, 0, r[2]);
        ht i3[2] = {r[2][0], hx};
        href("add", i3, 2, NULL, 0, r[3]);
        char what[32];
        snprintf(what, sizeof what, "mlp, run %d", run);
        compare_output(g, ctx, o, &r[3][0], 1e-4, what);
        for (int k = 0; k < 4; k++) free(r[k][0].p);
        free(hx.p);
        /* (5) profile */
        if (profile == 1) {
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
        } else if (profile == 0) {
            const wgnn_graph_prof *recs = NULL;
            int n = 0;
            wgnn_status ps = wgnn_graph_profile(g, &recs, &n, NULL);
            CHECK(ps != WGNN_OK, "profile of an unprofiled run must fail");
            /* the message names the flags that make a run profiled */
            CHECK(!wgnn_context_has_timestamps(ctx) || (ps == WGNN_ERR_INVALID_ARGUMENT &&
                                                         strstr(wgnn_context_error(ctx), "WGNN_PROFILE_NODES")),
                  "unprofiled run: %d %s", (int)ps, wgnn_context_error(ctx));
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
            /* a span run: the same results, no records, the one pass's GPU time */
            memset(got, 0, sizeof got);
            s = wgnn_graph_run(g, WGNN_PROFILE_SPAN);
            CHECK(s == WGNN_OK && wgnn_graph_read_output(g, y, got, sizeof got) == WGNN_OK && got[0] == 0 &&
                      got[4] == 2 && got[7] == 0,
                  "span run: %s", wgnn_context_error(ctx));
            total = 0;
            CHECK(wgnn_graph_profile(g, &recs, &n, &total) == WGNN_OK && n == 0 && total > 0,
                  "span profile: %d records, total %llu", n, (unsigned long long)total);
        }
    }
    wgnn_graph_stats st;
    wgnn_graph_get_stats(g, &st);
    CHECK(st.n_pool_buffers <= 2, "long chain: %d pooled buffers", st.n_pool_buffers);
    wgnn_graph_destroy(g);
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
    /* runs after the first submit pieces recorded ahead: the data error still
     * comes back with the run that made it, and only with that one */
    for (int r = 0; r < 3; r++) {
        bool wrong = r == 1;
        wgnn_graph_set_input(g, iv, wrong ? ids_bad : ids_ok, sizeof ids_ok);
        wgnn_status rs = wgnn_graph_run(g, 0);
        CHECK(wrong ? rs == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "out of range") : rs == WGNN_OK,
              "embedding run %d recorded ahead (%s ids): %s", r, wrong ? "wrong" : "good", wgnn_context_error(ctx));
    }
    memset(rows, 0, sizeof rows);
    CHECK(wgnn_graph_read_output(g, e, rows, sizeof rows) == WGNN_OK && rows[0] == tab.p[9] && rows[5] == tab.p[2],
          "embedding rows after runs recorded ahead");
    wgnn_graph_destroy(g);
    free(tab.p);
}

/* Tensors shared between values and graphs, and calls after the build
 * that used to corrupt memory (under ASan: use-after-free, double free). */
static void test_ownership(wgnn_context *ctx) {
    const int64_t d4[1] = {4};
    const float a[4] = {1, -2, 3, -4};
    wgnn_graph *g = NULL, *g2 = NULL;
    wgnn_tensor *t = NULL, *xt = NULL;
    wgnn_value x, c1, c2, o[2], cx;
    int n = 0;
    CHECK(wgnn_graph_create(ctx, &g) == WGNN_OK && wgnn_graph_create(ctx, &g2) == WGNN_OK, "graphs");
    CHECK(wgnn_tensor_create(ctx, WGNN_F32, 1, d4, &t) == WGNN_OK && wgnn_tensor_upload(ctx, t, a, sizeof a) == WGNN_OK,
          "tensor");
    /* one tensor, two constants: reading both is fine (a tied embedding),
     * writing one while reading the other is not */
    CHECK(wgnn_graph_constant(g, t, 0, &c1) == WGNN_OK && wgnn_graph_constant(g, t, 0, &c2) == WGNN_OK,
          "one tensor as two constants (take = 0)");
    CHECK(wgnn_graph_op_into(g, "relu", &c2, 1, NULL, 0, c1) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "reads dst"),
          "op_into a constant whose tensor another input reads: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_constant(g, t, 1, &c2) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "taken"),
          "a tensor already in the graph cannot also be taken: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_input(g, "x", WGNN_F32, 1, d4, &x) == WGNN_OK && wgnn_graph_tensor(g, x, &xt) == WGNN_OK, "input");
    CHECK(wgnn_graph_constant(g, xt, 0, &cx) == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "already"),
          "the graph's own tensor as a constant: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_constant(g2, xt, 1, &cx) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "another graph"),
          "another graph's tensor taken: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_constant(g2, xt, 0, &cx) == WGNN_OK, "another graph's tensor, not taken: %s",
          wgnn_context_error(ctx));
    wgnn_tensor_destroy(xt); /* a graph's tensor: left to its graph */
    /* NULL out and a NULL op name or argument: messages that say so */
    CHECK(wgnn_graph_op(g, "relu", &x, 1, NULL, 0, NULL, 4, &n) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "out is NULL"),
          "out NULL: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_op(g, NULL, &x, 1, NULL, 0, o, 2, &n) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "op (the op's name) is NULL"),
          "op NULL: %s", wgnn_context_error(ctx));
    const char *nul_arg[1] = {NULL};
    CHECK(wgnn_graph_op(g, "relu", &x, 1, nul_arg, 1, o, 2, &n) == WGNN_ERR_INVALID_ARGUMENT &&
              has(wgnn_context_error(ctx), "args[0] is NULL"),
          "args[0] NULL: %s", wgnn_context_error(ctx));
    wgnn_value y = gop(g, ctx, "relu", &x, 1, NULL, 0);
    CHECK(wgnn_graph_set_label(g, y, "first") == WGNN_OK && wgnn_graph_output(g, y) == WGNN_OK &&
              wgnn_graph_build(g) == WGNN_OK,
          "build: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_set_input(g, x, a, sizeof a) == WGNN_OK && wgnn_graph_run(g, WGNN_PROFILE_NODES) == WGNN_OK,
          "profiled run: %s", wgnn_context_error(ctx));
    const wgnn_graph_prof *recs = NULL;
    int nr = 0;
    CHECK(wgnn_graph_profile(g, &recs, &nr, NULL) == WGNN_OK && nr == 1, "profile: %s", wgnn_context_error(ctx));
    CHECK(wgnn_graph_set_label(g, y, "second") == WGNN_ERR_INVALID_ARGUMENT, "set_label after the build refused");
    if (nr == 1) CHECK(strcmp(recs[0].label, "first") == 0, "the profile's label stays valid: %s", recs[0].label);
    float got[4] = {0};
    CHECK(wgnn_graph_read_output(g, y, got, sizeof got) == WGNN_OK && got[0] == 1 && got[1] == 0 && got[2] == 3,
          "relu of the input");
    wgnn_graph_destroy(g2);
    wgnn_graph_destroy(g);
    wgnn_tensor_destroy(t);

    /* a profiled run of a graph without nodes: an empty profile */
    CHECK(wgnn_graph_create(ctx, &g) == WGNN_OK && wgnn_graph_input(g, "x", WGNN_F32, 1, d4, &x) == WGNN_OK &&
              wgnn_graph_output(g, x) == WGNN_OK && wgnn_graph_build(g) == WGNN_OK,
          "empty graph: %s", wgnn_context_error(ctx));
    uint64_t total = 1;
    nr = -1;
    CHECK(wgnn_graph_run(g, WGNN_PROFILE_NODES) == WGNN_OK &&
              wgnn_graph_profile(g, &recs, &nr, &total) == WGNN_OK && nr == 0 && total == 0,
          "an empty graph's profile: %d records, %llu ns: %s", nr, (unsigned long long)total, wgnn_context_error(ctx));
    wgnn_graph_destroy(g);
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
    test_ownership(ctx);
    wgnn_context_destroy(ctx);
    return tu_finish();
}
