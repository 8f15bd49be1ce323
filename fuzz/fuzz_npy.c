/*
 * fuzz_npy.c - libFuzzer harness for the .npy reader.
 *
 *   clang -std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer,address,undefined \
 *       -Iinclude fuzz/fuzz_npy.c src/io/npy.c -o fuzz_npy
 *   ./fuzz_npy -max_total_time=60 fuzz/corpus_npy
 *
 * fuzz/corpus_npy is the seed corpus (fuzz/make_corpus_npy.py writes it).
 *
 * Any input must give WGNN_OK with data matching the header, or an error
 * with a message and an empty result; never a crash or an out-of-bounds read.
 * The same bytes in a file must give wgnn_npy_load and wgnn_npy_load_header,
 * which read a file in steps (prefix, header, data), the same status, message
 * and result as wgnn_npy_parse gives for them in memory.
 */
#include "wgnn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ERR_LEN 512

/* The file the readers read: made once, unlinked at once, and opened again
 * through /proc/self/fd so that nothing is left behind. */
static int g_fd = -1;
static char g_path[64];

static void check_file_readers(const uint8_t *data, size_t size, wgnn_status want,
                               const char *want_err, const wgnn_npy *ref)
{
    if (g_fd < 0) {
        char tmpl[] = "/tmp/fuzz_npy_XXXXXX";
        g_fd = mkstemp(tmpl);
        if (g_fd < 0)
            abort();
        unlink(tmpl);
        snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
    }
    if (ftruncate(g_fd, 0) != 0 || (size && pwrite(g_fd, data, size, 0) != (ssize_t)size))
        abort();
    for (int header_only = 0; header_only < 2; header_only++) {
        wgnn_npy n;
        char err[ERR_LEN], msg[ERR_LEN + 64];
        wgnn_status st = header_only ? wgnn_npy_load_header(g_path, &n, err, sizeof err)
                                     : wgnn_npy_load(g_path, &n, err, sizeof err);
        if (st != want)
            abort();
        if (st == WGNN_OK) {
            if (n.dtype != ref->dtype || n.rank != ref->rank || n.numel != ref->numel ||
                n.nbytes != ref->nbytes || memcmp(n.dims, ref->dims, sizeof n.dims) != 0)
                abort();
            if (header_only ? n.data != NULL
                            : memcmp(n.data, ref->data, (size_t)ref->nbytes) != 0)
                abort();
        } else if (strlen(want_err) < ERR_LEN - 80) { /* neither message was cut */
            snprintf(msg, sizeof msg, "npy: %s: %s", g_path, want_err + 5);
            if (strcmp(err, msg) != 0)
                abort();
        }
        wgnn_npy_free(&n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wgnn_npy n;
    char err[ERR_LEN];
    wgnn_status st = wgnn_npy_parse(data, size, &n, err, sizeof err);
    if (st == WGNN_OK) {
        /* The data is the file's last nbytes bytes; touch all of it. */
        if (n.data == NULL || n.rank < 0 || n.rank > WGNN_MAX_RANK || n.nbytes > size ||
            memcmp(n.data, data + size - n.nbytes, (size_t)n.nbytes) != 0)
            abort();
    } else if (n.data != NULL || n.rank != 0 || err[0] == '\0' || strlen(err) >= sizeof err ||
               strncmp(err, "npy: ", 5) != 0) {
        abort();
    }
    check_file_readers(data, size, st, err, &n);
    wgnn_npy_free(&n);
    return 0;
}
