/*
 * fuzz_npy.c - libFuzzer harness for the .npy header parser.
 *
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
 *       fuzz/fuzz_npy.c src/io/npy.c -o fuzz_npy
 *   ./fuzz_npy -max_total_time=60 fuzz/corpus_npy
 *
 * Any input must give WGNN_OK with data matching the header, or an error
 * with a message and an empty result; never a crash or an out-of-bounds read.
 */
#include "wgnn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wgnn_npy n;
    char err[256];
    wgnn_status st = wgnn_npy_parse(data, size, &n, err, sizeof err);
    if (st == WGNN_OK) {
        /* The data is the file's last nbytes bytes; touch all of it. */
        if (n.data == NULL || n.rank < 0 || n.rank > WGNN_MAX_RANK || n.nbytes > size ||
            memcmp(n.data, data + size - n.nbytes, (size_t)n.nbytes) != 0)
            abort();
    } else if (n.data != NULL || n.rank != 0 || err[0] == '\0' || strlen(err) >= sizeof err) {
        abort();
    }
    wgnn_npy_free(&n);
    return 0;
}
