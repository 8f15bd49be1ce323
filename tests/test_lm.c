/* test_lm.c - decoder LMs (wgnn_lm_*) from the tiny random-init Qwen3
 * folders in tests/models/qwen3{,_untied} (made by
 * tests/models/make_qwen3_fixtures.py) against PyTorch's stored outputs:
 *   - prefill logits of every prompt (english, chat, accents, cjk, emoji,
 *     whitespace) at atol/rtol 1e-3;
 *   - 24-token greedy continuations, exactly (EOS included when HF stopped);
 *   - each decode step's logits against HF's (the KV cache read back),
 *     and KV-cache decode against a full recompute;
 *   - f16 and q8 weight storage (looser logits), the untied lm_head;
 *   - sampling on the GPU: top_k=1 and a tiny top_p are greedy, a seed
 *     repeats;
 *   - bad folders and bad calls. */
#define _GNU_SOURCE /* mkdtemp */
#include "internal.h" /* the context's copy of the device limits */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_root[1024];

static bool load_npy(const char *model, const char *file, wgnn_npy *out) {
    char p[1200], err[512];
    snprintf(p, sizeof p, "%s/tests/models/%s/%s", g_root, model, file);
    wgnn_status s = wgnn_npy_load(p, out, err, sizeof err);
    CHECK(s == WGNN_OK, "%s", err);
    return s == WGNN_OK;
}

static wgnn_lm *load(wgnn_context *ctx, const char *model, wgnn_lm_weights w, int max_ctx) {
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/tests/models/%s", g_root, model);
    wgnn_lm_options o = {w, max_ctx};
    wgnn_lm *lm = NULL;
    wgnn_status s = wgnn_lm_load(ctx, dir, &o, &lm);
    CHECK(s == WGNN_OK, "load %s: %s", model, wgnn_context_error(ctx));
    return lm;
}

typedef struct collect {
    int32_t ids[64];
    int n;
} collect;

static int on_tok(void *user, int32_t id) {
    collect *c = user;
    if (c->n < 64) c->ids[c->n++] = id;
    return 0;
}

