/* test_reliability.c - regressions for defects found by probing the runtime
 * as a demanding user would (issue 7): each case failed before its fix.
 *   D1 pipeline-cache entries moved under an op that held a pointer
 *   D2 callbacks fired into dead stack frames after a timeout
 *   D3 unbounded recorded work exhausted memory mappings
 *   D5 auto routing refused shapes the fused kernel runs
 *   threads: a context shared by two threads returned wrong results
 * Results are checked against the CPU reference. */
#include "internal.h"
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

typedef struct attn {
    int64_t q[4], kv[4];
    float *hq, *hk, *hv, *ho, *ref;
    wgnn_tensor *tq, *tk, *tv, *to;
    uint64_t nq, nk;
} attn;

static int attn_make(wgnn_context *ctx, attn *a, int64_t bh, int64_t s_q, int64_t s_kv, int64_t d) {
    memset(a, 0, sizeof *a);
    int64_t q[4] = {1, bh, s_q, d}, kv[4] = {1, bh, s_kv, d};
    memcpy(a->q, q, sizeof q);
    memcpy(a->kv, kv, sizeof kv);
    a->nq = (uint64_t)(bh * s_q * d);
    a->nk = (uint64_t)(bh * s_kv * d);
    a->hq = malloc(a->nq * 4);
    a->hk = malloc(a->nk * 4);
    a->hv = malloc(a->nk * 4);
    a->ho = malloc(a->nq * 4);
    a->ref = malloc(a->nq * 4);
    if (!a->hq || !a->hk || !a->hv || !a->ho || !a->ref) return 0;
    tu_fill(a->hq, a->nq, -1, 1);
    tu_fill(a->hk, a->nk, -1, 1);
    tu_fill(a->hv, a->nk, -1, 1);
    wgnn_ref_sdpa(a->hq, a->hk, a->hv, NULL, (uint64_t)bh, (uint64_t)s_q, (uint64_t)s_kv, (uint64_t)d,
                  1.0 / sqrt((double)d), a->ref);
    return wgnn_tensor_create(ctx, WGNN_F32, 4, a->q, &a->tq) == WGNN_OK &&
           wgnn_tensor_create(ctx, WGNN_F32, 4, a->kv, &a->tk) == WGNN_OK &&
           wgnn_tensor_create(ctx, WGNN_F32, 4, a->kv, &a->tv) == WGNN_OK &&
           wgnn_tensor_create(ctx, WGNN_F32, 4, a->q, &a->to) == WGNN_OK &&
           wgnn_tensor_upload(ctx, a->tq, a->hq, a->nq * 4) == WGNN_OK &&
           wgnn_tensor_upload(ctx, a->tk, a->hk, a->nk * 4) == WGNN_OK &&
           wgnn_tensor_upload(ctx, a->tv, a->hv, a->nk * 4) == WGNN_OK;
}

static void attn_free(attn *a) {
    wgnn_tensor_destroy(a->tq);
    wgnn_tensor_destroy(a->tk);
    wgnn_tensor_destroy(a->tv);
    wgnn_tensor_destroy(a->to);
    free(a->hq);
    free(a->hk);
    free(a->hv);
    free(a->ho);
    free(a->ref);
}

static int attn_matches(const attn *a) {
    double e;
    return tu_close(a->ho, a->ref, a->nq, 1e-4, 1e-3, &e);
}

#define REDUCE_PRELUDE                                                                       \
    "alias OUT4 = vec4<f32>;\nfn st4(x: vec4<f32>) -> OUT4 { return x; }\n"                  \
    "const QBIAS: bool = false;\nfn qkv_bias4(i: u32) -> vec4<f32> { return vec4<f32>(0.0); }\n" \
    "struct Params { n_rows: u32, d4: u32, n_split: u32, s_q: u32, n_h: u32, o_rs: u32, o_hs: u32, o_bs: u32, }\n" \
    "fn n_splits(row: u32) -> u32 { return P.n_split; }\n"

/* D1: the 17th pipeline used to realloc the cache under an op holding
 * pointers into it (three-pass: three pipelines; fused split-KV: two). */
