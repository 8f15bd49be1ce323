/* cmd_generate.c - `wgnn generate`: text from a decoder LM folder (Qwen3,
 * Qwen2, Llama), streamed as it is generated (wgnn_lm_*, wgnn_tokenizer_*). */
#include "args.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char k_usage_generate[] =
    "usage: wgnn generate --model DIR (--prompt TEXT | --prompt-ids ID,ID,...) [options]\n"
    "  DIR is a Hugging Face folder: config.json (model_type qwen3, qwen2 or llama),\n"
    "  model.safetensors (or a sharded index), tokenizer.json (needed for --prompt and\n"
    "  to print text; without it the generated ids are printed), generation_config.json\n"
    "  (EOS ids). Text streams to stdout; a summary line goes to stderr. --prompt is\n"
    "  encoded as is: no BOS and no chat template is added (write them in the text).\n"
    "options:\n"
    "  --max-new-tokens N     stop after N new tokens (default 128; EOS or a full KV cache stops\n"
    "                         earlier; 0 with --logits-out: the prompt's logits only)\n"
    "  --greedy               argmax decoding (the default when no sampling option is given)\n"
    "  --temperature T        sample from softmax(logits / T) (0 < T <= 1e6), on the GPU\n"
    "  --top-k K              sample among the K most likely tokens (0: all)\n"
    "  --top-p P              sample among the most likely tokens holding mass P (0 < P <= 1)\n"
    "  --seed S               seed of the sampling's random numbers (default 0)\n"
    "  --weights W            f32 (default), f16 (half storage) or q8 (int8 weight-only)\n"
    "  --max-context N        KV-cache positions (default: min(max_position_embeddings, 4096))\n"
    "  --ignore-eos           do not stop at EOS (benchmarks)\n"
    "  --ids-out FILE         write prompt + generated ids, int32 .npy\n"
    "  --logits-out FILE      write the prompt's logits [prompt_len, vocab], float32 .npy\n"
    "  --profile              GPU time per node of the prefill and of one decode step (run after the timed ones)\n"
    "  --iters N              generate N times from the prompt (the text streams once) and\n"
    "                         report the median prefill and decode times (benchmarks)\n";

typedef struct gen_state {
    const wgnn_tokenizer *tok;
    wgnn_detok detok;
    char *buf;
    size_t cap;
    const wgnn_lm_info *info;
    int32_t *ids; /* prompt + generated, room for cap_ids */
    int n_ids, cap_ids;
    int printed;
    int no_token; /* generated ids without a token in tokenizer.json (a vocabulary padded past it) */
} gen_state;

static bool is_eos(const wgnn_lm_info *in, int32_t id) {
    for (int i = 0; i < in->n_eos; i++)
        if (in->eos[i] == id) return true;
    return false;
}

