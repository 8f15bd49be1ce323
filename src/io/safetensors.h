/* safetensors.h - Hugging Face safetensors files (internal; src/io/safetensors.c).
 *
 * A file is an 8-byte little-endian header length N, N bytes of JSON
 * ({"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 * ..., optional "__metadata__": {string: string}}), then the data. The
 * reader memory-maps the file (read-only) and checks, before any tensor is
 * handed out: N against the file size, the JSON, every dtype, rank (<=
 * WGNN_MAX_RANK), shape (dims >= 0, product without overflow), that
 * end - begin == numel * dtype size, that [begin, end) lies inside the data
 * area, and that no two tensors overlap (gaps and empty tensors are
 * allowed). Only whitespace may follow the header's JSON object (writers
 * pad with spaces); the header is at most 100 MB. "__metadata__" must be an
 * object of strings and is skipped. Names are unique, across shards too.
 * Errors name the file and the tensor.
 *
 * Sharded weights: shard names in "weight_map" must be plain file names
 * (no '/', not "." or ".."); each distinct shard is opened once; a tensor a
 * shard holds but the map does not list is still loaded. */
#ifndef WGNN_IO_SAFETENSORS_H
#define WGNN_IO_SAFETENSORS_H

#include "internal.h"

typedef enum wgnn__st_dtype {
    WGNN__ST_F32,
    WGNN__ST_F16,
    WGNN__ST_BF16,
    WGNN__ST_OTHER /* a valid safetensors dtype wgnn does not convert (I64, U8, F64, BOOL, ...) */
} wgnn__st_dtype;

typedef struct wgnn__st_tensor {
    const char *name;        /* NUL-terminated, owned by the set */
    wgnn__st_dtype dtype;
    const char *dtype_name;  /* as in the header: "F32", "BF16", "I64", ... */
    int rank;
    int64_t dims[WGNN_MAX_RANK];
    uint64_t numel, nbytes;
    const void *data;        /* into the mapping; not aligned in general */
    const char *file;        /* which file (shards) */
} wgnn__st_tensor;

typedef struct wgnn__st wgnn__st;

/* Opens weights: path is a .safetensors file, a .safetensors.index.json
 * (its "weight_map" names the shards, relative to its folder; every shard
 * is opened and a tensor must be in the shard the map says), or a folder
 * holding model.safetensors or model.safetensors.index.json. */
wgnn_status wgnn__st_open(const char *path, wgnn__st **out, char *err, size_t err_len);
/* Parses an in-memory file (not copied: buf must outlive the set). label
 * names it in messages. For the fuzzer and tests. */
wgnn_status wgnn__st_parse(const void *buf, size_t len, const char *label, wgnn__st **out, char *err,
                           size_t err_len);
void wgnn__st_close(wgnn__st *st);

int wgnn__st_count(const wgnn__st *st);
const wgnn__st_tensor *wgnn__st_at(const wgnn__st *st, int i);
/* NULL when absent. A hash lookup. */
const wgnn__st_tensor *wgnn__st_find(const wgnn__st *st, const char *name);

/* Converts t's data (F32, F16 or BF16) to float32 (dst: numel floats) or
 * to IEEE half bits (dst: numel uint16_t; F32 and BF16 round to nearest
 * even, F16 copied). WGNN_ERR_UNSUPPORTED for other dtypes. */
wgnn_status wgnn__st_to_f32(const wgnn__st_tensor *t, float *dst, char *err, size_t err_len);
wgnn_status wgnn__st_to_f16(const wgnn__st_tensor *t, uint16_t *dst, char *err, size_t err_len);

#endif /* WGNN_IO_SAFETENSORS_H */