static void test_pipeline_cache_growth(void) {
    wgnn_context *ctx = tu_context();
    for (int d = 4; d <= 56; d += 4) {
        attn a;
        CHECK(attn_make(ctx, &a, 1, 16, 16, d), "setup D=%d: %s", d, wgnn_context_error(ctx));
        CHECK(wgnn_sdpa(ctx, a.tq, a.tk, a.tv, NULL, a.to) == WGNN_OK, "D=%d: %s", d, wgnn_context_error(ctx));
        CHECK(wgnn_tensor_download(ctx, a.to, a.ho, a.nq * 4) == WGNN_OK && attn_matches(&a), "D=%d result", d);
        attn_free(&a);
    }
    size_t before = wgnn__pipeline_count(ctx);
    /* the reproducer: a decode-like shape through three pipelines at once */
    attn a;
    CHECK(attn_make(ctx, &a, 1, 1, 16, 60), "setup: %s", wgnn_context_error(ctx));
    CHECK(wgnn_sdpa(ctx, a.tq, a.tk, a.tv, NULL, a.to) == WGNN_OK, "D=60: %s", wgnn_context_error(ctx));
    CHECK(wgnn_tensor_download(ctx, a.to, a.ho, a.nq * 4) == WGNN_OK && attn_matches(&a), "D=60 result");
    attn_free(&a);
    /* and through split-KV: fused + reduce */
    CHECK(attn_make(ctx, &a, 1, 1, 256, 60), "setup: %s", wgnn_context_error(ctx));
    wgnn_sdpa_options o = {0};
    o.impl = WGNN_SDPA_FUSED;
    CHECK(wgnn_sdpa(ctx, a.tq, a.tk, a.tv, &o, a.to) == WGNN_OK, "split-KV: %s", wgnn_context_error(ctx));
    CHECK(wgnn_tensor_download(ctx, a.to, a.ho, a.nq * 4) == WGNN_OK && attn_matches(&a), "split-KV result");
    attn_free(&a);
    CHECK(wgnn__pipeline_count(ctx) > before, "new pipelines were added (%zu -> %zu)", before,
          wgnn__pipeline_count(ctx));

    /* Entries never move: a pointer taken first is still what a lookup
     * returns after many more entries. */
    const wgnn__pipe *first = NULL, *again = NULL;
    wgnn__const c = {"WG", 1};
    CHECK(wgnn__pipeline(ctx, "sdpa_fused_reduce", REDUCE_PRELUDE,
                         &c, 1, &first) == WGNN_OK,
          "%s", wgnn_context_error(ctx));
    for (int i = 2; i <= 40; i++) {
        const wgnn__pipe *p = NULL;
        wgnn__const ci = {"WG", i};
        CHECK(wgnn__pipeline(ctx, "sdpa_fused_reduce",
                             REDUCE_PRELUDE, &ci, 1,
                             &p) == WGNN_OK,
              "variant %d: %s", i, wgnn_context_error(ctx));
    }
    CHECK(wgnn__pipeline(ctx, "sdpa_fused_reduce", REDUCE_PRELUDE,
                         &c, 1, &again) == WGNN_OK &&
              again == first,
          "the first entry did not move");
    CHECK(wgnn__pipeline_count(ctx) >= 40, "%zu pipelines cached", wgnn__pipeline_count(ctx));
    wgnn_context_destroy(ctx);
}

/* D2: a download that times out, then destroy: Dawn fires the map and
 * work-done callbacks during destroy; their state must not be on the stack
 * of the calls that returned (ASan: stack-use-after-return). */