/* Prefill logits, the greedy continuation, decode-step logits. */
static void check_prompt(wgnn_context *ctx, wgnn_lm *lm, const char *model, const char *name, double atol,
                         double rtol, bool exact) {
    char f[1200];
    wgnn_npy ids, ref, gen, steps;
    snprintf(f, sizeof f, "%s_ids.npy", name);
    if (!load_npy(model, f, &ids)) return;
    snprintf(f, sizeof f, "%s_prefill_logits.npy", name);
    if (!load_npy(model, f, &ref)) return;
    wgnn_lm_info in;
    wgnn_lm_get_info(lm, &in);
    int n = (int)ids.numel;
    const int32_t *p = ids.data;
    float *lg = malloc((size_t)n * (size_t)in.vocab_size * sizeof *lg);
    wgnn_status s = wgnn_lm_forward(lm, p, n, 0, lg);
    CHECK(s == WGNN_OK, "%s/%s forward: %s", model, name, wgnn_context_error(ctx));
    double worst = 0, big = 0;
    for (uint64_t i = 0; i < ref.numel; i++) big = fmax(big, fabs(((const float *)ref.data)[i]));
    bool ok = s == WGNN_OK && tu_close(lg, ref.data, ref.numel, atol, rtol, &worst);
    CHECK(ok, "%s/%s prefill logits: max |diff| %.3g", model, name, worst);
    printf("  %-14s %-10s prefill %2d tokens: max |diff| %.2g (logits up to %.3g)\n", model, name, n, worst, big);

    /* greedy continuation, exact (only for exact weight formats) */
    snprintf(f, sizeof f, "%s_gen_ids.npy", name);
    if (exact && load_npy(model, f, &gen)) {
        collect c = {{0}, 0};
        wgnn_lm_generate_options go = {0};
        go.greedy = 1;
        go.max_new_tokens = 24;
        wgnn_lm_stats st;
        s = wgnn_lm_generate(lm, p, n, &go, on_tok, &c, &st);
        CHECK(s == WGNN_OK, "%s/%s generate: %s", model, name, wgnn_context_error(ctx));
        bool same = c.n == (int)gen.numel && memcmp(c.ids, gen.data, gen.numel * sizeof(int32_t)) == 0;
        int first = 0;
        while (first < c.n && first < (int)gen.numel && c.ids[first] == ((const int32_t *)gen.data)[first]) first++;
        CHECK(same, "%s/%s greedy: %d ids, HF %d; first differing at %d", model, name, c.n, (int)gen.numel, first);
        CHECK(st.prompt_tokens == n && st.generated_tokens == c.n, "%s/%s stats", model, name);
        bool eos = false;
        for (int i = 0; c.n > 0 && i < in.n_eos; i++) eos |= c.ids[c.n - 1] == in.eos[i];
        CHECK(st.stop == (eos ? WGNN_LM_STOP_EOS : WGNN_LM_STOP_MAX_NEW) && (eos || c.n == 24),
              "%s/%s stop reason %d after %d tokens", model, name, (int)st.stop, c.n);

        /* each decode step's logits (the KV cache after the prompt) */
        snprintf(f, sizeof f, "%s/tests/models/%s/%s_step_logits.npy", g_root, model, name);
        if (access(f, R_OK) == 0 && load_npy(model, strrchr(f, '/') + 1, &steps)) {
            float *row = malloc((size_t)in.vocab_size * sizeof *row);
            s = wgnn_lm_forward(lm, p, n, 0, NULL);
            double w2 = 0;
            for (int i = 0; s == WGNN_OK && i + 1 < c.n && i + 1 < (int)steps.dims[0]; i++) {
                s = wgnn_lm_forward(lm, &c.ids[i], 1, n + i, row);
                double w = 0;
                CHECK(s == WGNN_OK && tu_close(row, (const float *)steps.data + (size_t)(i + 1) * in.vocab_size,
                                               (size_t)in.vocab_size, atol, rtol, &w),
                      "%s/%s decode step %d logits: max |diff| %.3g (%s)", model, name, i + 1, w,
                      wgnn_context_error(ctx));
                if (w > w2) w2 = w;
            }
            printf("  %-14s %-10s greedy %d ids equal HF's; decode-step logits max |diff| %.2g\n", model, name, c.n,
                   w2);
            free(row);
            wgnn_npy_free(&steps);
        }
        wgnn_npy_free(&gen);
    }

    /* KV-cache decode equals a full recompute: the last three positions one at a time */
    if (s == WGNN_OK && n > 4) {
        float *row = malloc((size_t)in.vocab_size * sizeof *row);
        s = wgnn_lm_forward(lm, p, n - 3, 0, NULL);
        double w = 0, wi = 0;
        for (int i = n - 3; s == WGNN_OK && i < n; i++) {
            s = wgnn_lm_forward(lm, &p[i], 1, i, row);
            CHECK(s == WGNN_OK && tu_close(row, lg + (size_t)i * in.vocab_size, (size_t)in.vocab_size, 1e-4, 1e-4, &wi),
                  "%s/%s: decode at %d differs from the full run by %.3g", model, name, i, wi);
            if (wi > w) w = wi;
        }
        CHECK(s == WGNN_OK, "%s/%s cache decode: %s", model, name, wgnn_context_error(ctx));
        free(row);
    }
    free(lg);
    wgnn_npy_free(&ids);
    wgnn_npy_free(&ref);
}

static const char *const k_prompts[] = {"english", "chat", "accents", "cjk", "emoji", "whitespace"};

static int stop_now(void *user, int32_t id) {
    (void)id;
    (*(int *)user)++;
    return 1;
}

/* Stops after five tokens (generation runs a step ahead: the step in
 * flight at the stop is dropped). */
static int stop_at5(void *user, int32_t id) {
    on_tok(user, id);
    return ((collect *)user)->n >= 5;
}

/* A prompt in chunks (chunked prefill: attention over the cache plus a
 * block of new rows) equals the prompt in one run; a callback stops
 * generation at once, or after five tokens (the same five as a full run,
 * and a full run after it unchanged). */
