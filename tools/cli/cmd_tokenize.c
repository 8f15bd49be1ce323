/* cmd_tokenize.c - `wgnn tokenize`: text to token ids and back with a
 * Hugging Face tokenizer.json (byte-level BPE), through wgnn_tokenizer_*. */
#include "args.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char k_usage_tokenize[] =
    "usage: wgnn tokenize --model DIR (--text TEXT | --decode ID,ID,...)\n"
    "  DIR is a Hugging Face folder holding tokenizer.json (or the file itself);\n"
    "  byte-level BPE as GPT-2, Llama 3, Qwen2 and Qwen3 use\n"
    "options:\n"
    "  --text TEXT      prints the token ids, space-separated, on one line (special\n"
    "                   tokens written in the text, such as <|im_end|>, are matched;\n"
    "                   the post_processor's template is not applied: no BOS / EOS\n"
    "                   is added, as transformers' add_special_tokens=False)\n"
    "  --decode IDS     prints the text of comma-separated ids (bytes that form no\n"
    "                   UTF-8 character come out as U+FFFD)\n";

static int decode_ids(const wgnn_tokenizer *t, const char *list, char *err)
{
    int32_t *ids = NULL;
    int n = 0, vocab = wgnn_tokenizer_vocab_size(t);
    int rc = parse_id_list("tokenize: --decode", list, vocab - 1, &ids, &n, err);
    if (rc != CLI_OK)
        return rc;
    size_t cap = wgnn_detok_max_out(t), k = 0;
    char *out = malloc(cap);
    if (out == NULL) {
        free(ids);
        return set_err(err, "tokenize: out of memory");
    }
    /* every id checked first: nothing is printed for a bad list */
    for (int i = 0; i < n && rc == CLI_OK; i++) {
        wgnn_detok probe;
        wgnn_detok_init(&probe);
        if (wgnn_detok_push(t, &probe, ids[i], out, cap, &k) != WGNN_OK)
            rc = set_err(err, "tokenize: --decode: id %d has no token", (int)ids[i]);
    }
    wgnn_detok d;
    wgnn_detok_init(&d);
    for (int i = 0; i < n && rc == CLI_OK; i++)
        if (wgnn_detok_push(t, &d, ids[i], out, cap, &k) == WGNN_OK)
            fwrite(out, 1, k, stdout);
    if (rc == CLI_OK) {
        wgnn_detok_flush(&d, out, cap, &k);
        fwrite(out, 1, k, stdout);
        fputc('\n', stdout);
    }
    free(out);
    free(ids);
    return rc;
}

int cmd_tokenize(const global_opts *g, int argc, char **argv)
{
    (void)g;
    const char *model = NULL, *text = NULL, *decode = NULL;
    const opt_spec specs[] = {
        {"--model", OPT_STR, &model, 0, 0, true},
        {"--text", OPT_STR, &text, 0, 0, false},
        {"--decode", OPT_STR, &decode, 0, 0, false},
    };
    parse_result pr = parse_opts("tokenize", k_usage_tokenize, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK)
        return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    if ((text == NULL) == (decode == NULL))
        return usage_error("tokenize", k_usage_tokenize, "give exactly one of --text and --decode");
    int rc_pre = decode ? id_list_syntax("tokenize", k_usage_tokenize, "--decode", decode) : CLI_OK;
    if (rc_pre != CLI_OK)
        return rc_pre;

    char err[ERR_LEN] = "";
    wgnn_tokenizer *t = NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = CLI_OK;
    if (wgnn_tokenizer_load(model, &t, err, sizeof err) != WGNN_OK) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    if (decode) {
        rc = decode_ids(t, decode, err);
        goto cleanup;
    }
    if (wgnn_tokenizer_encode(t, text, strlen(text), &ids, &n, err, sizeof err) != WGNN_OK) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        printf(i ? " %d" : "%d", (int)ids[i]);
    putchar('\n');

cleanup:
    free(ids);
    wgnn_tokenizer_free(t);
    return report(rc, err);
}
