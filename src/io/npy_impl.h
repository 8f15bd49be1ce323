/* npy_impl.h - what the .npy reader (src/io/npy.c) and writer
 * (src/io/npy_write.c) share (internal): format constants, the message
 * sink and four helpers. Both files link without the rest of the library
 * (fuzz_npy builds the reader alone). */
#ifndef WGNN_IO_NPY_IMPL_H
#define WGNN_IO_NPY_IMPL_H

#include "wgnn.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER (1u << 20) /* numpy itself stops at 10000 by default */
#define NPY_ALIGN 64              /* numpy aligns the data offset to 64 bytes */
#define NPY_GROWTH_DIGITS 21      /* numpy's spare room for the first dim to grow */
#define NPY_SHAPE_STR 256         /* "(d0, ..., d7)" with 20-digit dims fits */
#define NPY_PREFIX_V1 10          /* magic, version, uint16 header length */
#define NPY_PREFIX_V2 12          /* magic, version, uint32 header length */
#define NPY_STREAM_CHUNK (1u << 20)    /* a stream's data buffer starts here and doubles */
#define NPY_TRAILING_SCAN (1u << 20)   /* trailing bytes of a stream counted before giving up */
#define NPY_IO_CHUNK ((size_t)1 << 30) /* largest single read() / write() */

#if defined(__GNUC__) || defined(__clang__)
#define NPY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NPY_PRINTF(f, a)
#endif

/* Where messages go, and the file they are about (NULL for in-memory). */
typedef struct npy_err {
    char *buf;
    size_t len;
    const char *path;
} npy_err;

/* What the header says, before any data is touched. */
typedef struct npy_header {
    wgnn_dtype dtype;
    int rank;
    int64_t dims[WGNN_MAX_RANK];
    uint64_t numel;
    uint64_t nbytes;
    size_t data_offset;
} npy_header;

/* Writes "npy: [path: ]message" into e's buffer (when it has one) and
 * returns status. */
wgnn_status wgnn__npy_fail(const npy_err *e, wgnn_status status, const char *fmt, ...) NPY_PRINTF(3, 4);
/* Bytes per element (a local twin of wgnn_dtype_size) and numpy's descr
 * ("<f4", ...) of a dtype. */
size_t wgnn__npy_dtype_size(wgnn_dtype t);
const char *wgnn__npy_dtype_descr(wgnn_dtype t);
/* "(2, 3)", as numpy writes a shape. */
void wgnn__npy_shape_str(const int64_t *dims, int rank, char *out, size_t out_len);
/* open(2), retried on EINTR. */
int wgnn__npy_open_retry(const char *path, int flags, mode_t mode);

#endif /* WGNN_IO_NPY_IMPL_H */
