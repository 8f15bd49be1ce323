/* lm.c - wgnn_lm_*: loading, the graph cache, forward runs and generation
 * (the architecture is in qwen3.c). */
#include "models/lm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static wgnn_status lm_load_locked(wgnn_context *ctx, const char *dir, const wgnn_lm_options *opts, wgnn_lm **out) {
    if (!out) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_lm_load: out is NULL");
    *out = NULL;
    if (!ctx) return WGNN_ERR_INVALID_ARGUMENT;
    if (!dir) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_lm_load: dir is NULL");
    wgnn_lm_weights wm = opts ? opts->weights : WGNN_LM_WEIGHTS_F32;
    if ((unsigned)wm > WGNN_LM_WEIGHTS_Q8)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_lm_load: unknown weights option %d", (int)wm);
    int max_ctx = opts ? opts->max_context : 0;
    if (max_ctx < 0 || max_ctx > (1 << 24))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_lm_load: max_context %d is not in [0, 2^24]", max_ctx);
    if (strlen(dir) > 900) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_lm_load: folder path too long");
    wgnn_lm *lm = calloc(1, sizeof *lm);
    if (!lm) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "wgnn_lm_load: out of host memory");
    lm->ctx = ctx;
    lm->weights = wm;
    lm->info.max_context = max_ctx;
    snprintf(lm->dir, sizeof lm->dir, "%s", dir);

    char path[1100], err[1024];
    wgnn__json cfg = {0}, gen = {0};
    bool has_gen = false;
    wgnn__st *st = NULL;
    snprintf(path, sizeof path, "%s/config.json", dir);
    wgnn_status s = wgnn__json_load(path, 0, &cfg, err, sizeof err);
    if (s != WGNN_OK) s = wgnn__err(ctx, s, "%s", err);
    if (s == WGNN_OK) {
        snprintf(path, sizeof path, "%s/generation_config.json", dir);
        FILE *f = fopen(path, "rb");
        if (f) {
            fclose(f);
            s = wgnn__json_load(path, 0, &gen, err, sizeof err);
            if (s != WGNN_OK) s = wgnn__err(ctx, s, "%s", err);
            else if (!cJSON_IsObject(gen.root))
                s = wgnn__err(ctx, WGNN_ERR_FORMAT, "%s: must be a JSON object", path);
            has_gen = s == WGNN_OK;
        }
    }
    if (s == WGNN_OK) s = wgnn__qwen3_config(lm, &cfg, has_gen ? &gen : NULL);
    if (s == WGNN_OK) {
        s = wgnn__st_open(dir, &st, err, sizeof err);
        if (s != WGNN_OK) s = wgnn__err(ctx, s, "%s", err);
    }
    if (s == WGNN_OK) s = wgnn__qwen3_load(lm, st);
    if (s == WGNN_OK) s = wgnn_context_sync(ctx); /* uploads done, errors surfaced here */
    wgnn__st_close(st);
    wgnn__json_free(&cfg);
    wgnn__json_free(&gen);
    if (s != WGNN_OK) {
        wgnn_lm_destroy(lm);
        return s;
    }
    *out = lm;
    return WGNN_OK;
}

/* The public calls that make other public calls (loads, forward, generate)
 * hold the context throughout: the inner calls enter again on this thread,
 * and another thread is refused (WGNN_ERR_BUSY) until the outer one returns,
 * as wgnn.h promises (gpu/error.c). */
wgnn_status wgnn_lm_load(wgnn_context *ctx, const char *dir, const wgnn_lm_options *opts, wgnn_lm **out) {
    if (!ctx) return lm_load_locked(ctx, dir, opts, out); /* its messages for NULL arguments */
    wgnn_status s = wgnn__enter(ctx);
    return s == WGNN_OK ? wgnn__leave(ctx, lm_load_locked(ctx, dir, opts, out)) : s;
}

static void mat_free(wgnn__lm_mat *m) {
    wgnn_tensor_destroy(m->w);
    wgnn_tensor_destroy(m->scale);
    wgnn_tensor_destroy(m->bias);
}

