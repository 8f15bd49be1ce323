/*
 * fuzz_json.c - libFuzzer harness for JSON parsing and the typed lookups
 * (src/io/json.c).
 *
 *   make fuzz FUZZERS=json FUZZ_SECONDS=60
 *
 * fuzz/corpus_json is the seed corpus (fuzz/make_corpus_io.py). Any input
 * gives a tree or an error with a message; every lookup on fixed paths
 * (the keys config.json and preprocessor_config.json use) gives WGNN_OK
 * or an error that starts with the label; never a crash.
 */
#include "io/json.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ERR_LEN 512

static const char *const PATHS[] = {
    "num_hidden_layers", "hidden_size", "layer_norm_eps", "hidden_act", "qkv_bias", "image_mean",
    "image_std", "size", "size.height", "vision_config", "vision_config.hidden_size",
    "vision_config.patch.size", "a", "a.b", "a.b.c", "", ".", "a..b",
};

static void check(wgnn_status s, const char *err)
{
    if (s != WGNN_OK && (err[0] == '\0' || strncmp(err, "fuzz.json: ", 11) != 0 || strlen(err) >= ERR_LEN))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wgnn__json j;
    char err[ERR_LEN];
    wgnn_status s = wgnn__json_parse((const char *)data, size, "fuzz.json", &j, err, sizeof err);
    if (s != WGNN_OK) {
        if (j.root != NULL || strncmp(err, "fuzz.json: ", 11) != 0)
            abort();
        return 0;
    }
    for (size_t k = 0; k < sizeof PATHS / sizeof PATHS[0]; k++) {
        const char *p = PATHS[k];
        int64_t i;
        double d, v[8];
        bool b;
        char str[16];
        int got = 0;
        (void)wgnn__json_has(&j, p);
        s = wgnn__json_int(&j, p, false, 0, 1, 1000, &i, err, sizeof err);
        check(s, err);
        if (s == WGNN_OK && (i < 1 || i > 1000))
            abort();
        check(wgnn__json_int(&j, p, true, 5, INT64_MIN, INT64_MAX, &i, err, sizeof err), err);
        s = wgnn__json_num(&j, p, false, 0, 0, 1, &d, err, sizeof err);
        check(s, err);
        if (s == WGNN_OK && !(d >= 0 && d <= 1))
            abort();
        check(wgnn__json_num(&j, p, true, 1, -INFINITY, INFINITY, &d, err, sizeof err), err);
        check(wgnn__json_bool(&j, p, k & 1, false, &b, err, sizeof err), err);
        s = wgnn__json_str(&j, p, (k & 1) ? "dflt" : NULL, str, sizeof str, err, sizeof err);
        check(s, err);
        if (s == WGNN_OK && strlen(str) >= sizeof str)
            abort();
        check(wgnn__json_nums(&j, p, v, 3, 0, NULL, err, sizeof err), err);
        s = wgnn__json_nums(&j, p, v, 0, 8, &got, err, sizeof err);
        check(s, err);
        if (s == WGNN_OK && (got < 1 || got > 8))
            abort();
    }
    wgnn__json_free(&j);
    return 0;
}
