/* testutil.h - tiny test harness: CHECK macros, a counter, random data. */
#ifndef WGNN_TESTUTIL_H
#define WGNN_TESTUTIL_H

#include "wgnn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tu_pass, tu_fail;

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
#endif