void wgnn_lm_destroy(wgnn_lm *lm) {
    if (!lm) return;
    for (int i = 0; i < WGNN__LM_GRAPHS; i++) wgnn_graph_destroy(lm->graphs[i].g);
    for (int l = 0; lm->layers && l < lm->info.num_layers; l++) {
        wgnn__lm_layer *L = &lm->layers[l];
        wgnn__lm_mat *ms[4] = {&L->qkv, &L->o, &L->gate_up, &L->down};
        for (int i = 0; i < 4; i++) mat_free(ms[i]);
        wgnn_tensor *ts[6] = {L->in_norm, L->post_norm, L->q_norm, L->k_norm, L->kc, L->vc};
        for (int i = 0; i < 6; i++) wgnn_tensor_destroy(ts[i]);
    }
    free(lm->layers);
    if (lm->lm_head.w == lm->embed) lm->lm_head.w = NULL; /* tied */
    mat_free(&lm->lm_head);
    wgnn_tensor_destroy(lm->embed);
    wgnn_tensor_destroy(lm->norm);
    wgnn_tensor_destroy(lm->cos);
    wgnn_tensor_destroy(lm->sin);
    free(lm);
}

void wgnn_lm_get_info(const wgnn_lm *lm, wgnn_lm_info *info) {
    if (lm && info) *info = lm->info;
}

wgnn_graph *wgnn_lm_graph(wgnn_lm *lm, int which) {
    if (!lm || which < 0 || which > 1) return NULL;
    return which ? lm->last_decode : lm->last_prefill;
}

/* The graph for n tokens of this kind (and sampling parameters): a cached
 * one, else built into the least recently used slot. */
static wgnn_status get_graph(wgnn_lm *lm, int n, wgnn__lm_kind kind, float temp, int top_k, float top_p,
                             wgnn__lm_graph **out) {
    wgnn__lm_graph *lru = &lm->graphs[0];
    for (int i = 0; i < WGNN__LM_GRAPHS; i++) {
        wgnn__lm_graph *g = &lm->graphs[i];
        if (g->g && g->n == n && g->kind == kind &&
            (kind != WGNN__LM_SAMPLE || (g->temperature == temp && g->top_k == top_k && g->top_p == top_p))) {
            g->used = ++lm->stamp;
            *out = g;
            return WGNN_OK;
        }
        if (!g->g || g->used < lru->used) lru = g;
        if (!g->g) break;
    }
    if (lm->last_prefill == lru->g) lm->last_prefill = NULL;
    if (lm->last_decode == lru->g) lm->last_decode = NULL;
    wgnn_graph_destroy(lru->g);
    memset(lru, 0, sizeof *lru);
    lru->n = n;
    lru->kind = kind;
    lru->temperature = temp;
    lru->top_k = top_k;
    lru->top_p = top_p;
    wgnn_status s = wgnn__qwen3_build(lm, lru);
    if (s != WGNN_OK) {
        wgnn_graph_destroy(lru->g);
        memset(lru, 0, sizeof *lru);
        return s;
    }
    lru->used = ++lm->stamp;
    *out = lru;
    return WGNN_OK;
}

/* The inputs of a run of n tokens at positions pos0.. (ids NULL: keep the
 * ids input, which the previous decode step wrote on the GPU): the graph
 * reads the positions off the cache length pos0 + n. */
static wgnn_status set_inputs(wgnn__lm_graph *g, const int32_t *ids, int n, int pos0, float u) {
    int32_t len = pos0 + n;
    wgnn_status s = ids ? wgnn_graph_set_input(g->g, g->ids, ids, (size_t)n * sizeof *ids) : WGNN_OK;
    if (s == WGNN_OK) s = wgnn_graph_set_input(g->g, g->lens, &len, sizeof len);
    if (s == WGNN_OK && g->u >= 0) s = wgnn_graph_set_input(g->g, g->u, &u, sizeof u);
    return s;
}

static wgnn_status run(wgnn__lm_graph *g, const int32_t *ids, int n, int pos0, float u, int profile) {
    wgnn_status s = set_inputs(g, ids, n, pos0, u);
    return s == WGNN_OK ? wgnn_graph_run(g->g, profile) : s;
}

/* One decode step submitted without waiting (wgnn__graph_submit), its
 * token copied into read-back slot `slot`. id: the input token, or NULL to
 * take the one the previous step wrote into the ids input on the GPU. */
