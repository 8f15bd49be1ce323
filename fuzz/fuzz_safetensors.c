/*
 * fuzz_safetensors.c - libFuzzer harness for the safetensors header parser
 * and the dtype conversions (src/io/safetensors.c).
 *
 *   make fuzz FUZZERS=safetensors FUZZ_SECONDS=60
 *
 * fuzz/corpus_safetensors is the seed corpus (fuzz/make_corpus_io.py).
 *
 * Any input must give WGNN_OK with every tensor inside the input and
 * consistent with its header, or an error with a message and no set; never
 * a crash or an out-of-bounds read. Each tensor is then converted to f32
 * and f16 (at most MAX_ELEMS elements of it).
 */
#include "io/safetensors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ERR_LEN 512
#define MAX_ELEMS 4096

static float g_f32[MAX_ELEMS];
static uint16_t g_f16[MAX_ELEMS];

static unsigned dtype_size(const char *name)
{
    if (strcmp(name, "F64") == 0 || strcmp(name, "I64") == 0 || strcmp(name, "U64") == 0)
        return 8;
    if (strcmp(name, "F32") == 0 || strcmp(name, "I32") == 0 || strcmp(name, "U32") == 0)
        return 4;
    if (strcmp(name, "F16") == 0 || strcmp(name, "BF16") == 0 || strcmp(name, "I16") == 0 ||
        strcmp(name, "U16") == 0)
        return 2;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wgnn__st *st = NULL;
    char err[ERR_LEN];
    wgnn_status s = wgnn__st_parse(data, size, "fuzz.safetensors", &st, err, sizeof err);
    if (s != WGNN_OK) {
        if (st != NULL || err[0] == '\0' || strlen(err) >= sizeof err ||
            strncmp(err, "safetensors: fuzz.safetensors: ", 31) != 0)
            abort();
        return 0;
    }
    int n = wgnn__st_count(st);
    for (int i = 0; i < n; i++) {
        const wgnn__st_tensor *t = wgnn__st_at(st, i);
        if (t == NULL || t->name == NULL || wgnn__st_find(st, t->name) != t || t->rank < 0 ||
            t->rank > WGNN_MAX_RANK || t->nbytes != t->numel * dtype_size(t->dtype_name))
            abort();
        uint64_t numel = 1;
        for (int k = 0; k < t->rank; k++) {
            if (t->dims[k] < 0)
                abort();
            numel *= (uint64_t)t->dims[k];
        }
        const uint8_t *p = t->data;
        if (numel != t->numel || p < data || t->nbytes > size || p > data + size - t->nbytes)
            abort();
        if (t->nbytes) /* touch the first and last byte */
            (void)*(volatile const uint8_t *)p, (void)*(volatile const uint8_t *)(p + t->nbytes - 1);
        wgnn__st_tensor part = *t;
        if (part.numel > MAX_ELEMS) {
            part.numel = MAX_ELEMS;
            part.nbytes = MAX_ELEMS * (uint64_t)dtype_size(t->dtype_name);
        }
        wgnn_status a = wgnn__st_to_f32(&part, g_f32, err, sizeof err);
        wgnn_status b = wgnn__st_to_f16(&part, g_f16, err, sizeof err);
        if ((t->dtype == WGNN__ST_OTHER) != (a == WGNN_ERR_UNSUPPORTED) || a != b)
            abort();
    }
    wgnn__st_close(st);
    return 0;
}
