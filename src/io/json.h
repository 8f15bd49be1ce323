/* json.h - JSON files through cJSON (Debian's libcjson-dev), with typed
 * lookups whose errors a user can act on (internal; src/io/json.c).
 *
 * Lookups take a dotted path ("vision_config.hidden_size"), resolved
 * object by object. Messages name the file (the label given at load) and
 * the key: "config.json: hidden_size: expected a positive integer, got
 * \"abc\"". */
#ifndef WGNN_IO_JSON_H
#define WGNN_IO_JSON_H

#include "internal.h"

#include <cjson/cJSON.h>

#include <stdbool.h>

typedef struct wgnn__json {
    cJSON *root;
    char label[256]; /* the file's name, for messages */
} wgnn__json;

/* Reads and parses a file of at most max_bytes (0: 64 MiB). Parse errors
 * give the line and column. Regular files only. */
wgnn_status wgnn__json_load(const char *path, size_t max_bytes, wgnn__json *out, char *err, size_t err_len);
/* The first key that stands twice in one object of v, or NULL (JSON leaves
 * it to the reader which wins: cJSON takes the first, Python's json the
 * last; wgnn__json_parse refuses such files). *oom on a failed allocation.
 * Recursion is bounded by cJSON's nesting limit. */
const char *wgnn__json_dup_key(const cJSON *v, bool *oom);
/* What every JSON reader here refuses that cJSON takes: a \u0000 escape in
 * a string (cJSON keeps strings NUL-terminated, so "a\u0000b" would be read
 * as "a" without a word), a raw control character (< 0x20) in a string
 * (JSON wants it escaped; a raw NUL would cut the string short the same
 * way), and bytes that are not UTF-8 (JSON text is UTF-8, and Hugging
 * Face's readers refuse anything else). */
typedef enum wgnn__json_bad { WGNN__JSON_BAD_NUL, WGNN__JSON_BAD_CONTROL, WGNN__JSON_BAD_UTF8 } wgnn__json_bad;
/* The offset in text (JSON as cJSON parsed it) of the first such thing, and
 * *why; or (size_t)-1. */
size_t wgnn__json_bad_at(const char *text, size_t len, wgnn__json_bad *why);
wgnn_status wgnn__json_parse(const char *text, size_t len, const char *label, wgnn__json *out, char *err,
                             size_t err_len);
void wgnn__json_free(wgnn__json *j);

/* The item at path, or NULL (also when an intermediate is not an object). */
const cJSON *wgnn__json_get(const wgnn__json *j, const char *path);
bool wgnn__json_has(const wgnn__json *j, const char *path);

/* Typed reads. Absent key: *out = def and WGNN_OK when has_def, else
 * WGNN_ERR_FORMAT "missing". Present with a wrong type or out of
 * [lo, hi]: WGNN_ERR_FORMAT naming key, expectation and the value seen.
 * Integers must be integral numbers (2.0 ok, 2.5 refused). */
wgnn_status wgnn__json_int(const wgnn__json *j, const char *path, bool has_def, int64_t def, int64_t lo, int64_t hi,
                           int64_t *out, char *err, size_t err_len);
wgnn_status wgnn__json_num(const wgnn__json *j, const char *path, bool has_def, double def, double lo, double hi,
                           double *out, char *err, size_t err_len);
wgnn_status wgnn__json_bool(const wgnn__json *j, const char *path, bool has_def, bool def, bool *out, char *err,
                            size_t err_len);
/* Copies a string (truncation is an error). */
wgnn_status wgnn__json_str(const wgnn__json *j, const char *path, const char *def, char *out, size_t cap, char *err,
                           size_t err_len);
/* An array of exactly n numbers (n > 0), or of 1..cap when n == 0 (then *got). */
wgnn_status wgnn__json_nums(const wgnn__json *j, const char *path, double *out, int n, int cap, int *got, char *err,
                            size_t err_len);

#endif /* WGNN_IO_JSON_H */