static wgnn_status step_submit(wgnn__lm_graph *g, const int32_t *id, int pos, float u, int slot, wgnn_lm_stats *stats) {
    wgnn_status s = set_inputs(g, id, 1, pos, u);
    if (s == WGNN_OK) s = wgnn__graph_submit(g->g, g->out, slot);
    wgnn_graph_stats gs;
    if (s == WGNN_OK && stats && wgnn_graph_get_stats(g->g, &gs) == WGNN_OK) stats->decode_record_ms += gs.last_record_ms;
    return s;
}

static wgnn_status check_ids(wgnn_lm *lm, const char *fn, const int32_t *ids, int n, int pos0) {
    if (!ids || n < 1)
        return wgnn__err(lm->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: no tokens (ids NULL or n < 1)", fn);
    if (pos0 < 0)
        return wgnn__err(lm->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: pos0 %d must be >= 0", fn, pos0);
    if ((int64_t)pos0 + n > lm->info.max_context)
        return wgnn__err(lm->ctx, WGNN_ERR_LIMIT,
                         "%s: positions %d..%lld pass the KV cache's %d positions (wgnn_lm_options.max_context, "
                         "--max-context)",
                         fn, pos0, (long long)pos0 + n - 1, lm->info.max_context);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= lm->info.vocab_size)
            return wgnn__err(lm->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: token id %d (at %d) is not in [0, %d)", fn,
                             ids[i], i, lm->info.vocab_size);
    return WGNN_OK;
}

/* A call from inside wgnn_lm_generate's on_token would overwrite the KV
 * cache and graphs the generation is using. */
static wgnn_status check_idle(wgnn_lm *lm, const char *fn) {
    if (!lm->generating) return WGNN_OK;
    return wgnn__err(lm->ctx, WGNN_ERR_BUSY,
                     "%s: called while wgnn_lm_generate runs (from its on_token callback?): the generation uses "
                     "the model's KV cache; call it after wgnn_lm_generate returns", fn);
}

static wgnn_status lm_forward_locked(wgnn_lm *lm, const int32_t *ids, int n, int pos0, float *logits) {
    if (!lm) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = check_idle(lm, "wgnn_lm_forward");
    if (s == WGNN_OK) s = check_ids(lm, "wgnn_lm_forward", ids, n, pos0);
    wgnn__lm_graph *g = NULL;
    if (s == WGNN_OK) s = get_graph(lm, n, logits ? WGNN__LM_LOGITS : WGNN__LM_ARGMAX, 0, 0, 0, &g);
    if (s == WGNN_OK) s = run(g, ids, n, pos0, 0, 0);
    if (s == WGNN_OK && logits)
        s = wgnn_graph_read_output(g->g, g->out, logits, (size_t)n * (size_t)lm->info.vocab_size * sizeof *logits);
    return s;
}

wgnn_status wgnn_lm_forward(wgnn_lm *lm, const int32_t *ids, int n, int pos0, float *logits) {
    if (!lm) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(lm->ctx);
    return s == WGNN_OK ? wgnn__leave(lm->ctx, lm_forward_locked(lm, ids, n, pos0, logits)) : s;
}

static bool is_eos(const wgnn_lm *lm, int32_t id) {
    for (int i = 0; i < lm->info.n_eos; i++)
        if (lm->info.eos[i] == id) return true;
    return false;
}

/* After the made-th token id: why generation stops there (NONE: it goes on).
 * on_token sees every token, EOS and the last one included. max_new is
 * opts->max_new_tokens bounded by the cache's room. */
static wgnn_lm_stop stop_reason(const wgnn_lm *lm, const wgnn_lm_generate_options *o, wgnn_lm_token_fn on_token,
                                void *user, int32_t id, int made, int max_new) {
    if (on_token && on_token(user, id)) return WGNN_LM_STOP_CALLBACK;
    if (!o->ignore_eos && is_eos(lm, id)) return WGNN_LM_STOP_EOS;
    if (made < max_new) return WGNN_LM_STOP_NONE;
    return o->max_new_tokens > 0 && made >= o->max_new_tokens ? WGNN_LM_STOP_MAX_NEW : WGNN_LM_STOP_CONTEXT;
}

/* an error after which no wait on the GPU is worth starting: a timeout
 * (the next would take as long), a lost device, a GPU error */
static bool stuck(wgnn_status s) {
    return s == WGNN_ERR_TIMEOUT || s == WGNN_ERR_DEVICE_LOST || s == WGNN_ERR_GPU;
}

/* splitmix64 -> a float in [0, 1) with 24 random bits */
static float next_u(uint64_t *st) {
    uint64_t z = (*st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) / 16777216.0f;
}

static wgnn_status lm_generate(wgnn_lm *lm, const int32_t *prompt, int n_prompt, const wgnn_lm_generate_options *opts,
                               wgnn_lm_token_fn on_token, void *user, wgnn_lm_stats *stats);

/* Held for the whole generation, on_token's calls included: another
 * thread is refused until it returns. */
wgnn_status wgnn_lm_generate(wgnn_lm *lm, const int32_t *prompt, int n_prompt, const wgnn_lm_generate_options *opts,
                             wgnn_lm_token_fn on_token, void *user, wgnn_lm_stats *stats) {
    if (!lm) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(lm->ctx);
    if (s != WGNN_OK) return s;
    s = check_idle(lm, "wgnn_lm_generate");
    if (s != WGNN_OK) {
        if (stats) memset(stats, 0, sizeof *stats);
        return wgnn__leave(lm->ctx, s);
    }
    lm->generating = true;
    s = lm_generate(lm, prompt, n_prompt, opts, on_token, user, stats);
    lm->generating = false;
    return wgnn__leave(lm->ctx, s);
}

static wgnn_status lm_generate(wgnn_lm *lm, const int32_t *prompt, int n_prompt, const wgnn_lm_generate_options *opts,
                               wgnn_lm_token_fn on_token, void *user, wgnn_lm_stats *stats) {
    wgnn_lm_generate_options o = {0};
    if (opts) o = *opts;
    if (stats) memset(stats, 0, sizeof *stats);
    wgnn_status s = check_ids(lm, "wgnn_lm_generate", prompt, n_prompt, 0);
    if (s != WGNN_OK) return s;
    if (o.max_new_tokens < 0)
        return wgnn__err(lm->ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_lm_generate: max_new_tokens %d < 0",
                         o.max_new_tokens);
    float temp = o.temperature == 0 ? 1.0f : o.temperature, top_p = o.top_p == 0 ? 1.0f : o.top_p;
    if (!o.greedy && (!(temp > 0) || temp > 1e6f || o.top_k < 0 || !(top_p > 0) || top_p > 1))
        return wgnn__err(lm->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "wgnn_lm_generate: sampling needs temperature > 0, top_k >= 0 and top_p in (0, 1] "
                         "(got %g, %d, %g); greedy decoding is argmax",
                         (double)o.temperature, o.top_k, (double)o.top_p);
    wgnn__lm_kind kind = o.greedy ? WGNN__LM_ARGMAX : WGNN__LM_SAMPLE;
    uint64_t rng = o.seed;
    int room = lm->info.max_context - n_prompt;
    int max_new = o.max_new_tokens == 0 || o.max_new_tokens > room ? room : o.max_new_tokens;

    /* the graphs first (built, pipelines compiled: setup_ms), then the
     * timed runs */
    double ts = now_ms();
    wgnn__lm_graph *pre = NULL, *dec = NULL; /* slots stay put: the later get cannot evict the one just used */
    if (o.prefill_logits) s = get_graph(lm, n_prompt, WGNN__LM_LOGITS, 0, 0, 0, &pre);
    else if (max_new > 0) s = get_graph(lm, n_prompt, kind, temp, o.top_k, top_p, &pre);
    if (s == WGNN_OK && max_new > 0) s = get_graph(lm, 1, kind, temp, o.top_k, top_p, &dec);
    if (stats) stats->setup_ms = now_ms() - ts;
    if (s != WGNN_OK) return s;

    /* prefill: the prompt in one run; the logits of every position only when asked */
    double t0 = now_ms();
    int32_t id = -1;
    if (o.prefill_logits) {
        s = run(pre, prompt, n_prompt, 0, 0, o.profile);
        if (s == WGNN_OK)
            s = wgnn_graph_read_output(pre->g, pre->out, o.prefill_logits,
                                       (size_t)n_prompt * (size_t)lm->info.vocab_size * sizeof(float));
        if (s == WGNN_OK) lm->last_prefill = pre->g;
        /* the first new token: the last prompt token runs again as a
         * one-token step (rewriting its cache row with the same values), so
         * that the choice is made on the GPU by the same op as every later one */
        if (s == WGNN_OK && max_new > 0) {
            s = run(dec, prompt + n_prompt - 1, 1, n_prompt - 1, next_u(&rng), 0);
            if (s == WGNN_OK) s = wgnn_graph_read_output(dec->g, dec->out, &id, sizeof id);
        }
    } else if (max_new > 0) {
        s = run(pre, prompt, n_prompt, 0, next_u(&rng), o.profile);
        if (s == WGNN_OK) s = wgnn_graph_read_output(pre->g, pre->out, &id, sizeof id);
        if (s == WGNN_OK) lm->last_prefill = pre->g;
    }
    double t1 = now_ms();
    if (stats) {
        stats->prompt_tokens = n_prompt;
        stats->prefill_ms = t1 - t0;
    }
    if (s != WGNN_OK) return s;
    if (max_new == 0) { /* the prompt fills the cache: its logits only */
        if (stats) stats->stop = WGNN_LM_STOP_CONTEXT;
        return s;
    }

    /* decode: one run per token, pipelined: the step graph writes its token
     * into its own ids input on the GPU, so steps are recorded and submitted
     * before the tokens of the steps ahead of them are read back, up to
     * `depth` in flight, each with its own read-back slot (taken in turn).
     * With one step in flight besides the one being fetched (depth 2) the
     * host must record the next step within one step's GPU time after it
     * wakes, or the GPU waits; depth 3 gives it two. Steps submitted past a
     * stop (EOS, on_token) only write cache rows past the sequence; they are
     * waited for and dropped. */
    uint32_t knob = lm->ctx->knobs.decode_depth; /* 0, or 1 .. WGNN__SLOTS */
    int depth = knob ? (int)knob : WGNN__LM_DEPTH;
    int pos = n_prompt, made = 1, oldest = 0, inflight = 0;
    if (stats) stats->generated_tokens = made;
    wgnn_lm_stop why = stop_reason(lm, &o, on_token, user, id, made, max_new);
    if (stats) stats->stop = why;
    while (s == WGNN_OK && why == WGNN_LM_STOP_NONE) {
        /* top up: a step makes token made + inflight + 1, so another one
         * goes in while that is within max_new and its row in the cache */
        while (inflight < depth && made + inflight < max_new && pos < lm->info.max_context) {
            /* the first step takes the prompt's token; the rest read theirs on the GPU */
            s = step_submit(dec, pos == n_prompt ? &id : NULL, pos, next_u(&rng), (oldest + inflight) % depth, stats);
            if (s != WGNN_OK) break;
            inflight++;
            pos++;
        }
        if (s != WGNN_OK || inflight == 0) break;
        s = wgnn__graph_fetch(dec->g, oldest, &id, sizeof id);
        oldest = (oldest + 1) % depth;
        inflight--;
        if (s != WGNN_OK) break;
        lm->last_decode = dec->g;
        made++;
        if (stats) stats->generated_tokens = made;
        why = stop_reason(lm, &o, on_token, user, id, made, max_new);
        if (stats) stats->stop = why;
    }
    /* the speculative steps past a stop (or an error): waited for, their
     * tokens dropped. The first error is returned, unless a wait then finds
     * the GPU stuck (a timeout, a lost device, a GPU error): that one is,
     * and nothing more is waited for (each wait would take the timeout) */
    while (inflight > 0 && !stuck(s)) {
        int32_t drop;
        wgnn_status d = wgnn__graph_fetch(dec->g, oldest, &drop, sizeof drop);
        if (s == WGNN_OK || stuck(d)) s = d;
        oldest = (oldest + 1) % depth;
        inflight--;
    }
    if (stats) stats->decode_ms = now_ms() - t1;
    /* profile: one more step, run and timed on its own after the timing,
     * at the next position (a cache row past the sequence) */
    if (s == WGNN_OK && o.profile && made > 1 && pos < lm->info.max_context) {
        s = run(dec, &id, 1, pos, next_u(&rng), 1);
        if (s == WGNN_OK) lm->last_decode = dec->g;
    }
    return s;
}
