/* attn.c - attention problems shared by sdpa, bench sdpa and demo: the
 * tensors, random inputs, the check against wgnn_ref_sdpa and the timing. */
#include "attn.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void attn_release(attn *a) {
    wgnn_tensor_destroy(a->out);
    wgnn_tensor_destroy(a->mask);
    wgnn_tensor_destroy(a->v);
    wgnn_tensor_destroy(a->k);
    wgnn_tensor_destroy(a->q);
    memset(a, 0, sizeof *a);
}

/* max that keeps a NaN once one is seen */
static double nan_max(double m, double x) {
    return isnan(m) || isnan(x) ? NAN : x > m ? x : m;
}

/* Compares the GPU output of a with wgnn_ref_sdpa on the host inputs h. */
int check_against_ref(const attn *a, const host_attn *h, const float *gpu, check_result *r, char *err) {
    int rank = wgnn_tensor_rank(a->q);
    const int64_t *qd = wgnn_tensor_dims(a->q), *kd = wgnn_tensor_dims(a->k);
    uint64_t batch = 1, n = wgnn_tensor_numel(a->q);
    for (int i = 0; i < rank - 2; i++) batch *= (uint64_t)qd[i];
    uint64_t d = (uint64_t)qd[rank - 1];
    double scale = a->opts.has_scale ? (double)a->opts.scale : 1.0 / sqrt((double)d);
    float *ref = alloc_floats(n, err);
    if (!ref) return CLI_FAIL;
    /* The reference leaves out untouched when it cannot allocate: NaN fails then. */
    for (uint64_t i = 0; i < n; i++) ref[i] = NAN;
    wgnn_ref_sdpa(h->q, h->k, h->v, h->mask, batch, (uint64_t)qd[rank - 2], (uint64_t)kd[rank - 2], d, scale, ref);
    *r = (check_result){0, 0, 0, true, CHECK_ATOL, CHECK_RTOL};
    if (wgnn_tensor_dtype(a->out) == WGNN_F16) {
        r->atol = CHECK_ATOL_F16;
        r->rtol = CHECK_RTOL_F16;
    }
    for (uint64_t i = 0; i < n; i++) {
        double g = gpu[i], f = ref[i];
        double diff = g == f ? 0.0 : fabs(g - f); /* equal infinities match */
        double rel = diff / (fabs(f) + 1e-3);
        if (!(diff <= r->atol + r->rtol * fabs(f))) r->n_bad++;
        r->max_abs = nan_max(r->max_abs, diff);
        r->max_rel = nan_max(r->max_rel, rel);
    }
    r->pass = r->n_bad == 0;
    free(ref);
    return CLI_OK;
}

void print_check(FILE *f, const check_result *r) {
    fprintf(f, "max_abs_err=%.3g max_rel_err=%.3g\n", r->max_abs, r->max_rel);
    if (r->pass) fprintf(f, "check: PASS\n");
    else fprintf(f, "check: FAIL (atol %g, rtol %g): %" PRIu64 " element(s) off\n", r->atol, r->rtol, r->n_bad);
}

/* Downloads a's output into a fresh float32 host array (float16 outputs are
 * widened, exactly). */
int download_out(wgnn_context *ctx, const attn *a, float **out, char *err) {
    uint64_t n = wgnn_tensor_numel(a->out);
    *out = alloc_floats(n, err);
    if (!*out) return CLI_FAIL;
    wgnn_status s;
    if (wgnn_tensor_dtype(a->out) == WGNN_F16) {
        uint16_t *h = malloc((size_t)n * sizeof *h);
        if (!h) return set_err(err, "out of host memory");
        s = wgnn_tensor_download(ctx, a->out, h, (size_t)n * sizeof *h);
        if (s == WGNN_OK) wgnn_f16_to_f32(h, *out, (size_t)n);
        free(h);
    } else {
        s = wgnn_tensor_download(ctx, a->out, *out, (size_t)n * sizeof(float));
    }
    return s == WGNN_OK ? CLI_OK : ctx_err(err, ctx, s);
}