static int on_token(void *user, int32_t id) {
    gen_state *g = user;
    if (g->n_ids == g->cap_ids) return 1; /* not reached: the library stops at max_new_tokens */
    g->ids[g->n_ids++] = id;
    if (is_eos(g->info, id)) return 0; /* not printed */
    if (g->tok) {
        size_t n = 0;
        /* an id without a token prints nothing (as Hugging Face's decode
         * skips it); the summary line counts them */
        wgnn_status ds = wgnn_detok_push(g->tok, &g->detok, id, g->buf, g->cap, &n);
        if (ds == WGNN_OK) fwrite(g->buf, 1, n, stdout);
        else g->no_token++;
    } else {
        printf(g->printed ? " %d" : "%d", (int)id);
    }
    g->printed++;
    fflush(stdout);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int cmd_generate(const global_opts *g, int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *prompt_ids = NULL, *weights = "f32", *ids_out = NULL,
               *logits_out = NULL;
    long long max_new = 128, top_k = -1, seed = 0, max_ctx = 0, iters = 1;
    double temperature = NAN, top_p = NAN; /* NaN: not given (a given value is finite) */
    bool greedy = false, profile = false, ignore_eos = false;
    const opt_spec specs[] = {
        {"--model", OPT_STR, &model, 0, 0, true},
        {"--prompt", OPT_STR, &prompt, 0, 0, false},
        {"--prompt-ids", OPT_STR, &prompt_ids, 0, 0, false},
        {"--max-new-tokens", OPT_INT, &max_new, 0, 1 << 24, false},
        {"--greedy", OPT_FLAG, &greedy, 0, 0, false},
        {"--temperature", OPT_NUM, &temperature, 0, 0, false},
        {"--top-k", OPT_INT, &top_k, 0, INT32_MAX, false},
        {"--top-p", OPT_NUM, &top_p, 0, 0, false},
        {"--seed", OPT_INT, &seed, 0, INT64_MAX, false},
        {"--weights", OPT_STR, &weights, 0, 0, false},
        {"--max-context", OPT_INT, &max_ctx, 1, 1 << 24, false},
        {"--ignore-eos", OPT_FLAG, &ignore_eos, 0, 0, false},
        {"--ids-out", OPT_STR, &ids_out, 0, 0, false},
        {"--logits-out", OPT_STR, &logits_out, 0, 0, false},
        {"--profile", OPT_FLAG, &profile, 0, 0, false},
        {"--iters", OPT_INT, &iters, 1, 10000, false},
    };
    int rc_pre;
    parse_result pr = parse_opts("generate", k_usage_generate, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    if ((prompt == NULL) == (prompt_ids == NULL))
        return usage_error("generate", k_usage_generate, "give exactly one of --prompt and --prompt-ids");
    if (prompt_ids && (rc_pre = id_list_syntax("generate", k_usage_generate, "--prompt-ids", prompt_ids)) != CLI_OK)
        return rc_pre;
    bool sampling = !isnan(temperature) || top_k >= 0 || !isnan(top_p);
    if (greedy && sampling)
        return usage_error("generate", k_usage_generate, "--greedy and sampling options exclude each other");
    if (!isnan(temperature) && !(temperature > 0 && temperature <= 1e6))
        return usage_error("generate", k_usage_generate, "--temperature must be in (0, 1e6] (greedy decoding is --greedy)");
    if (!isnan(top_p) && !(top_p > 0 && top_p <= 1))
        return usage_error("generate", k_usage_generate, "--top-p must be in (0, 1]");
    const char *out_paths[2] = {ids_out, logits_out}, *out_opts[2] = {"--ids-out", "--logits-out"};
    if (check_outputs("generate", k_usage_generate, out_paths, out_opts, 2) != CLI_OK) return CLI_USAGE;
    if (max_new == 0 && !logits_out)
        return usage_error("generate", k_usage_generate,
                           "--max-new-tokens 0 generates nothing: add --logits-out for the prompt's logits");
    wgnn_lm_options lo = {WGNN_LM_WEIGHTS_F32, (int)max_ctx};
    if (strcmp(weights, "f16") == 0) lo.weights = WGNN_LM_WEIGHTS_F16;
    else if (strcmp(weights, "q8") == 0) lo.weights = WGNN_LM_WEIGHTS_Q8;
    else if (strcmp(weights, "f32") != 0)
        return usage_error("generate", k_usage_generate, "--weights: \"%s\" is not f32, f16 or q8", weights);

    char err[ERR_LEN] = "";
    int rc = CLI_OK;
    wgnn_context *ctx = NULL;
    wgnn_lm *lm = NULL;
    wgnn_tokenizer *tok = NULL;
    int32_t *ids = NULL;
    float *logits = NULL;
    gen_state gs = {0};
    int n_prompt = 0;

    /* the tokenizer: needed for --prompt; optional otherwise (ids are printed) */
    char tpath[1100];
    snprintf(tpath, sizeof tpath, "%s/tokenizer.json", model);
    struct stat sb;
    if (prompt || stat(tpath, &sb) == 0) {
        if (wgnn_tokenizer_load(tpath, &tok, err, sizeof err) != WGNN_OK) {
            rc = CLI_FAIL;
            goto cleanup;
        }
    }
    if (prompt) {
        size_t n = 0;
        if (wgnn_tokenizer_encode(tok, prompt, strlen(prompt), &ids, &n, err, sizeof err) != WGNN_OK) {
            rc = CLI_FAIL;
            goto cleanup;
        }
        if (n == 0) {
            rc = set_err(err, "generate: the prompt has no tokens");
            goto cleanup;
        }
        n_prompt = (int)n;
    } else if ((rc = parse_id_list("generate: --prompt-ids", prompt_ids, INT32_MAX, &ids, &n_prompt, err)) != CLI_OK) {
        goto cleanup;
    }
    if ((rc = open_context(g, &ctx, err)) != CLI_OK) goto cleanup;
    wgnn_status s = wgnn_lm_load(ctx, model, &lo, &lm);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    wgnn_lm_info info;
    wgnn_lm_get_info(lm, &info);
    if (tok && wgnn_tokenizer_vocab_size(tok) > info.vocab_size) {
        rc = set_err(err, "generate: %s has %d tokens but the model's vocab_size is %d", tpath,
                     wgnn_tokenizer_vocab_size(tok), info.vocab_size);
        goto cleanup;
    }
    if (logits_out && !(logits = alloc_floats((uint64_t)n_prompt * (uint64_t)info.vocab_size, err))) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    int room = info.max_context - n_prompt;
    int max_gen = max_new < room ? (int)max_new : room < 0 ? 0 : room;
    gs.tok = tok;
    gs.info = &info;
    gs.cap = tok ? wgnn_detok_max_out(tok) : 0;
    gs.buf = gs.cap ? malloc(gs.cap) : NULL;
    gs.cap_ids = n_prompt + max_gen;
    gs.ids = malloc((size_t)gs.cap_ids * sizeof *gs.ids);
    if (!gs.ids || (gs.cap && !gs.buf)) {
        rc = set_err(err, "generate: out of memory");
        goto cleanup;
    }
    wgnn_detok_init(&gs.detok);
    memcpy(gs.ids, ids, (size_t)n_prompt * sizeof *ids);
    gs.n_ids = n_prompt;
    wgnn_lm_generate_options go = {0};
    go.max_new_tokens = max_new <= room ? (int)max_new : 0; /* 0: to the end of the cache, the stop said so */
    go.greedy = !sampling;
    go.temperature = !isnan(temperature) ? (float)temperature : 1.0f;
    go.top_k = top_k > 0 ? (int)top_k : 0;
    go.top_p = !isnan(top_p) ? (float)top_p : 1.0f;
    go.seed = (uint64_t)seed;
    go.ignore_eos = ignore_eos;
    go.prefill_logits = logits;
    go.profile = profile;
    wgnn_lm_stats st = {0};
    if (max_gen == 0 && !logits_out) {
        rc = set_err(err, "generate: the prompt's %d tokens fill the KV cache (%d positions): nothing to generate",
                     n_prompt, info.max_context);
        goto cleanup;
    }
    if (max_new == 0) { /* the prompt's logits only (wgnn_lm_generate's 0 means "to the cache's end") */
        double t0 = now_ms();
        s = wgnn_lm_forward(lm, ids, n_prompt, 0, logits);
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        fprintf(stderr, "wgnn: %s, %s weights: prompt %d tokens, logits in %.2f ms (building the graph included); "
                "no tokens generated (--max-new-tokens 0)\n", info.model_type, weights, n_prompt, now_ms() - t0);
        goto save;
    }
    s = wgnn_lm_generate(lm, ids, n_prompt, &go, on_token, &gs, &st);
    if (gs.tok) {
        size_t n = 0;
        wgnn_detok_flush(&gs.detok, gs.buf, gs.cap, &n);
        fwrite(gs.buf, 1, n, stdout);
    }
    if (gs.printed) putchar('\n');
    fflush(stdout);
    /* repeats: the same generation, silent; medians of the timings */
    double *pre = calloc((size_t)iters, sizeof *pre), *dec = calloc((size_t)iters, sizeof *dec);
    double *rec = calloc((size_t)iters, sizeof *rec);
    if (!pre || !dec || !rec) {
        free(pre);
        free(dec);
        free(rec);
        rc = set_err(err, "generate: out of memory");
        goto cleanup;
    }
    double setup_ms = st.setup_ms;
    pre[0] = st.prefill_ms;
    dec[0] = st.generated_tokens > 1 ? st.decode_ms / (st.generated_tokens - 1) : 0;
    rec[0] = st.generated_tokens > 1 ? st.decode_record_ms / (st.generated_tokens - 1) : 0;
    for (long long it = 1; s == WGNN_OK && it < iters; it++) {
        wgnn_lm_stats si;
        wgnn_lm_generate_options gi = go;
        gi.max_new_tokens = st.generated_tokens; /* as many as the first run made */
        gi.ignore_eos = 1;
        gi.profile = profile && it == iters - 1;
        s = wgnn_lm_generate(lm, ids, n_prompt, &gi, NULL, NULL, &si);
        pre[it] = si.prefill_ms;
        dec[it] = si.generated_tokens > 1 ? si.decode_ms / (si.generated_tokens - 1) : 0;
        rec[it] = si.generated_tokens > 1 ? si.decode_record_ms / (si.generated_tokens - 1) : 0;
    }
    qsort(pre, (size_t)iters, sizeof *pre, cmp_double);
    qsort(dec, (size_t)iters, sizeof *dec, cmp_double);
    qsort(rec, (size_t)iters, sizeof *rec, cmp_double);
    double pre_ms = pre[iters / 2], dec_ms = dec[iters / 2], rec_ms = rec[iters / 2];
    free(pre);
    free(dec);
    free(rec);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    char why[96], decode[160] = "no decode steps";
    if (st.stop == WGNN_LM_STOP_EOS) snprintf(why, sizeof why, "at EOS");
    else if (st.stop == WGNN_LM_STOP_MAX_NEW) snprintf(why, sizeof why, "at --max-new-tokens");
    else snprintf(why, sizeof why, "at the end of the KV cache, %d positions (--max-context)", info.max_context);
    if (st.generated_tokens > 1)
        snprintf(decode, sizeof decode, "decode %.2f tokens/s (%.3f ms/token, %.3f of it recording and submitting)",
                 dec_ms > 0 ? 1e3 / dec_ms : 0, dec_ms, rec_ms);
    char unprinted[160] = "";
    if (gs.no_token)
        snprintf(unprinted, sizeof unprinted, " (%d of them with no token in tokenizer.json: not printed, in --ids-out)",
                 gs.no_token);
    fprintf(stderr,
            "wgnn: %s, %s weights: prompt %d token%s, prefill %.2f ms (%.1f tokens/s); generated %d token%s%s, "
            "stopped %s; %s%s; graphs built in %.1f ms\n",
            info.model_type, weights, st.prompt_tokens, st.prompt_tokens == 1 ? "" : "s", pre_ms, pre_ms > 0 ? 1e3 * st.prompt_tokens / pre_ms : 0,
            st.generated_tokens, st.generated_tokens == 1 ? "" : "s", unprinted, why, decode,
            iters > 1 ? " (medians of --iters runs)" : "", setup_ms);
    if (profile) {
        uint64_t sum, total;
        wgnn_graph *pg = wgnn_lm_graph(lm, 0), *dg = wgnn_lm_graph(lm, 1);
        if (pg && print_profile(stderr, ctx, pg, "profile (prefill)", &sum, &total) == WGNN_OK)
            fprintf(stderr, "prefill GPU time: %.3f ms summed over nodes, %.3f ms first start to last end\n",
                    (double)sum / 1e6, (double)total / 1e6);
        if (dg && print_profile(stderr, ctx, dg, "profile (a decode step, after the timed ones)", &sum, &total) == WGNN_OK)
            fprintf(stderr, "decode step GPU time: %.3f ms summed over nodes, %.3f ms first start to last end\n",
                    (double)sum / 1e6, (double)total / 1e6);
    }
save:;
    out_file outs[2];
    int n_out = 0;
    int64_t idims[1] = {gs.n_ids}, ldims[2] = {n_prompt, info.vocab_size};
    if (ids_out) outs[n_out++] = (out_file){ids_out, WGNN_I32, 1, idims, gs.ids};
    if (logits_out) outs[n_out++] = (out_file){logits_out, WGNN_F32, 2, ldims, logits};
    if (n_out) rc = save_all(outs, n_out, err);

cleanup:
    free(gs.buf);
    free(gs.ids);
    free(ids);
    free(logits);
    wgnn_lm_destroy(lm);
    wgnn_context_destroy(ctx);
    wgnn_tokenizer_free(tok);
    return report(rc, err);
}