static void test_chunks(wgnn_context *ctx, wgnn_lm *lm) {
    wgnn_npy ids, ref;
    if (!load_npy("qwen3", "english_ids.npy", &ids) || !load_npy("qwen3", "english_prefill_logits.npy", &ref)) return;
    wgnn_lm_info in;
    wgnn_lm_get_info(lm, &in);
    const int32_t *p = ids.data;
    int n = (int)ids.numel, cuts[3] = {0, 10, 21};
    float *lg = malloc((size_t)n * (size_t)in.vocab_size * sizeof *lg);
    wgnn_status s = WGNN_OK;
    for (int c = 0; c < 3 && s == WGNN_OK; c++) {
        int a = cuts[c], b = c < 2 ? cuts[c + 1] : n;
        s = wgnn_lm_forward(lm, p + a, b - a, a, lg + (size_t)a * in.vocab_size);
    }
    double w = 0;
    CHECK(s == WGNN_OK && tu_close(lg, ref.data, ref.numel, 1e-3, 1e-3, &w), "chunked prefill (0-9, 10-20, 21-%d): %s, "
          "max |diff| %.3g", n - 1, wgnn_context_error(ctx), w);
    printf("  chunked prefill in 3 runs: max |diff| %.2g\n", w);
    int calls = 0;
    wgnn_lm_generate_options go = {0};
    go.greedy = 1;
    go.max_new_tokens = 10;
    wgnn_lm_stats st;
    s = wgnn_lm_generate(lm, p, n, &go, stop_now, &calls, &st);
    CHECK(s == WGNN_OK && calls == 1 && st.generated_tokens == 1 && st.stop == WGNN_LM_STOP_CALLBACK,
          "a callback stops generation: %d calls, stop %d", calls, (int)st.stop);
    collect full = {{0}, 0}, five = {{0}, 0}, again = {{0}, 0};
    go.max_new_tokens = 12;
    s = wgnn_lm_generate(lm, p, n, &go, on_tok, &full, NULL);
    if (s == WGNN_OK) s = wgnn_lm_generate(lm, p, n, &go, stop_at5, &five, &st);
    CHECK(s == WGNN_OK && five.n == 5 && st.generated_tokens == 5 && memcmp(five.ids, full.ids, 5 * sizeof(int32_t)) == 0,
          "a callback stops after 5 tokens: %d tokens, stats %d (%s)", five.n, st.generated_tokens, wgnn_context_error(ctx));
    if (s == WGNN_OK) s = wgnn_lm_generate(lm, p, n, &go, on_tok, &again, NULL);
    CHECK(s == WGNN_OK && again.n == full.n && memcmp(again.ids, full.ids, (size_t)full.n * sizeof(int32_t)) == 0,
          "a full run after a stopped one: %d tokens (%s)", again.n, wgnn_context_error(ctx));
    free(lg);
    wgnn_npy_free(&ids);
    wgnn_npy_free(&ref);
}

static void test_sampling(wgnn_context *ctx, wgnn_lm *lm) {
    wgnn_npy ids;
    if (!load_npy("qwen3", "english_ids.npy", &ids)) return;
    const int32_t *p = ids.data;
    int n = (int)ids.numel;
    collect greedy = {{0}, 0}, k1 = {{0}, 0}, p0 = {{0}, 0}, a = {{0}, 0}, b = {{0}, 0}, c = {{0}, 0};
    wgnn_lm_generate_options go = {0};
    go.max_new_tokens = 12;
    go.ignore_eos = 1;
    go.greedy = 1;
    wgnn_status s = wgnn_lm_generate(lm, p, n, &go, on_tok, &greedy, NULL);
    go.greedy = 0;
    go.temperature = 0.7f;
    go.top_k = 1;
    if (s == WGNN_OK) s = wgnn_lm_generate(lm, p, n, &go, on_tok, &k1, NULL);
    go.top_k = 0;
    go.top_p = 1e-6f;
    if (s == WGNN_OK) s = wgnn_lm_generate(lm, p, n, &go, on_tok, &p0, NULL);
    go.top_p = 0.9f;
    go.top_k = 50;
    go.temperature = 1.5f;
    go.seed = 7;
    if (s == WGNN_OK) s = wgnn_lm_generate(lm, p, n, &go, on_tok, &a, NULL);
    if (s == WGNN_OK) s = wgnn_lm_generate(lm, p, n, &go, on_tok, &b, NULL);
    go.seed = 8;
    if (s == WGNN_OK) s = wgnn_lm_generate(lm, p, n, &go, on_tok, &c, NULL);
    CHECK(s == WGNN_OK, "sampling: %s", wgnn_context_error(ctx));
    CHECK(greedy.n == 12 && k1.n == 12 && memcmp(greedy.ids, k1.ids, sizeof k1.ids) == 0, "top_k=1 is greedy");
    CHECK(p0.n == 12 && memcmp(greedy.ids, p0.ids, sizeof p0.ids) == 0, "top_p=1e-6 is greedy");
    CHECK(a.n == 12 && memcmp(a.ids, b.ids, sizeof a.ids) == 0, "one seed, one sequence");
    CHECK(memcmp(a.ids, c.ids, sizeof a.ids) != 0 && memcmp(a.ids, greedy.ids, sizeof a.ids) != 0,
          "temperature 1.5, another seed: another sequence (and not the greedy one)");
    printf("  sampling: top_k=1 and top_p=1e-6 equal greedy; seed 7 twice equal; seed 8 differs\n");
    wgnn_npy_free(&ids);
}

/* on_token calling back into the lm: refused (WGNN_ERR_BUSY), and the
 * generation around it unchanged */
typedef struct reenter {
    wgnn_lm *lm;
    int n;
    wgnn_status fwd, gen;
    int32_t ids[8];
} reenter;

static int call_back_in(void *user, int32_t id) {
    reenter *r = user;
    if (r->n < 8) r->ids[r->n] = id;
    if (++r->n == 2) {
        int32_t x[4] = {9, 10, 11, 12};
        r->fwd = wgnn_lm_forward(r->lm, x, 4, 0, NULL);
        r->gen = wgnn_lm_generate(r->lm, x, 4, NULL, NULL, NULL, NULL);
    }
    return 0;
}