static void test_timeout_then_destroy(void) {
    int timed_out = 0;
    for (int round = 0; round < 3; round++) {
        wgnn_context_options o = {0};
        o.timeout_ms = 1;
        wgnn_context *ctx = NULL;
        if (wgnn_context_create(&o, &ctx) != WGNN_OK) { /* 1 ms may not even create a device */
            wgnn_context_destroy(ctx);
            continue;
        }
        attn a;
        /* enough work to outlast 1 ms: one call on a CPU adapter, many on a GPU */
        wgnn_adapter_info ai;
        wgnn_context_adapter(ctx, &ai);
        int calls = strcmp(ai.type, "CPU") == 0 ? 1 : 200;
        int ok = attn_make(ctx, &a, 8, 512, 512, 64);
        if (ok) {
            wgnn_status s = WGNN_OK;
            for (int i = 0; i < calls && s == WGNN_OK; i++) s = wgnn_sdpa(ctx, a.tq, a.tk, a.tv, NULL, a.to);
            if (s == WGNN_OK) s = wgnn_tensor_download(ctx, a.to, a.ho, a.nq * 4);
            if (s == WGNN_ERR_TIMEOUT) {
                timed_out++;
                CHECK(strstr(wgnn_context_error(ctx), "ms") != NULL, "timeout message: %s", wgnn_context_error(ctx));
            }
        }
        attn_free(&a);
        /* Pending callbacks fire here, into records the context owns (under
         * ASan with detect_stack_use_after_return, `make asan`, a stack
         * record is reported). */
        wgnn_context_destroy(ctx);
    }
    CHECK(timed_out > 0, "a 1 ms timeout was hit at least once in 3 rounds");
    /* and the process goes on: a fresh context computes correctly */
    wgnn_context *ctx = tu_context();
    attn a;
    CHECK(attn_make(ctx, &a, 1, 8, 8, 8) && wgnn_sdpa(ctx, a.tq, a.tk, a.tv, NULL, a.to) == WGNN_OK &&
              wgnn_tensor_download(ctx, a.to, a.ho, a.nq * 4) == WGNN_OK && attn_matches(&a),
          "a new context after the timeouts: %s", wgnn_context_error(ctx));
    attn_free(&a);
    wgnn_context_destroy(ctx);
}

/* D3: recording without syncing must run in bounded memory. */
static void test_many_unsynced_ops(void) {
    wgnn_context *ctx = tu_context();
    attn a;
    CHECK(attn_make(ctx, &a, 2, 16, 16, 8), "setup: %s", wgnn_context_error(ctx));
    int n = 40000, failed_at = -1;
    for (int i = 0; i < n && failed_at < 0; i++)
        if (wgnn_sdpa(ctx, a.tq, a.tk, a.tv, NULL, a.to) != WGNN_OK) failed_at = i;
    CHECK(failed_at < 0, "call %d failed: %s", failed_at, wgnn_context_error(ctx));
    CHECK(wgnn_tensor_download(ctx, a.to, a.ho, a.nq * 4) == WGNN_OK, "%s", wgnn_context_error(ctx));
    CHECK(attn_matches(&a), "result after %d unsynced calls", n);
    attn_free(&a);
    wgnn_context_destroy(ctx);
}

/* D5: auto must route around the three-pass binding limits to fused. Only
 * meaningful where the storage binding limit is small (lavapipe: 128 MiB). */
