/*
 * fuzz_config.c - libFuzzer harness for the decoders' config.json and
 * generation_config.json reader (wgnn__qwen3_config, src/models/qwen3.c)
 * on top of the JSON parser: any input gives a filled info or an error,
 * never a crash, an out-of-range size or EOS list.
 *
 *   make fuzz FUZZERS=config FUZZ_SECONDS=60
 *
 * fuzz/corpus_config: the test models' config.json and
 * generation_config.json files.
 */
#include "io/json.h"
#include "models/lm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wgnn__json j;
    char err[512];
    if (wgnn__json_parse((const char *)data, size, "config.json", &j, err, sizeof err) != WGNN_OK)
        return 0;
    /* the same text as config.json alone, and as both files */
    for (int pass = 0; pass < 2; pass++) {
        wgnn_lm lm;
        memset(&lm, 0, sizeof lm); /* ctx NULL: messages are dropped */
        snprintf(lm.dir, sizeof lm.dir, "fuzz");
        wgnn_status s = wgnn__qwen3_config(&lm, &j, pass ? &j : NULL);
        if (s == WGNN_OK) {
            const wgnn_lm_info *in = &lm.info;
            if (in->vocab_size < 1 || in->hidden_size < 4 || in->num_layers < 1 || in->num_heads < 1 ||
                in->num_kv_heads < 1 || in->num_heads % in->num_kv_heads || in->head_dim % 4 ||
                in->max_context < 1 || in->n_eos < 0 || in->n_eos > 8)
                abort();
            for (int i = 0; i < in->n_eos; i++)
                if (in->eos[i] < 0 || in->eos[i] >= in->vocab_size)
                    abort();
        }
    }
    wgnn__json_free(&j);
    return 0;
}