/* Another thread calling while wgnn_lm_generate runs (here from on_token,
 * so that the overlap is certain): every call refused with WGNN_ERR_BUSY,
 * the context's message untouched; this thread's own calls go through. */
typedef struct other_thread {
    wgnn_context *ctx;
    wgnn_lm *lm;
    int n;
    wgnn_status sync, fwd, create, own_sync;
    int msg_kept;
} other_thread;

static void *other_calls(void *user) {
    other_thread *o = user;
    char before[256];
    snprintf(before, sizeof before, "%s", wgnn_context_error(o->ctx));
    int32_t x[2] = {3, 4};
    o->sync = wgnn_context_sync(o->ctx);
    o->fwd = wgnn_lm_forward(o->lm, x, 2, 0, NULL);
    wgnn_tensor *t = NULL;
    o->create = wgnn_tensor_create(o->ctx, WGNN_F32, 1, (const int64_t[]){4}, &t);
    wgnn_tensor_destroy(t);
    o->msg_kept = strcmp(before, wgnn_context_error(o->ctx)) == 0;
    return NULL;
}

static int call_from_thread(void *user, int32_t id) {
    other_thread *o = user;
    (void)id;
    if (++o->n == 2) {
        pthread_t t;
        if (pthread_create(&t, NULL, other_calls, o) == 0) pthread_join(t, NULL);
        o->own_sync = wgnn_context_sync(o->ctx);
    }
    return 0;
}

static int on_tok_count(void *user, int32_t id) {
    reenter *r = user;
    if (r->n < 8) r->ids[r->n] = id;
    r->n++;
    return 0;
}

static void test_bad_calls(wgnn_context *ctx, wgnn_lm *lm) {
    {
        wgnn_lm_generate_options go = {0};
        go.greedy = 1;
        go.ignore_eos = 1;
        go.max_new_tokens = 6;
        int32_t p[3] = {10, 20, 30};
        reenter plain = {lm, 0, WGNN_OK, WGNN_OK, {0}}, inside = {lm, -1000, WGNN_OK, WGNN_OK, {0}};
        wgnn_lm_generate(lm, p, 3, &go, on_tok_count, &plain, NULL);
        inside.n = 0;
        wgnn_status gs = wgnn_lm_generate(lm, p, 3, &go, call_back_in, &inside, NULL);
        CHECK(gs == WGNN_OK && inside.fwd == WGNN_ERR_BUSY && inside.gen == WGNN_ERR_BUSY,
              "calls into the lm from on_token refused: %d %d %d", (int)gs, (int)inside.fwd, (int)inside.gen);
        CHECK(plain.n == 6 && inside.n == 6 && memcmp(plain.ids, inside.ids, sizeof plain.ids) == 0,
              "the generation around them unchanged (%d, %d ids)", plain.n, inside.n);
        other_thread ot = {ctx, lm, 0, WGNN_OK, WGNN_OK, WGNN_OK, WGNN_ERR_GPU, 0};
        reenter after = {lm, 0, WGNN_OK, WGNN_OK, {0}};
        gs = wgnn_lm_generate(lm, p, 3, &go, call_from_thread, &ot, NULL);
        wgnn_lm_generate(lm, p, 3, &go, on_tok_count, &after, NULL);
        CHECK(gs == WGNN_OK && ot.sync == WGNN_ERR_BUSY && ot.fwd == WGNN_ERR_BUSY && ot.create == WGNN_ERR_BUSY &&
                  ot.msg_kept && ot.own_sync == WGNN_OK,
              "another thread's calls during a generation refused, message kept, this thread's own go through: "
              "%d / %d %d %d %d %d", (int)gs, (int)ot.sync, (int)ot.fwd, (int)ot.create, ot.msg_kept,
              (int)ot.own_sync);
        CHECK(after.n == 6 && memcmp(plain.ids, after.ids, sizeof plain.ids) == 0,
              "and the next generation unchanged (%d ids)", after.n);
        int32_t one = 1;
        CHECK(wgnn_lm_forward(lm, &one, 1, -1, NULL) == WGNN_ERR_INVALID_ARGUMENT &&
                  strstr(wgnn_context_error(ctx), "pos0 -1 must be >= 0"),
              "negative pos0: %s", wgnn_context_error(ctx));
    }
    int32_t ids[3] = {1, 2, 3}, bad[2] = {1, 5000};
    float lg[1];
    wgnn_status s = wgnn_lm_forward(lm, ids, 3, 30, NULL); /* max_context 32 */
    CHECK(s == WGNN_ERR_LIMIT && strstr(wgnn_context_error(ctx), "max_context"), "past the cache: %s",
          wgnn_context_error(ctx));
    s = wgnn_lm_forward(lm, bad, 2, 0, NULL);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && strstr(wgnn_context_error(ctx), "5000"), "bad id: %s",
          wgnn_context_error(ctx));
    s = wgnn_lm_forward(lm, ids, 0, 0, lg);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT, "no tokens");
    wgnn_lm_generate_options go = {0};
    go.temperature = -1;
    wgnn_lm_stats st;
    st.stop = WGNN_LM_STOP_EOS;
    s = wgnn_lm_generate(lm, ids, 3, &go, NULL, NULL, &st);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && strstr(wgnn_context_error(ctx), "temperature"), "temperature -1: %s",
          wgnn_context_error(ctx));
    CHECK(st.stop == WGNN_LM_STOP_NONE, "a failed call's stop: %d", (int)st.stop);
    CHECK(wgnn_lm_graph(lm, 2) == NULL && wgnn_lm_graph(lm, -1) == NULL, "wgnn_lm_graph of neither 0 nor 1: NULL");

    /* the end of the cache (32 positions) stops generation and says so */
    go = (wgnn_lm_generate_options){0};
    go.greedy = 1;
    go.ignore_eos = 1;
    int32_t full[32] = {0};
    wgnn_lm_info in;
    wgnn_lm_get_info(lm, &in);
    float *lg32 = malloc(32 * sizeof(float) * (size_t)in.vocab_size);
    const struct {
        int n_prompt, max_new, made;
        wgnn_lm_stop stop;
    } ends[] = {
        {3, 0, 29, WGNN_LM_STOP_CONTEXT},   /* 0: to the end */
        {3, 100, 29, WGNN_LM_STOP_CONTEXT}, /* more than the room */
        {3, 29, 29, WGNN_LM_STOP_MAX_NEW},  /* exactly the room */
        {3, 5, 5, WGNN_LM_STOP_MAX_NEW},
        {32, 4, 0, WGNN_LM_STOP_CONTEXT},   /* the prompt fills the cache: its logits only */
    };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0] && lg32; i++) {
        go.max_new_tokens = ends[i].max_new;
        go.prefill_logits = ends[i].n_prompt == 32 ? lg32 : NULL;
        s = wgnn_lm_generate(lm, full, ends[i].n_prompt, &go, NULL, NULL, &st);
        CHECK(s == WGNN_OK && st.generated_tokens == ends[i].made && st.stop == ends[i].stop,
              "prompt %d, max_new_tokens %d: %d tokens (want %d), stop %d (want %d): %s", ends[i].n_prompt,
              ends[i].max_new, st.generated_tokens, ends[i].made, (int)st.stop, (int)ends[i].stop,
              wgnn_context_error(ctx));
    }
    free(lg32);
}

