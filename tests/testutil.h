/* testutil.h - tiny test harness: CHECK macros, a counter, random data. */
#ifndef WGNN_TESTUTIL_H
#define WGNN_TESTUTIL_H

#include "wgnn.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

/* A test executable in several files (test_npy, test_graph) defines
 * TU_SHARED_COUNTERS before including this in each of them, and the file
 * with main defines the counters: `int tu_pass, tu_fail;`. */
#ifdef TU_SHARED_COUNTERS
extern int tu_pass, tu_fail;
#else
static int tu_pass, tu_fail;
#endif

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            tu_pass++;                                                     \
        } else {                                                           \
            tu_fail++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
        }                                                                  \
    } while (0)

static inline int tu_finish(void) {
    printf("%d passed, %d failed\n", tu_pass, tu_fail);
    return tu_fail ? 1 : 0;
}

static uint64_t tu_rng = 0x9E3779B97F4A7C15ull;
static inline void tu_seed(uint64_t s) { tu_rng = s * 0x9E3779B97F4A7C15ull + 1; }
static inline uint64_t tu_next(void) { /* splitmix64 */
    uint64_t z = (tu_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline float tu_uniform(float lo, float hi) {
    return lo + (hi - lo) * (float)((double)(tu_next() >> 11) / 9007199254740992.0);
}
static inline void tu_fill(float *p, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) p[i] = tu_uniform(lo, hi);
}

/* Max |a-b| and whether every element is within atol + rtol*|ref|. */
static inline int tu_close(const float *got, const float *ref, size_t n, double atol, double rtol, double *max_abs) {
    int ok = 1;
    *max_abs = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]);
        if (!(d <= atol + rtol * fabs((double)ref[i]))) ok = 0; /* NaN fails */
        if (d > *max_abs || d != d) *max_abs = d;
    }
    return ok;
}

/* Removes the files in dir (one level, as the tests' model folders are),
 * then dir. */
static inline void tu_rm_folder(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char p[1200];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* A whole file (malloc'd, NUL-terminated; NULL when unreadable), and back. */
static inline char *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    *len = n >= 0 ? (size_t)n : 0;
    return b;
}

static inline void tu_write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, len, f);
    fclose(f);
}

static inline wgnn_context *tu_context(void) {
    wgnn_context *ctx = NULL;
    wgnn_status s = wgnn_context_create(NULL, &ctx);
    if (s != WGNN_OK) {
        fprintf(stderr, "FAIL: context: %s\n", wgnn_context_error(ctx));
        wgnn_context_destroy(ctx);
        printf("0 passed, 1 failed\n");
        exit(1);
    }
    return ctx;
}
/* ---- one op on the GPU against wgnn_op_ref (float32 inputs) -------------- */

typedef struct tu_in_spec {
    wgnn_desc d;
    float lo, hi;
} tu_in_spec;

/* Runs op on random inputs (plus the specials at the given flat indices of
 * input 0) and compares with wgnn_op_ref; NaN must meet NaN, an infinity
 * the same infinity. Inputs are float32 or float16 (random floats rounded to
 * halves); the output float32. */
