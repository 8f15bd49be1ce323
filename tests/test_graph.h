/* test_graph.h - what tests/test_graph.c (chains, views, liveness, conv and
 * sdpa nodes, profiles, errors; with main) and tests/graph_state.c (state
 * that outlives a run: op_into, in-place caches) share: host tensors (ht)
 * and the reference run on them, graph helpers, and testutil.h's CHECK with
 * one pair of counters. One executable, test_graph. */
#ifndef WGNN_TEST_GRAPH_H
#define WGNN_TEST_GRAPH_H

#define TU_SHARED_COUNTERS /* tu_pass, tu_fail: tests/test_graph.c */
#include "testutil.h"
#define MAXN 4096

typedef struct ht {
    wgnn_desc d;
    float *p; /* MAXN floats */
} ht;

static inline ht ht_new(int rank, const int64_t *dims) {
    ht h;
    memset(&h, 0, sizeof h);
    h.d.dtype = WGNN_F32;
    h.d.rank = rank;
    for (int i = 0; i < rank; i++) h.d.dims[i] = dims[i];
    h.p = calloc(MAXN, sizeof(float));
    return h;
}

static inline size_t ht_n(const ht *h) {
    size_t n = 1;
    for (int i = 0; i < h->d.rank; i++) n *= (size_t)h->d.dims[i];
    return n;
}

static inline ht ht_rand(int rank, const int64_t *dims, float lo, float hi) {
    ht h = ht_new(rank, dims);
    tu_fill(h.p, ht_n(&h), lo, hi);
    return h;
}

/* The same data with another shape (a copy the caller frees). */
static inline ht ht_view(const ht *src, int rank, const int64_t *dims) {
    ht h = ht_new(rank, dims);
    memcpy(h.p, src->p, ht_n(src) * sizeof(float));
    return h;
}

/* Runs op's reference; out[] gets fresh host tensors; returns the count. */
static inline int href(const char *op, const ht *in, int n_in, const char *const *args, int n_args, ht *out) {
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

/* A device tensor of h's dtype (float32 or int32) and shape holding its data. */
static inline wgnn_tensor *upload(wgnn_context *ctx, const ht *h) {
    wgnn_tensor *t = NULL;
    wgnn_status s = wgnn_tensor_create(ctx, h->d.dtype, h->d.rank, h->d.dims, &t);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, t, h->p, ht_n(h) * 4);
    CHECK(s == WGNN_OK, "upload: %s", wgnn_context_error(ctx));
    return t;
}

/* One op node with one output; returns its value (or -1). */
static inline wgnn_value gop(wgnn_graph *g, wgnn_context *ctx, const char *op, const wgnn_value *in, int n_in,
                      const char *const *args, int n_args) {
    wgnn_value out[8];
    int n_out = 0;
    wgnn_status s = wgnn_graph_op(g, op, in, n_in, args, n_args, out, 8, &n_out);
    CHECK(s == WGNN_OK && n_out >= 1, "graph_op %s: %s", op, wgnn_context_error(ctx));
    return s == WGNN_OK ? out[0] : -1;
}

static inline void compare_output(wgnn_graph *g, wgnn_context *ctx, wgnn_value v, const ht *ref, double tol,
                           const char *what) {
    size_t n = ht_n(ref);
    float *got = calloc(n, sizeof(float));
    wgnn_status s = wgnn_graph_read_output(g, v, got, n * 4);
    CHECK(s == WGNN_OK, "%s: read_output: %s", what, wgnn_context_error(ctx));
    double md = 0;
    if (s == WGNN_OK) CHECK(tu_close(got, ref->p, n, tol, tol, &md), "%s: max diff %g", what, md);
    free(got);
}

static inline int has(const char *msg, const char *part) { return strstr(msg, part) != NULL; }

/* tests/graph_state.c */
void test_state(wgnn_context *ctx);
void test_state_multi(wgnn_context *ctx);
void test_state_attention(wgnn_context *ctx);

#endif
