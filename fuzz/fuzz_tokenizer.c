/*
 * fuzz_tokenizer.c - libFuzzer harness for tokenizer.json loading, encoding
 * and incremental decoding (src/io/tokenizer.c).
 *
 *   make fuzz FUZZERS=tokenizer FUZZ_SECONDS=60
 *
 * fuzz/corpus_tokenizer is the seed corpus (small GPT-2 and Qwen2 style
 * files). Any input gives a tokenizer or an error that starts with the
 * label; a tokenizer encodes fixed texts to ids in range (or an error with a
 * message) and every id decodes within wgnn__detok_max_out; never a crash.
 */
#include "io/tokenizer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ERR_LEN 512

static const char *const TEXTS[] = {
    "Hello world's  123",
    "<|im_start|>user\nhi<|im_end|>",
    "a   b\n\n\tc \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80! cafe\xCC\x81 HE\xE2\x80\x99S",
    "",
    "<|endoftext|><|endoftext|>x",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wgnn__tokenizer *t = NULL;
    char err[ERR_LEN];
    wgnn_status s = wgnn__tokenizer_parse((const char *)data, size, "fuzz.json", &t, err, sizeof err);
    if (s != WGNN_OK) {
        if (t != NULL || strncmp(err, "fuzz.json: ", 11) != 0)
            abort();
        return 0;
    }
    int vocab = wgnn__tokenizer_vocab_size(t);
    size_t cap = wgnn__detok_max_out(t);
    char *out = malloc(cap ? cap : 1);
    if (out == NULL)
        abort();
    for (size_t k = 0; k < sizeof TEXTS / sizeof TEXTS[0]; k++) {
        int32_t *ids = NULL;
        size_t n = 0;
        s = wgnn__tokenizer_encode(t, TEXTS[k], strlen(TEXTS[k]), &ids, &n, err, sizeof err);
        if (s != WGNN_OK) {
            if (ids != NULL || n != 0 || strncmp(err, "fuzz.json: ", 11) != 0)
                abort();
            continue;
        }
        wgnn__detok d;
        wgnn__detok_init(&d);
        for (size_t i = 0; i < n; i++) {
            size_t got = 0;
            if (ids[i] < 0 || ids[i] >= vocab)
                abort();
            if (wgnn__detok_push(t, &d, ids[i], out, cap, &got) != WGNN_OK || got > cap)
                abort();
        }
        size_t got = 0;
        if (cap >= 3 && wgnn__detok_flush(&d, out, cap, &got) != WGNN_OK)
            abort();
        free(ids);
    }
    (void)wgnn__tokenizer_token_id(t, "<|endoftext|>");
    free(out);
    wgnn__tokenizer_free(t);
    return 0;
}