/* ---- broken folders ------------------------------------------------------------ */

static void copy_edit(const char *dir, const char *file, const char *find, const char *repl, size_t cut) {
    char src[1200], dst[1200];
    size_t len;
    snprintf(src, sizeof src, "%s/tests/models/qwen3/%s", g_root, file);
    snprintf(dst, sizeof dst, "%s/%s", dir, file);
    char *b = tu_read_file(src, &len);
    if (!b) return;
    char *at = find ? strstr(b, find) : NULL;
    if (at) {
        size_t pre = (size_t)(at - b), out = len - strlen(find) + strlen(repl);
        char *o = malloc(out + 1);
        memcpy(o, b, pre);
        memcpy(o + pre, repl, strlen(repl));
        memcpy(o + pre + strlen(repl), at + strlen(find), len - pre - strlen(find));
        tu_write_file(dst, o, out);
        free(o);
    } else {
        tu_write_file(dst, b, cut ? cut : len);
    }
    free(b);
}

static void broken_folders(wgnn_context *ctx) {
    char tmpl[] = "/tmp/wgnn_lm_XXXXXX";
    char *root = mkdtemp(tmpl);
    CHECK(root != NULL, "mkdtemp");
    if (!root) return;
    struct {
        const char *name, *file, *find, *repl;
        size_t cut;
        const char *needle;
    } cases[] = {
        {"unknown_type", "config.json", "\"model_type\": \"qwen3\"", "\"model_type\": \"gpt2\"", 0, "gpt2"},
        {"bad_act", "config.json", "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"", 0, "hidden_act"},
        {"heads", "config.json", "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3", 0, "num_key_value_heads"},
        {"more_layers", "config.json", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3", 0, "model.layers.2."},
        {"mis_shaped", "config.json", "\"intermediate_size\": 128", "\"intermediate_size\": 96", 0, "mlp.gate_proj.weight"},
        {"rope_scaling", "config.json", "\"rope_type\": \"default\"", "\"rope_type\": \"yarn\"", 0, "yarn"},
        {"sliding", "config.json", "\"use_sliding_window\": false", "\"use_sliding_window\": true", 0, "sliding"},
        /* a scaling in rope_scaling beside rope_parameters is not passed over */
        {"rope_scaling_too", "config.json", "\"sliding_window\": null",
         "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 4.0}, \"sliding_window\": null", 0,
         "rope_scaling type \"linear\""},
        {"rope_scaling_string", "config.json", "\"sliding_window\": null",
         "\"rope_scaling\": \"linear\", \"sliding_window\": null", 0, "rope_scaling must be an object"},
        {"rope_scaling_no_type", "config.json", "\"sliding_window\": null",
         "\"rope_scaling\": {\"factor\": 8.0}, \"sliding_window\": null", 0, "\"factor\" but no \"rope_type\""},
        {"rope_parameters_number", "config.json", "\"rope_parameters\": {", "\"rope_parameters\": 5, \"x\": {", 0,
         "rope_parameters must be an object"},
        {"fewer_layers", "config.json", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1", 0,
         "belongs to layer 1"},
        {"dup_key", "config.json", "\"sliding_window\": null", "\"num_hidden_layers\": 1, \"sliding_window\": null", 0,
         "\"num_hidden_layers\" stands twice"},
        {"bad_eos", "generation_config.json", "\"eos_token_id\": 1023", "\"eos_token_id\": 99999", 0, "eos_token_id"},
        {"truncated", "model.safetensors", NULL, NULL, 5000, "model.safetensors"},
        {"bad_json", "config.json", "{", "{{", 0, "config.json"},
        /* Qwen2's q/k/v have biases: a Qwen3 checkpoint has none */
        {"qwen2_no_bias", "config.json", "\"model_type\": \"qwen3\"", "\"model_type\": \"qwen2\"", 0,
         "self_attn.q_proj.bias is missing"},
    };
    static const char *const files[3] = {"config.json", "generation_config.json", "model.safetensors"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, "%s/%s", root, cases[i].name);
        mkdir(dir, 0700);
        for (int k = 0; k < 3; k++) {
            bool edit = strcmp(files[k], cases[i].file) == 0;
            copy_edit(dir, files[k], edit ? cases[i].find : NULL, edit ? cases[i].repl : NULL, edit ? cases[i].cut : 0);
        }
        wgnn_lm *lm = (wgnn_lm *)1;
        wgnn_status s = wgnn_lm_load(ctx, dir, NULL, &lm);
        const char *msg = wgnn_context_error(ctx);
        CHECK(s != WGNN_OK && lm == NULL, "%s: loaded", cases[i].name);
        CHECK(strstr(msg, cases[i].needle) != NULL, "%s: message '%s' lacks '%s'", cases[i].name, msg, cases[i].needle);
        printf("  %-14s -> %s\n", cases[i].name, msg);
        if (s == WGNN_OK) wgnn_lm_destroy(lm);
        tu_rm_folder(dir);
    }
    /* generation_config.json that is not an object */
    {
        char dir[256], path[300];
        snprintf(dir, sizeof dir, "%s/gen_array", root);
        mkdir(dir, 0700);
        copy_edit(dir, "config.json", NULL, NULL, 0);
        copy_edit(dir, "model.safetensors", NULL, NULL, 0);
        snprintf(path, sizeof path, "%s/generation_config.json", dir);
        tu_write_file(path, "[1, 2]", 6);
        wgnn_lm *lm = (wgnn_lm *)1;
        wgnn_status s = wgnn_lm_load(ctx, dir, NULL, &lm);
        CHECK(s != WGNN_OK && lm == NULL && strstr(wgnn_context_error(ctx), "must be a JSON object"),
              "generation_config.json [1, 2]: %s", wgnn_context_error(ctx));
        tu_rm_folder(dir);
    }
    /* rope_parameters without rope_theta: the top level's is taken (as
     * transformers 5 moves it), the same logits as the fixture's config */
    {
        char dir[256], good[1100];
        snprintf(dir, sizeof dir, "%s/theta_top", root);
        mkdir(dir, 0700);
        copy_edit(dir, "config.json", "\"rope_theta\": 1000000.0,", "", 0);
        char path[300];
        snprintf(path, sizeof path, "%s/config.json", dir);
        size_t len = 0;
        char *cfg = tu_read_file(path, &len);
        /* then rope_theta at the top level */
        if (cfg && len > 2) {
            char *out = malloc(len + 64);
            int n = snprintf(out, len + 64, "{\"rope_theta\": 1000000.0, %s", cfg + 1);
            tu_write_file(path, out, (size_t)n);
            free(out);
        }
        free(cfg);
        copy_edit(dir, "model.safetensors", NULL, NULL, 0);
        snprintf(good, sizeof good, "%s/tests/models/qwen3", g_root);
        wgnn_lm *a = NULL, *b = NULL;
        wgnn_lm_options lo = {WGNN_LM_WEIGHTS_F32, 16};
        wgnn_status s = wgnn_lm_load(ctx, good, &lo, &a);
        if (s == WGNN_OK) s = wgnn_lm_load(ctx, dir, &lo, &b);
        CHECK(s == WGNN_OK, "theta_top loads: %s", wgnn_context_error(ctx));
        if (s == WGNN_OK) {
            wgnn_lm_info ia, ib;
            wgnn_lm_get_info(a, &ia);
            wgnn_lm_get_info(b, &ib);
            int32_t ids[6] = {5, 6, 7, 8, 9, 10};
            float *la = malloc(6 * sizeof(float) * (size_t)ia.vocab_size), *lb = malloc(6 * sizeof(float) * (size_t)ia.vocab_size);
            s = wgnn_lm_forward(a, ids, 6, 0, la);
            if (s == WGNN_OK) s = wgnn_lm_forward(b, ids, 6, 0, lb);
            CHECK(s == WGNN_OK && ia.rope_theta == 1e6 && ib.rope_theta == 1e6 &&
                      memcmp(la, lb, 6 * sizeof(float) * (size_t)ia.vocab_size) == 0,
                  "rope_theta from the top level: theta %g / %g, logits equal (%s)", ia.rope_theta, ib.rope_theta,
                  wgnn_context_error(ctx));
            free(la);
            free(lb);
        }
        wgnn_lm_destroy(a);
        wgnn_lm_destroy(b);
        tu_rm_folder(dir);
    }
    rmdir(root);

    /* a Llama config over the Qwen3 weights: the same graph without q/k
     * norms (their tensors unused); it loads and generates (the values are
     * not a reference: no Llama fixture) */
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/wgnn_lm_llama_%d", (int)getpid());
    mkdir(dir, 0700);
    copy_edit(dir, "config.json", "\"model_type\": \"qwen3\"", "\"model_type\": \"llama\"", 0);
    copy_edit(dir, "model.safetensors", NULL, NULL, 0);
    wgnn_lm *lm = NULL;
    wgnn_status s = wgnn_lm_load(ctx, dir, NULL, &lm);
    CHECK(s == WGNN_OK, "llama config: %s", wgnn_context_error(ctx));
    if (s == WGNN_OK) {
        wgnn_lm_info in;
        wgnn_lm_get_info(lm, &in);
        int32_t ids[3] = {51, 928, 676};
        collect c = {{0}, 0};
        wgnn_lm_generate_options go = {0};
        go.greedy = 1;
        go.max_new_tokens = 4;
        go.ignore_eos = 1;
        s = wgnn_lm_generate(lm, ids, 3, &go, on_tok, &c, NULL);
        CHECK(s == WGNN_OK && c.n == 4 && !in.has_qk_norm && strcmp(in.model_type, "llama") == 0,
              "llama generate: %s", wgnn_context_error(ctx));
        wgnn_lm_destroy(lm);
    }
    tu_rm_folder(dir);
}

/* The decoder rows under a 4 KiB storage binding: each names the limit
 * (none of them splits a tensor across bindings). */
static void test_op_limits(wgnn_context *ctx) {
    WGPULimits saved = ctx->limits;
    ctx->limits.maxStorageBufferBindingSize = 4096;
    ctx->limits.minStorageBufferOffsetAlignment = 256;
    struct {
        const char *op;
        int n_in;
        wgnn_dtype dt[5];
        int rank[5];
        int64_t dims[5][4];
        const char *args[3];
        int n_args;
    } cases[] = {
        {"index_copy", 3, {WGNN_F32, WGNN_I32, WGNN_F32}, {2, 1, 2}, {{64, 32}, {1}, {1, 32}}, {"dim=0"}, 1},
        {"linear_q8", 3, {WGNN_F32, WGNN_I32, WGNN_F32}, {2, 2, 1}, {{1, 256}, {64, 64}, {64}}, {NULL}, 0},
        {"swiglu", 1, {WGNN_F32}, {2}, {{4, 1024}}, {NULL}, 0},
        {"qkv_rope", 3, {WGNN_F32, WGNN_F32, WGNN_F32}, {3, 2, 2}, {{1, 2, 1024}, {2, 128}, {2, 128}},
         {"num_heads=4", "num_kv_heads=2"}, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        wgnn_tensor *in[5] = {NULL}, *out[3] = {NULL};
        wgnn_desc din[5], dout[3];
        bool ok = true;
        for (int i = 0; i < cases[c].n_in; i++) {
            din[i] = (wgnn_desc){cases[c].dt[i], cases[c].rank[i], {0}};
            memcpy(din[i].dims, cases[c].dims[i], sizeof cases[c].dims[i]);
            ok = ok && wgnn_tensor_create(ctx, din[i].dtype, din[i].rank, din[i].dims, &in[i]) == WGNN_OK;
        }
        int n_out = 0;
        char err[512];
        ok = ok && wgnn_op_shapes(cases[c].op, din, cases[c].n_in, cases[c].args, cases[c].n_args, dout, 3, &n_out,
                                  err, sizeof err) == WGNN_OK;
        for (int i = 0; ok && i < n_out; i++)
            ok = wgnn_tensor_create(ctx, dout[i].dtype, dout[i].rank, dout[i].dims, &out[i]) == WGNN_OK;
        wgnn_status s = ok ? wgnn_op(ctx, cases[c].op, (const wgnn_tensor *const *)in, cases[c].n_in, cases[c].args,
                                     cases[c].n_args, out, n_out)
                           : WGNN_ERR_GPU;
        CHECK(s == WGNN_ERR_LIMIT && strstr(wgnn_context_error(ctx), "maxStorageBufferBindingSize"),
              "%s past a 4 KiB binding: %d %s", cases[c].op, (int)s, wgnn_context_error(ctx));
        for (int i = 0; i < 5; i++) wgnn_tensor_destroy(in[i]);
        for (int i = 0; i < 3; i++) wgnn_tensor_destroy(out[i]);
    }
    ctx->limits = saved;
    CHECK(wgnn_context_health(ctx) == WGNN_OK, "no uncaptured GPU error: %s", wgnn_context_error(ctx));
}

int main(int argc, char **argv) {
    snprintf(g_root, sizeof g_root, "%s", argc > 1 ? argv[1] : WGNN_SOURCE_DIR);
    wgnn_context *ctx = tu_context();
    wgnn_lm *lm = load(ctx, "qwen3", WGNN_LM_WEIGHTS_F32, 64);
    if (lm) {
        wgnn_lm_info in;
        wgnn_lm_get_info(lm, &in);
        CHECK(in.num_layers == 2 && in.num_kv_heads == 2 && in.head_dim == 16 && in.has_qk_norm &&
                  in.tie_word_embeddings && in.n_eos == 1 && in.eos[0] == 1023 && in.max_context == 64,
              "info");
        for (size_t i = 0; i < sizeof k_prompts / sizeof k_prompts[0]; i++)
            check_prompt(ctx, lm, "qwen3", k_prompts[i], 1e-3, 1e-3, true);
        test_sampling(ctx, lm);
        test_chunks(ctx, lm);
        wgnn_lm_destroy(lm);
    }
    /* weight formats: logits within what their rounding allows. float16
     * keeps 11 bits (measured max |diff| 0.005-0.01 on logits up to 8);
     * int8 with a scale per row keeps each weight within half a step, 0.4%
     * of its row's largest, and the tied lm_head and the layers add up:
     * measured 0.17-0.24 (about 3% of the largest logit). A wrong packing or
     * scale gives errors of the logits' own size. */
    static const struct { wgnn_lm_weights w; const char *name; double atol; } fmts[] = {
        {WGNN_LM_WEIGHTS_F16, "f16", 2e-2},
        {WGNN_LM_WEIGHTS_Q8, "q8", 0.4},
    };
    for (int f = 0; f < 2; f++) {
        lm = load(ctx, "qwen3", fmts[f].w, 64);
        if (!lm) continue;
        printf("  weights %s:\n", fmts[f].name);
        for (size_t i = 0; i < sizeof k_prompts / sizeof k_prompts[0]; i++)
            check_prompt(ctx, lm, "qwen3", k_prompts[i], fmts[f].atol, 0, false);
        wgnn_lm_destroy(lm);
    }
    lm = load(ctx, "qwen3_untied", WGNN_LM_WEIGHTS_F32, 64);
    if (lm) {
        wgnn_lm_info in;
        wgnn_lm_get_info(lm, &in);
        CHECK(!in.tie_word_embeddings, "untied");
        check_prompt(ctx, lm, "qwen3_untied", "english", 1e-3, 1e-3, true);
        check_prompt(ctx, lm, "qwen3_untied", "emoji", 1e-3, 1e-3, true);
        wgnn_lm_destroy(lm);
    }
    lm = load(ctx, "qwen3", WGNN_LM_WEIGHTS_F32, 32);
    if (lm) {
        test_bad_calls(ctx, lm);
        wgnn_lm_destroy(lm);
    }
    broken_folders(ctx);
    test_op_limits(ctx);
    wgnn_context_destroy(ctx);
    return tu_finish();
}