static inline void tu_run_op(wgnn_context *ctx, const char *what, const char *op, const tu_in_spec *sp, int n_in,
                const char *const *args, int n_args, const uint64_t *sp_idx, const float *sp_val, int n_sp,
                double atol, double rtol) {
    wgnn_tensor *tin[5] = {0}, *tout = NULL;
    float *hin[5] = {0}, *ref = NULL, *got = NULL;
    wgnn_host_tensor hi[5], ho;
    wgnn_desc dout;
    int n_out = 0;
    char err[512] = "";
    wgnn_desc din[5];
    for (int i = 0; i < n_in; i++) din[i] = sp[i].d;
    wgnn_status s = wgnn_op_shapes(op, din, n_in, args, n_args, &dout, 1, &n_out, err, sizeof err);
    CHECK(s == WGNN_OK, "%s: shapes: %s", what, err);
    if (s != WGNN_OK) return;
    int ok = 1;
    for (int i = 0; i < n_in && ok; i++) {
        uint64_t n = 1;
        for (int k = 0; k < sp[i].d.rank; k++) n *= (uint64_t)sp[i].d.dims[k];
        hin[i] = malloc((size_t)n * 4 + 4);
        ok = hin[i] != NULL;
        if (!ok) break;
        tu_fill(hin[i], (size_t)n, sp[i].lo, sp[i].hi);
        if (i == 0)
            for (int k = 0; k < n_sp; k++) hin[0][sp_idx[k]] = sp_val[k];
        hi[i].desc = sp[i].d;
        hi[i].data = hin[i];
        size_t esz = 4;
        if (sp[i].d.dtype == WGNN_F16) { /* halves in place of the floats, for the op and the reference */
            uint16_t *h = malloc((size_t)n * 2 + 2);
            ok = h != NULL;
            if (!ok) break;
            wgnn_f32_to_f16(hin[i], h, (size_t)n);
            memcpy(hin[i], h, (size_t)n * 2);
            free(h);
            esz = 2;
        }
        ok = wgnn_tensor_create(ctx, sp[i].d.dtype, sp[i].d.rank, sp[i].d.dims, &tin[i]) == WGNN_OK &&
             wgnn_tensor_upload(ctx, tin[i], hin[i], (size_t)n * esz) == WGNN_OK;
    }
    uint64_t no = 1;
    for (int k = 0; k < dout.rank; k++) no *= (uint64_t)dout.dims[k];
    if (ok) {
        ref = malloc((size_t)no * 4 + 4);
        got = malloc((size_t)no * 4 + 4);
        ok = ref && got && wgnn_tensor_create(ctx, WGNN_F32, dout.rank, dout.dims, &tout) == WGNN_OK;
    }
    CHECK(ok, "%s: setup: %s", what, wgnn_context_error(ctx));
    if (ok) {
        s = wgnn_op(ctx, op, (const wgnn_tensor *const *)tin, n_in, args, n_args, &tout, 1);
        CHECK(s == WGNN_OK, "%s: %s", what, wgnn_context_error(ctx));
        ok = s == WGNN_OK;
    }
    if (ok) {
        ho.desc = dout;
        ho.data = ref;
        s = wgnn_op_ref(op, hi, n_in, args, n_args, &ho, 1, err, sizeof err);
        CHECK(s == WGNN_OK, "%s: reference: %s", what, err);
        ok = s == WGNN_OK && wgnn_tensor_download(ctx, tout, got, (size_t)no * 4) == WGNN_OK;
    }
    if (ok) {
        uint64_t bad = 0, first = 0;
        for (uint64_t i = 0; i < no; i++) {
            double g = got[i], w = ref[i];
            bool same = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabs(g - w) <= atol + rtol * fabs(w);
            if (!same && bad++ == 0) first = i;
        }
        CHECK(bad == 0, "%s: %llu elements differ from the reference, first at %llu: %g, want %g", what,
              (unsigned long long)bad, (unsigned long long)first, bad ? got[first] : 0.0, bad ? ref[first] : 0.0);
    }
    for (int i = 0; i < n_in; i++) {
        free(hin[i]);
        wgnn_tensor_destroy(tin[i]);
    }
    free(ref);
    free(got);
    wgnn_tensor_destroy(tout);
}

static inline tu_in_spec tu_f32(int rank, const int64_t *dims, float lo, float hi) {
    tu_in_spec s;
    memset(&s, 0, sizeof s);
    s.d.dtype = WGNN_F32;
    s.d.rank = rank;
    for (int i = 0; i < rank; i++) s.d.dims[i] = dims[i];
    s.lo = lo;
    s.hi = hi;
    return s;
}

#endif