static void test_auto_routes_around_limits(void) {
    wgnn_context *ctx = tu_context();
    wgnn_limits l;
    wgnn_context_limits(ctx, &l);
    if (l.max_storage_buffer_binding_size > (256u << 20)) {
        printf("# skip D5: storage binding limit is %llu bytes\n", (unsigned long long)l.max_storage_buffer_binding_size);
        wgnn_context_destroy(ctx);
        return;
    }
    /* k and v: 64 * 140000 * 4 floats = 143 MB each, past one 128 MiB binding;
     * one query row: the CPU adapter's preferred route is channel. */
    attn a;
    int64_t s_kv = (int64_t)(l.max_storage_buffer_binding_size / (64u * 16u)) + 9000;
    CHECK(attn_make(ctx, &a, 64, 1, s_kv, 4), "setup: %s", wgnn_context_error(ctx));
    uint64_t bytes = 0;
    wgnn_sdpa_impl routed = WGNN_SDPA_AUTO;
    CHECK(wgnn_sdpa_scratch_bytes(ctx, a.tq, a.tk, a.tv, NULL, &bytes, &routed) == WGNN_OK &&
              routed == WGNN_SDPA_FUSED,
          "routed to %d: %s", (int)routed, wgnn_context_error(ctx));
    CHECK(wgnn_sdpa(ctx, a.tq, a.tk, a.tv, NULL, a.to) == WGNN_OK, "auto runs it: %s", wgnn_context_error(ctx));
    CHECK(wgnn_tensor_download(ctx, a.to, a.ho, a.nq * 4) == WGNN_OK && attn_matches(&a), "result: %s",
          wgnn_context_error(ctx));
    wgnn_sdpa_options o = {0};
    o.impl = WGNN_SDPA_CHANNEL;
    CHECK(wgnn_sdpa(ctx, a.tq, a.tk, a.tv, &o, a.to) == WGNN_ERR_LIMIT &&
              strstr(wgnn_context_error(ctx), "maxStorageBufferBindingSize"),
          "an explicit channel request still names the limit: %s", wgnn_context_error(ctx));
    attn_free(&a);
    wgnn_context_destroy(ctx);
}

/* Threads: two threads on one context get WGNN_OK with right results, or
 * WGNN_ERR_BUSY; never a wrong result with WGNN_OK. */
typedef struct worker {
    wgnn_context *ctx;
    attn *a;
    int iters, ok, busy, wrong, other;
    wgnn_status first_other;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    float *out = malloc(w->a->nq * 4);
    for (int i = 0; i < w->iters; i++) {
        wgnn_status s = wgnn_sdpa(w->ctx, w->a->tq, w->a->tk, w->a->tv, NULL, w->a->to);
        if (s == WGNN_ERR_BUSY && w->busy < 10000000) { /* the other thread is in: try again */
            w->busy++;
            sched_yield();
            i--;
            continue;
        }
        if (s == WGNN_OK) {
            memset(out, 0, w->a->nq * 4);
            s = wgnn_tensor_download(w->ctx, w->a->to, out, w->a->nq * 4);
        }
        if (s == WGNN_OK) {
            double e;
            if (tu_close(out, w->a->ref, w->a->nq, 1e-4, 1e-3, &e)) w->ok++;
            else w->wrong++;
        } else if (s == WGNN_ERR_BUSY) {
            w->busy++;
            sched_yield();
            i--;
        } else {
            if (!w->other) w->first_other = s;
            w->other++;
        }
    }
    free(out);
    return NULL;
}

static void test_threads(void) {
    wgnn_context *ctx = tu_context();
    attn a[2];
    CHECK(attn_make(ctx, &a[0], 2, 32, 32, 16) && attn_make(ctx, &a[1], 2, 32, 32, 16), "setup");
    worker w[2] = {{ctx, &a[0], 300, 0, 0, 0, 0, WGNN_OK}, {ctx, &a[1], 300, 0, 0, 0, 0, WGNN_OK}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK(w[i].wrong == 0, "thread %d: %d wrong results returned with WGNN_OK", i, w[i].wrong);
        CHECK(w[i].other == 0, "thread %d: %d other failures, the first %s", i, w[i].other,
              wgnn_status_str(w[i].first_other));
        CHECK(w[i].ok == w[i].iters, "thread %d: %d of %d calls went through (%d busy answers)", i, w[i].ok,
              w[i].iters, w[i].busy);
    }
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "context healthy afterwards");
    attn_free(&a[0]);
    attn_free(&a[1]);
    wgnn_context_destroy(ctx);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
    tu_seed(7);
    void (*tests[])(void) = {test_pipeline_cache_growth, test_timeout_then_destroy, test_many_unsynced_ops,
                             test_auto_routes_around_limits, test_threads};
    const char *names[] = {"D1 pipeline cache", "D2 timeout then destroy", "D3 40000 unsynced ops",
                           "D5 auto routing", "threads"};
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        double t0 = now_s();
        tests[i]();
        printf("# %s: %.1f s\n", names[i], now_s() - t0);
    }
    return tu_finish();
}