/* Uploads n floats as a tensor of dtype dt (float16: rounded, and the host
 * copy rounded the same way so a reference sees what the GPU sees). */
int upload_as(wgnn_context *ctx, wgnn_dtype dt, int rank, const int64_t *dims, float *data, uint64_t n,
                     wgnn_tensor **out, char *err) {
    wgnn_status s;
    if (dt != WGNN_F16) {
        s = tensor_from_host(ctx, WGNN_F32, rank, dims, data, n * sizeof(float), out);
    } else {
        uint16_t *h = malloc((size_t)n * sizeof *h);
        if (!h) return set_err(err, "out of host memory");
        wgnn_f32_to_f16(data, h, (size_t)n);
        wgnn_f16_to_f32(h, data, (size_t)n);
        s = tensor_from_host(ctx, WGNN_F16, rank, dims, h, n * sizeof *h, out);
        free(h);
    }
    return s == WGNN_OK ? CLI_OK : ctx_err(err, ctx, s);
}

/* Random q, k, v in [-1, 1) (and a mask in [-1, 0) when with_mask) for
 * [B, H, S_q, S_kv, D], on the host (into store[4], caller frees) and on the
 * device. */
int random_problem(wgnn_context *ctx, const int64_t s5[5], bool with_mask, wgnn_sdpa_impl impl, wgnn_dtype dt,
                          float *store[4], host_attn *h, attn *a, char *err) {
    int64_t dims[4][4] = {{s5[0], s5[1], s5[2], s5[4]},  /* q */
                          {s5[0], s5[1], s5[3], s5[4]},  /* k */
                          {s5[0], s5[1], s5[3], s5[4]},  /* v */
                          {s5[0], s5[1], s5[2], s5[3]}}; /* mask */
    wgnn_tensor **t[4] = {&a->q, &a->k, &a->v, &a->mask};
    uint64_t seed = 0x5eed;
    int n_in = with_mask ? 4 : 3;
    static const char *const names[4] = {"bench: q", "bench: k", "bench: v", "bench: mask"};
    for (int i = 0; i < n_in; i++) { /* before any host copy is made */
        int rc = check_fits_device(ctx, names[i], i == 3 ? WGNN_F32 : dt, 4, dims[i], err);
        if (rc != CLI_OK) return rc;
    }
    for (int i = 0; i < n_in; i++) {
        uint64_t n;
        char ds[96];
        if (!shape_numel(4, dims[i], &n)) {
            dims_str(4, dims[i], ds, sizeof ds);
            return set_err(err, "bench: a tensor of shape %s has too many elements", ds);
        }
        if (!(store[i] = alloc_floats(n, err))) return CLI_FAIL;
        fill_uniform(store[i], n, &seed, -1.0, i == 3 ? 0.0 : 1.0);
        int rc = upload_as(ctx, i == 3 ? WGNN_F32 : dt, 4, dims[i], store[i], n, t[i], err);
        if (rc != CLI_OK) return rc;
    }
    wgnn_status s = wgnn_tensor_create(ctx, dt, 4, dims[0], &a->out);
    if (s != WGNN_OK) return ctx_err(err, ctx, s);
    *h = (host_attn){store[0], store[1], store[2], with_mask ? store[3] : NULL};
    a->opts.mask = a->mask;
    a->opts.impl = impl;
    return CLI_OK;
}

static wgnn_status run_sdpa(wgnn_context *ctx, void *user) {
    const attn *a = user;
    return wgnn_sdpa(ctx, a->q, a->k, a->v, &a->opts, a->out);
}

int time_sdpa(wgnn_context *ctx, const attn *a, int warmup, int iters, timing *t, char *err) {
    return time_runs(ctx, run_sdpa, (void *)a, warmup, iters, t, err);
}

double sdpa_tflops(const int64_t s5[5], double ms) {
    double flops = 4.0 * (double)s5[0] * (double)s5[1] * (double)s5[2] * (double)s5[3] * (double)s5[4];
    return ms > 0 ? flops / (ms / 1e3) / 1e12 : 0.0;
}
