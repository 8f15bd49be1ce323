/*
 * fuzz_op_args.c - libFuzzer harness for the op table's argument parser and
 * shape checks: wgnn_op_shapes, pure host code (no GPU is touched).
 *
 *   make fuzz            (builds build-fuzz/fuzz_op_args with the library
 *                         compiled for fuzzing, runs it on a copy of
 *                         fuzz/corpus_op_args)
 *
 * fuzz/corpus_op_args is the seed corpus (fuzz/make_corpus_op_args.py writes it).
 *
 * Input layout (missing bytes read as 0):
 *   byte 0      the op: row byte0 % wgnn_op_count() of the table
 *   byte 1      the input count: min_inputs + byte1 % (max - min + 1)
 *   bytes 2-3   four 4-bit picks from a palette of small descs, for inputs
 *               0..3 (input i >= 4 takes input i % 4's pick)
 *   byte 4      the length of a short error buffer for the second call
 *   the rest    "key=value" strings separated by NUL bytes (any bytes at all)
 *
 * Any input must give WGNN_OK with outputs that are valid descs, or an error
 * whose message is NUL-terminated inside the buffer and starts with the op's
 * name; the same status again with a short buffer and with no buffer; never
 * a crash, a leak or undefined behaviour.
 */
#include "wgnn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEADER 5
#define MAX_ARGS 32
#define MAX_IN 16
#define MAX_OUT 16

/* Small descs: the shapes ops meet most (matrices, NCHW images, [B,H,S,D]
 * attention, vectors, scalars) in each dtype, a few of them mismatched. */
static const wgnn_desc k_palette[16] = {
    {WGNN_F32, 2, {4, 8}},
    {WGNN_F32, 2, {8, 4}},
    {WGNN_F32, 4, {1, 2, 8, 16}},
    {WGNN_F32, 4, {1, 2, 8, 8}},
    {WGNN_F32, 1, {8}},
    {WGNN_F32, 0, {0}},
    {WGNN_F32, 4, {2, 3, 5, 5}},
    {WGNN_F32, 3, {2, 1, 4}},
    {WGNN_F16, 2, {4, 8}},
    {WGNN_F16, 4, {1, 2, 8, 16}},
    {WGNN_F16, 1, {8}},
    {WGNN_I32, 1, {6}},
    {WGNN_I32, 2, {2, 3}},
    {WGNN_I32, 0, {0}},
    {WGNN_F32, 8, {1, 2, 1, 2, 1, 2, 1, 2}},
    {WGNN_F32, 5, {1, 1, 3, 4, 4}},
};

static uint8_t byte_at(const uint8_t *data, size_t size, size_t i) { return i < size ? data[i] : 0; }

static void check_desc(const wgnn_desc *d) {
    if (wgnn_dtype_size(d->dtype) == 0 || d->rank < 0 || d->rank > WGNN_MAX_RANK) abort();
    for (int i = 0; i < d->rank; i++)
        if (d->dims[i] < 1) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int count = wgnn_op_count();
    if (count <= 0 || wgnn_op_info_at(-1) != NULL || wgnn_op_info_at(count) != NULL) abort();
    const wgnn_op_info *info = wgnn_op_info_at(byte_at(data, size, 0) % count);
    if (!info || wgnn_op_find(info->name) != info) abort();
    int span = info->max_inputs - info->min_inputs + 1;
    if (info->min_inputs < 0 || span < 1 || info->max_inputs > MAX_IN) abort();
    int n_in = info->min_inputs + byte_at(data, size, 1) % span;
    wgnn_desc in[MAX_IN];
    for (int i = 0; i < n_in; i++) {
        unsigned pick = byte_at(data, size, 2 + (size_t)(i % 4) / 2);
        in[i] = k_palette[(i % 2 ? pick >> 4 : pick) & 15];
    }
    size_t short_len = byte_at(data, size, 4) % 16;

    /* The strings: a NUL-terminated copy, so the last one ends too. */
    size_t len = size > HEADER ? size - HEADER : 0;
    char *text = malloc(len + 1);
    if (!text) return 0;
    if (len) memcpy(text, data + HEADER, len);
    text[len] = '\0';
    const char *args[MAX_ARGS];
    int n_args = 0;
    for (size_t p = 0; len > 0 && p <= len && n_args < MAX_ARGS; p += strlen(text + p) + 1) args[n_args++] = text + p;

    wgnn_desc out[MAX_OUT];
    int n_out = -1;
    char err[512];
    memset(err, 'x', sizeof err);
    wgnn_status s = wgnn_op_shapes(info->name, in, n_in, args, n_args, out, MAX_OUT, &n_out, err, sizeof err);
    if (s == WGNN_OK) {
        if (n_out < 1 || n_out > MAX_OUT) abort();
        for (int i = 0; i < n_out; i++) check_desc(&out[i]);
    } else {
        size_t name_len = strlen(info->name);
        if (!memchr(err, '\0', sizeof err) || err[0] == '\0' || strncmp(err, info->name, name_len) != 0 ||
            err[name_len] != ':')
            abort();
    }
    /* A short message buffer (cut, still terminated) and none at all give
     * the same answer. */
    char small[16];
    memset(small, 'x', sizeof small);
    if (wgnn_op_shapes(info->name, in, n_in, args, n_args, out, MAX_OUT, &n_out, small, short_len) != s) abort();
    if (short_len > 0 && !memchr(small, '\0', short_len)) abort();
    if (short_len < sizeof small && small[short_len] != 'x') abort(); /* nothing past the buffer */
    if (wgnn_op_shapes(info->name, in, n_in, args, n_args, out, MAX_OUT, &n_out, NULL, 0) != s) abort();
    free(text);
    return 0;
}
