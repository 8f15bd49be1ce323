/* graph_overhead.c - what one dispatch costs inside a graph run: chains of
 * N tiny dependent ops (relu on 1024 floats), N independent ones, and N
 * decode-sized GEMVs (linear 1 x K -> N_out), timed by wall clock over
 * whole runs (one submit each). A measuring tool for docs/PERFORMANCE.md,
 * not a test. Built with the library (target graph_overhead):
 *     build/graph_overhead [N]        # N relus a chain, default 500
 * gpu_span_us_per_dispatch: the GPU time of a run's one pass (timestamps at its
 * ends only) over its dispatches. WGNN_GEMV_WG / WGNN_GEMV_LANES change the
 * GEMV's shape. */
#include "wgnn.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double g_rec_ms;  /* host time recording + submitting, median run */
static double g_span_ms; /* GPU time of the run's one pass (WGNN_PROFILE_SPAN), median of 9 */

/* median wall ms of 9 runs after 2 warm-ups; *node_us: the median node's
 * GPU time in one more, profiled run (timestamps around each node) */
static double time_graph(wgnn_graph *g, double *node_us) {
    double t[9], rec[9];
    for (int i = 0; i < 11; i++) {
        double t0 = now_ms();
        if (wgnn_graph_run(g, 0) != WGNN_OK) return -1;
        wgnn_graph_stats st;
        wgnn_graph_get_stats(g, &st);
        if (i >= 2) t[i - 2] = now_ms() - t0, rec[i - 2] = st.last_record_ms;
    }
    qsort(t, 9, sizeof t[0], cmp);
    qsort(rec, 9, sizeof rec[0], cmp);
    g_rec_ms = rec[4];
    *node_us = -1;
    const wgnn_graph_prof *r;
    int n;
    uint64_t total;
    double sp[9];
    int ns = 0;
    while (ns < 9 && wgnn_graph_run(g, WGNN_PROFILE_SPAN) == WGNN_OK && wgnn_graph_profile(g, &r, &n, &total) == WGNN_OK)
        sp[ns++] = (double)total / 1e6;
    qsort(sp, (size_t)ns, sizeof sp[0], cmp);
    g_span_ms = ns == 9 ? sp[4] : -1;
    if (wgnn_graph_run(g, 1) == WGNN_OK && wgnn_graph_profile(g, &r, &n, &total) == WGNN_OK && n > 0) {
        double *v = malloc((size_t)n * sizeof *v);
        for (int i = 0; i < n; i++) v[i] = (double)r[i].gpu_ns / 1e3;
        qsort(v, (size_t)n, sizeof *v, cmp);
        *node_us = v[n / 2];
        free(v);
    }
    return t[4];
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 500;
    wgnn_context *ctx = NULL;
    if (wgnn_context_create(NULL, &ctx) != WGNN_OK) {
        fprintf(stderr, "%s\n", wgnn_context_error(ctx));
        return 1;
    }
    int64_t d[1] = {1024};
    float host[1024] = {0};
    for (int mode = 0; mode < 2; mode++) {
        wgnn_graph *g = NULL;
        wgnn_graph_create(ctx, &g);
        wgnn_value x, y;
        wgnn_graph_input(g, "x", WGNN_F32, 1, d, &x);
        y = x;
        for (int i = 0; i < n; i++) {
            int k;
            wgnn_value in = mode == 0 ? y : x, out;
            wgnn_graph_op(g, "relu", &in, 1, NULL, 0, &out, 1, &k);
            if (mode == 1) wgnn_graph_output(g, out);
            y = out;
        }
        wgnn_graph_output(g, y);
        if (wgnn_graph_build(g) != WGNN_OK) return 1;
        wgnn_graph_set_input(g, x, host, sizeof host);
        double us, ms = time_graph(g, &us);
        printf("{\"bench\":\"%s relu x%d\",\"wall_ms\":%.3f,\"record_ms\":%.3f,\"us_per_dispatch\":%.2f,"
               "\"gpu_span_us_per_dispatch\":%.2f,\"median_node_gpu_us\":%.2f}\n",
               mode == 0 ? "dependent" : "independent", n, ms, g_rec_ms, 1e3 * ms / n, 1e3 * g_span_ms / n, us);
        wgnn_graph_destroy(g);
    }
    /* GEMVs: linear [1, K] x [N_out, K]^T, independent, float32 */
    static const int64_t shapes[][2] = {{1024, 1024}, {1024, 3072}, {3072, 1024}, {1024, 8192}, {1024, 1024}, {1024, 8192}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t K = shapes[s][0], N = shapes[s][1];
        bool same = s >= 4; /* every GEMV reads one weight (it stays in L2 when it fits) */
        int reps = 64;
        wgnn_graph *g = NULL;
        wgnn_graph_create(ctx, &g);
        wgnn_value x;
        wgnn_graph_input(g, "x", WGNN_F32, 2, (int64_t[]){1, K}, &x);
        float *w = calloc((size_t)(N * K), sizeof *w);
        wgnn_value wv = -1;
        for (int r = 0; r < reps; r++) {
            wgnn_value out;
            int k;
            if (!same || r == 0) {
                wgnn_tensor *t = NULL;
                wgnn_tensor_create(ctx, WGNN_F32, 2, (int64_t[]){N, K}, &t);
                wgnn_tensor_upload(ctx, t, w, (size_t)(N * K) * sizeof *w);
                wgnn_graph_constant(g, t, 1, &wv);
            }
            wgnn_graph_op(g, "linear", (wgnn_value[]){x, wv}, 2, NULL, 0, &out, 1, &k);
            wgnn_graph_output(g, out);
        }
        free(w);
        if (wgnn_graph_build(g) != WGNN_OK) return 1;
        float *hx = calloc((size_t)K, sizeof *hx);
        wgnn_graph_set_input(g, x, hx, (size_t)K * sizeof *hx);
        free(hx);
        double us, ms = time_graph(g, &us);
        double bytes = (double)N * K * 4;
        printf("{\"bench\":\"gemv %lldx%lld x%d%s\",\"wall_ms\":%.3f,\"record_ms\":%.3f,\"us_per_dispatch\":%.2f,"
               "\"gpu_span_us_per_dispatch\":%.2f,\"GB_per_s\":%.0f,\"median_node_gpu_us\":%.2f}\n",
               (long long)K, (long long)N, reps, same ? " one weight" : "", ms, g_rec_ms, 1e3 * ms / reps,
               1e3 * g_span_ms / reps, bytes * reps / (ms * 1e6), us);
        wgnn_graph_destroy(g);
    }
    wgnn_context_destroy(ctx);
    return 0;
}
