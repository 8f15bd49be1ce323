/*
 * safetensors.c - Hugging Face safetensors reader (see safetensors.h).
 *
 * Input is untrusted. The header is parsed by the project's JSON reader
 * (src/io/json.c over cJSON, bounded by its length: a key twice in one
 * object, a tensor listed twice included, is refused there; across shards
 * here) and every entry is checked before the set is handed out: dtype,
 * rank, shape, sizes without overflow, offsets inside the data area, and
 * the tensors covering the data area exactly (no overlap, hole or trailing
 * bytes). Files are memory-mapped read-only; tensors point into the
 * mapping, so nothing is copied until a conversion asks for it. As with any
 * mapping, a file truncated by someone else while mapped faults on access.
 *
 * Names are found through an open-addressing hash of the tensor array.
 */
#include "io/safetensors.h"
#include "io/file.h"
#include "io/json.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c reads little-endian data in place: a big-endian host needs byte swaps"
#endif

#define ST_MAX_HEADER 100000000ull /* the reference implementation's limit */
#define ST_MAX_INT 9007199254740992.0 /* 2^53: larger JSON numbers are not exact doubles */
#define ST_NAME_SHOWN 96              /* characters of a name quoted in a message */

#if defined(__GNUC__) || defined(__clang__)
#define ST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ST_PRINTF(f, a)
#endif

typedef struct st_map {
    void *base;  /* mmap'd; NULL for wgnn__st_parse's caller-owned buffer */
    size_t len;
    char *path;  /* the file's name in messages and in wgnn__st_tensor.file */
} st_map;

struct wgnn__st {
    wgnn__st_tensor *t;
    int n, cap;
    int32_t *index; /* open addressing, -1 empty; capacity a power of two */
    uint32_t index_cap;
    st_map *maps;
    int n_maps, maps_cap;
};

typedef struct st_err {
    char *buf;
    size_t len;
    const char *file;
} st_err;

static ST_PRINTF(3, 4) wgnn_status st_fail(const st_err *e, wgnn_status status, const char *fmt, ...)
{
    if (e->buf == NULL || e->len == 0)
        return status;
    int n = e->file ? snprintf(e->buf, e->len, "safetensors: %s: ", e->file) : snprintf(e->buf, e->len, "safetensors: ");
    if (n >= 0 && (size_t)n < e->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->buf + n, e->len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* A name for a message: unprintable bytes as '?', cut with "..." when long. */
static const char *st_shown(const char *s, char *out, size_t out_len)
{
    size_t i = 0, len = strlen(s);
    for (; i < len && i + 1 < out_len; i++)
        out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (i < len && out_len >= 4) {
        memcpy(out + out_len - 4, "...", 3);
        i = out_len - 1;
    }
    out[i] = '\0';
    return out;
}

/* ---- dtypes ------------------------------------------------------------- */

typedef struct st_dtype_row {
    const char *name;
    unsigned size;
    wgnn__st_dtype dtype;
} st_dtype_row;

static const st_dtype_row st_dtypes[] = {
    {"F32", 4, WGNN__ST_F32},      {"F16", 2, WGNN__ST_F16},      {"BF16", 2, WGNN__ST_BF16},
    {"F64", 8, WGNN__ST_OTHER},    {"I64", 8, WGNN__ST_OTHER},    {"I32", 4, WGNN__ST_OTHER},
    {"I16", 2, WGNN__ST_OTHER},    {"I8", 1, WGNN__ST_OTHER},     {"U8", 1, WGNN__ST_OTHER},
    {"BOOL", 1, WGNN__ST_OTHER},   {"F8_E4M3", 1, WGNN__ST_OTHER}, {"F8_E5M2", 1, WGNN__ST_OTHER},
    {"U16", 2, WGNN__ST_OTHER},    {"U32", 4, WGNN__ST_OTHER},    {"U64", 8, WGNN__ST_OTHER},
};

static const st_dtype_row *st_find_dtype(const char *name)
{
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (strcmp(st_dtypes[i].name, name) == 0)
            return &st_dtypes[i];
    return NULL;
}

/* ---- the set: tensors and the name index -------------------------------- */

static uint64_t st_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Slot of name in the index, or of the empty slot where it would go. */
static uint32_t st_slot(const wgnn__st *st, const char *name)
{
    uint32_t mask = st->index_cap - 1;
    uint32_t i = (uint32_t)st_hash(name) & mask;
    while (st->index[i] >= 0 && strcmp(st->t[st->index[i]].name, name) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Makes room for one more tensor in the array and the index (load <= 1/2). */
static int st_reserve(wgnn__st *st)
{
    if (st->n == st->cap) {
        if (st->cap >= (1 << 28))
            return 0;
        int cap = st->cap ? st->cap * 2 : 64;
        wgnn__st_tensor *t = realloc(st->t, (size_t)cap * sizeof *t);
        if (t == NULL)
            return 0;
        st->t = t;
        st->cap = cap;
    }
    if ((uint64_t)(st->n + 1) * 2 > st->index_cap) {
        uint32_t cap = st->index_cap ? st->index_cap * 2 : 128;
        int32_t *idx = malloc((size_t)cap * sizeof *idx);
        if (idx == NULL)
            return 0;
        free(st->index);
        st->index = idx;
        st->index_cap = cap;
        memset(idx, 0xff, (size_t)cap * sizeof *idx);
        for (int k = 0; k < st->n; k++)
            idx[st_slot(st, st->t[k].name)] = k;
    }
    return 1;
}

static int st_add_map(wgnn__st *st, void *base, size_t len, const char *path)
{
    if (st->n_maps == st->maps_cap) {
        int cap = st->maps_cap ? st->maps_cap * 2 : 4;
        st_map *m = realloc(st->maps, (size_t)cap * sizeof *m);
        if (m == NULL)
            return 0;
        st->maps = m;
        st->maps_cap = cap;
    }
    char *copy = strdup(path);
    if (copy == NULL)
        return 0;
    st->maps[st->n_maps++] = (st_map){base, len, copy};
    return 1;
}

void wgnn__st_close(wgnn__st *st)
{
    if (st == NULL)
        return;
    for (int i = 0; i < st->n; i++)
        free((char *)st->t[i].name);
    for (int i = 0; i < st->n_maps; i++) {
        if (st->maps[i].base)
            munmap(st->maps[i].base, st->maps[i].len);
        free(st->maps[i].path);
    }
    free(st->maps);
    free(st->index);
    free(st->t);
    free(st);
}

int wgnn__st_count(const wgnn__st *st)
{
    return st ? st->n : 0;
}

const wgnn__st_tensor *wgnn__st_at(const wgnn__st *st, int i)
{
    return st && i >= 0 && i < st->n ? &st->t[i] : NULL;
}

const wgnn__st_tensor *wgnn__st_find(const wgnn__st *st, const char *name)
{
    if (st == NULL || name == NULL || st->index_cap == 0)
        return NULL;
    int32_t k = st->index[st_slot(st, name)];
    return k >= 0 ? &st->t[k] : NULL;
}

/* ---- header parsing ------------------------------------------------------ */

/* A JSON number that is an integer in [0, 2^53]. */
static int st_uint(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double d = v->valuedouble;
    if (!(d >= 0 && d <= ST_MAX_INT) || d != (double)(uint64_t)d)
        return 0;
    *out = (uint64_t)d;
    return 1;
}

/* What a JSON value is, for messages. */
static const char *st_kind(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    return "an invalid value";
}

typedef struct st_span {
    uint64_t begin, end;
    int tensor;
} st_span;

static int st_span_cmp(const void *a, const void *b)
{
    const st_span *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Checks one header entry and fills t (name and data left to the caller). */
static wgnn_status st_parse_entry(const st_err *e, const cJSON *v, const char *shown, uint64_t data_len,
                                  wgnn__st_tensor *t, st_span *span)
{
    if (!cJSON_IsObject(v))
        return st_fail(e, WGNN_ERR_FORMAT,
                       "tensor '%s': expected an object with \"dtype\", \"shape\" and \"data_offsets\", found %s",
                       shown, st_kind(v));
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(v, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(v, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(v, "data_offsets");
    if (dt == NULL || sh == NULL || off == NULL)
        return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': missing \"%s\"", shown,
                       dt == NULL ? "dtype" : sh == NULL ? "shape" : "data_offsets");
    if (!cJSON_IsString(dt))
        return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': \"dtype\" is %s, expected a string such as \"F32\"",
                       shown, st_kind(dt));
    const st_dtype_row *row = st_find_dtype(dt->valuestring);
    if (row == NULL) {
        char d[40];
        return st_fail(e, WGNN_ERR_FORMAT,
                       "tensor '%s': unknown dtype \"%s\" (safetensors dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 "
                       "U8 BOOL F8_E4M3 F8_E5M2 U16 U32 U64)",
                       shown, st_shown(dt->valuestring, d, sizeof d));
    }
    if (!cJSON_IsArray(sh))
        return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': \"shape\" is %s, expected an array of integers", shown,
                       st_kind(sh));
    int rank = cJSON_GetArraySize(sh);
    if (rank > WGNN_MAX_RANK)
        return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': rank %d exceeds the maximum of %d", shown, rank,
                       WGNN_MAX_RANK);
    uint64_t numel = 1;
    int i = 0;
    for (const cJSON *d = sh->child; d; d = d->next, i++) {
        uint64_t dim;
        if (!st_uint(d, &dim)) {
            if (cJSON_IsNumber(d))
                return st_fail(e, WGNN_ERR_FORMAT,
                               "tensor '%s': shape[%d] is %.17g, expected a non-negative integer", shown, i,
                               d->valuedouble);
            return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': shape[%d] is %s, expected a non-negative integer",
                           shown, i, st_kind(d));
        }
        t->dims[i] = (int64_t)dim;
        if (dim != 0 && numel > UINT64_MAX / dim)
            return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': shape is too large: element count overflows 64 bits",
                           shown);
        numel *= dim;
    }
    if (numel > UINT64_MAX / row->size)
        return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': shape is too large: byte count overflows 64 bits", shown);
    uint64_t nbytes = numel * row->size;
    uint64_t b = 0, en = 0;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !st_uint(off->child, &b) ||
        !st_uint(off->child->next, &en))
        return st_fail(e, WGNN_ERR_FORMAT,
                       "tensor '%s': \"data_offsets\" must be two non-negative integers [begin, end]", shown);
    if (b > en)
        return st_fail(e, WGNN_ERR_FORMAT, "tensor '%s': data_offsets [%llu, %llu] end before they begin", shown,
                       (unsigned long long)b, (unsigned long long)en);
    if (en - b != nbytes)
        return st_fail(e, WGNN_ERR_FORMAT,
                       "tensor '%s': data_offsets [%llu, %llu] span %llu bytes, but %s with %llu elements needs "
                       "%llu",
                       shown, (unsigned long long)b, (unsigned long long)en, (unsigned long long)(en - b),
                       row->name, (unsigned long long)numel, (unsigned long long)nbytes);
    if (en > data_len)
        return st_fail(e, WGNN_ERR_FORMAT,
                       "tensor '%s': data_offsets end %llu is past the end of the data (%llu bytes after the "
                       "header)",
                       shown, (unsigned long long)en, (unsigned long long)data_len);
    t->dtype = row->dtype;
    t->dtype_name = row->name;
    t->rank = rank;
    t->numel = numel;
    t->nbytes = nbytes;
    span->begin = b;
    span->end = en;
    return WGNN_OK;
}

static wgnn_status st_check_metadata(const st_err *e, const cJSON *m)
{
    if (!cJSON_IsObject(m))
        return st_fail(e, WGNN_ERR_FORMAT, "\"__metadata__\" is %s, expected an object of strings", st_kind(m));
    for (const cJSON *v = m->child; v; v = v->next) {
        if (!cJSON_IsString(v)) {
            char k[ST_NAME_SHOWN];
            return st_fail(e, WGNN_ERR_FORMAT, "\"__metadata__\": value of '%s' is %s, expected a string",
                           st_shown(v->string ? v->string : "", k, sizeof k), st_kind(v));
        }
    }
    return WGNN_OK;
}

/* Parses one file image b[0..len) into st; its tensors name file (owned by
 * st). On failure st may hold some of this file's tensors: the caller
 * closes it. */
static wgnn_status st_parse_into(wgnn__st *st, const unsigned char *b, size_t len, const char *file, char *err,
                                 size_t err_len)
{
    st_err e = {err, err_len, file};
    if (len == 0)
        return st_fail(&e, WGNN_ERR_FORMAT, "file is empty (0 bytes)");
    if (len < 8)
        return st_fail(&e, WGNN_ERR_FORMAT, "file is too short (%zu bytes) to hold the 8-byte header length", len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | b[i];
    if (n > ST_MAX_HEADER)
        return st_fail(&e, WGNN_ERR_FORMAT, "header length %llu exceeds the limit of %llu bytes (not a safetensors file?)",
                       (unsigned long long)n, ST_MAX_HEADER);
    if (n > len - 8)
        return st_fail(&e, WGNN_ERR_FORMAT, "header length %llu runs past the end of the file (%zu bytes after the length)",
                       (unsigned long long)n, len - 8);
    const char *h = (const char *)b + 8;
    uint64_t data_len = len - 8 - n;
    const unsigned char *data = b + 8 + n;
    st_span *spans = NULL;
    wgnn_status s = WGNN_OK;
    /* the reader every JSON file goes through (src/io/json.c): syntax
     * errors by line and column, text after the object, \u0000 in strings
     * and keys standing twice (a tensor listed twice) refused */
    if (n == 0)
        return st_fail(&e, WGNN_ERR_FORMAT, "header length is 0 (expected a JSON object)");
    char label[256];
    if (file)
        snprintf(label, sizeof label, "safetensors: %s: header", file);
    else
        snprintf(label, sizeof label, "safetensors: header");
    wgnn__json j;
    s = wgnn__json_parse(h, (size_t)n, label, &j, err, err_len);
    if (s != WGNN_OK)
        return s;
    const cJSON *root = j.root;
    if (!cJSON_IsObject(root)) {
        s = st_fail(&e, WGNN_ERR_FORMAT, "header is %s, expected a JSON object", st_kind(root));
        goto cleanup;
    }
    int count = cJSON_GetArraySize(root), n_spans = 0;
    spans = malloc((size_t)(count ? count : 1) * sizeof *spans);
    if (spans == NULL) {
        s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory for %d header entries", count);
        goto cleanup;
    }
    for (const cJSON *v = root->child; v; v = v->next) {
        const char *name = v->string ? v->string : "";
        char shown[ST_NAME_SHOWN];
        st_shown(name, shown, sizeof shown);
        if (strcmp(name, "__metadata__") == 0) {
            s = st_check_metadata(&e, v);
            if (s != WGNN_OK)
                goto cleanup;
            continue;
        }
        wgnn__st_tensor t;
        memset(&t, 0, sizeof t);
        s = st_parse_entry(&e, v, shown, data_len, &t, &spans[n_spans]);
        if (s != WGNN_OK)
            goto cleanup;
        const wgnn__st_tensor *o = wgnn__st_find(st, name); /* in an earlier shard: twice in one header was refused */
        if (o != NULL) {
            s = st_fail(&e, WGNN_ERR_FORMAT, "tensor '%s' is also in %s", shown, o->file);
            goto cleanup;
        }
        if (!st_reserve(st) || (t.name = strdup(name)) == NULL) {
            s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory adding tensor '%s'", shown);
            goto cleanup;
        }
        t.data = data + spans[n_spans].begin;
        t.file = file;
        spans[n_spans].tensor = st->n;
        st->t[st->n] = t;
        st->index[st_slot(st, t.name)] = st->n;
        st->n++;
        n_spans++;
    }
    /* As the format (and Hugging Face's reader) wants: the tensors, in
     * order of their offsets, cover the data area exactly, no overlap, no
     * hole, nothing after the last (bytes that no tensor owns would let a
     * file be two formats at once). Empty tensors take no bytes. */
    qsort(spans, (size_t)n_spans, sizeof *spans, st_span_cmp);
    const st_span *prev = NULL; /* the last non-empty tensor so far */
    for (int i = 0; i < n_spans; i++) {
        uint64_t at = prev ? prev->end : 0;
        char a[ST_NAME_SHOWN], c[ST_NAME_SHOWN];
        const char *name = st_shown(st->t[spans[i].tensor].name, c, sizeof c);
        if (spans[i].begin < at) {
            s = st_fail(&e, WGNN_ERR_FORMAT, "tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap",
                        st_shown(st->t[prev->tensor].name, a, sizeof a), (unsigned long long)prev->begin,
                        (unsigned long long)prev->end, name, (unsigned long long)spans[i].begin,
                        (unsigned long long)spans[i].end);
            goto cleanup;
        }
        if (spans[i].begin > at) {
            s = st_fail(&e, WGNN_ERR_FORMAT,
                        "tensor '%s' begins at byte %llu of the data, but the tensors before it end at %llu: "
                        "%llu bytes belong to no tensor (the format allows no holes)",
                        name, (unsigned long long)spans[i].begin, (unsigned long long)at,
                        (unsigned long long)(spans[i].begin - at));
            goto cleanup;
        }
        if (spans[i].end > spans[i].begin)
            prev = &spans[i];
    }
    uint64_t at = prev ? prev->end : 0;
    if (at != data_len) {
        s = st_fail(&e, WGNN_ERR_FORMAT,
                    "the tensors end at byte %llu of the data, but %llu bytes follow the header: the last %llu "
                    "belong to no tensor (the format allows none)",
                    (unsigned long long)at, (unsigned long long)data_len, (unsigned long long)(data_len - at));
        goto cleanup;
    }

cleanup:
    free(spans);
    wgnn__json_free(&j);
    return s;
}

static wgnn__st *st_new(void)
{
    return calloc(1, sizeof(wgnn__st));
}

wgnn_status wgnn__st_parse(const void *buf, size_t len, const char *label, wgnn__st **out, char *err,
                           size_t err_len)
{
    st_err e = {err, err_len, label};
    if (err && err_len)
        err[0] = '\0';
    if (out == NULL || (buf == NULL && len != 0))
        return st_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "parse: %s is NULL", out ? "buf" : "out");
    *out = NULL;
    wgnn__st *st = st_new();
    if (st == NULL || !st_add_map(st, NULL, 0, label ? label : "(memory)")) {
        wgnn__st_close(st);
        return st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
    }
    wgnn_status s = st_parse_into(st, buf, len, st->maps[0].path, err, err_len);
    if (s != WGNN_OK) {
        wgnn__st_close(st);
        return s;
    }
    *out = st;
    return WGNN_OK;
}

/* ---- files ------------------------------------------------------------------ */

/* Maps path (a regular file) and parses it into st. Devices and FIFOs are
 * refused before they are opened. */
static wgnn_status st_open_file(wgnn__st *st, const char *path, char *err, size_t err_len)
{
    st_err e = {err, err_len, path};
    struct stat sb;
    if (stat(path, &sb) != 0)
        return st_fail(&e, WGNN_ERR_IO, "cannot open: %s", strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return st_fail(&e, WGNN_ERR_IO, "is a %s, not a .safetensors file", wgnn__file_kind(sb.st_mode));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return st_fail(&e, WGNN_ERR_IO, "cannot open: %s", strerror(errno));
    wgnn_status s = WGNN_OK;
    if (fstat(fd, &sb) != 0) {
        s = st_fail(&e, WGNN_ERR_IO, "cannot stat: %s", strerror(errno));
        goto cleanup;
    }
    if (!S_ISREG(sb.st_mode)) { /* replaced between stat and open */
        s = st_fail(&e, WGNN_ERR_IO, "is a %s, not a .safetensors file", wgnn__file_kind(sb.st_mode));
        goto cleanup;
    }
    if (sb.st_size == 0) {
        s = st_fail(&e, WGNN_ERR_FORMAT, "file is empty (0 bytes)");
        goto cleanup;
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "file of %lld bytes does not fit the address space",
                    (long long)sb.st_size);
        goto cleanup;
    }
    size_t len = (size_t)sb.st_size;
    void *base = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
        s = st_fail(&e, WGNN_ERR_IO, "cannot map %zu bytes: %s", len, strerror(errno));
        goto cleanup;
    }
    if (!st_add_map(st, base, len, path)) {
        munmap(base, len);
        s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
        goto cleanup;
    }
    s = st_parse_into(st, base, len, st->maps[st->n_maps - 1].path, err, err_len);

cleanup:
    close(fd);
    return s;
}

/* A shard name must be a plain file name in the index's folder. */
static int st_plain_name(const char *s)
{
    return s[0] != '\0' && strchr(s, '/') == NULL && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static wgnn_status st_open_index(wgnn__st *st, const char *path, char *err, size_t err_len)
{
    st_err e = {err, err_len, path};
    wgnn__json j;
    memset(&j, 0, sizeof j);
    wgnn_status s = wgnn__json_load(path, 0, &j, err, err_len);
    if (s != WGNN_OK)
        return s;
    const char **shards = NULL;
    char *shard_path = NULL;
    unsigned char *listed = NULL;
    int n_shards = 0;
    const cJSON *wm = wgnn__json_get(&j, "weight_map");
    if (!cJSON_IsObject(wm)) {
        s = st_fail(&e, WGNN_ERR_FORMAT, "\"weight_map\" is %s, expected an object "
                    "{tensor name: shard file name}", wm ? st_kind(wm) : "missing");
        goto cleanup;
    }
    int count = cJSON_GetArraySize(wm);
    shards = malloc((size_t)(count ? count : 1) * sizeof *shards);
    if (shards == NULL) {
        s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
        goto cleanup;
    }
    for (const cJSON *v = wm->child; v; v = v->next) {
        char shown[ST_NAME_SHOWN], f[ST_NAME_SHOWN];
        st_shown(v->string ? v->string : "", shown, sizeof shown);
        if (!cJSON_IsString(v)) {
            s = st_fail(&e, WGNN_ERR_FORMAT, "weight_map: tensor '%s' maps to %s, expected a shard file name",
                        shown, st_kind(v));
            goto cleanup;
        }
        if (!st_plain_name(v->valuestring)) {
            s = st_fail(&e, WGNN_ERR_FORMAT,
                        "weight_map: tensor '%s': shard \"%s\" must be a file name in the index's folder (no '/', "
                        "not '..')",
                        shown, st_shown(v->valuestring, f, sizeof f));
            goto cleanup;
        }
        int k = 0;
        while (k < n_shards && strcmp(shards[k], v->valuestring) != 0)
            k++;
        if (k == n_shards)
            shards[n_shards++] = v->valuestring;
    }
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    for (int k = 0; k < n_shards; k++) {
        size_t name_len = strlen(shards[k]);
        char *p = realloc(shard_path, dir_len + name_len + 1);
        if (p == NULL) {
            s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
            goto cleanup;
        }
        shard_path = p;
        memcpy(shard_path, path, dir_len);
        memcpy(shard_path + dir_len, shards[k], name_len + 1);
        s = st_open_file(st, shard_path, err, err_len);
        if (s != WGNN_OK)
            goto cleanup;
    }
    /* Every tensor the map lists is in the shard it names, listed once. */
    listed = calloc((size_t)(st->n ? st->n : 1), 1);
    if (listed == NULL) {
        s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
        goto cleanup;
    }
    for (const cJSON *v = wm->child; v; v = v->next) {
        char shown[ST_NAME_SHOWN], f[ST_NAME_SHOWN];
        const char *name = v->string ? v->string : "";
        st_shown(name, shown, sizeof shown);
        const wgnn__st_tensor *t = wgnn__st_find(st, name);
        const char *tail = t ? strrchr(t->file, '/') : NULL;
        const char *base = t ? (tail ? tail + 1 : t->file) : NULL;
        if (t == NULL) {
            s = st_fail(&e, WGNN_ERR_FORMAT, "weight_map: tensor '%s' is not in its shard %s", shown,
                        st_shown(v->valuestring, f, sizeof f));
            goto cleanup;
        }
        if (strcmp(base, v->valuestring) != 0) {
            s = st_fail(&e, WGNN_ERR_FORMAT, "weight_map: tensor '%s' is in %s, not in %s as the map says", shown,
                        base, st_shown(v->valuestring, f, sizeof f));
            goto cleanup;
        }
        int idx = (int)(t - st->t);
        if (listed[idx]++) {
            s = st_fail(&e, WGNN_ERR_FORMAT, "weight_map lists tensor '%s' twice", shown);
            goto cleanup;
        }
    }

cleanup:
    free(listed);
    free(shard_path);
    free(shards);
    wgnn__json_free(&j);
    return s;
}

static int st_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

wgnn_status wgnn__st_open(const char *path, wgnn__st **out, char *err, size_t err_len)
{
    st_err e = {err, err_len, path};
    if (err && err_len)
        err[0] = '\0';
    if (out == NULL || path == NULL)
        return st_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "open: %s is NULL", out ? "path" : "out");
    *out = NULL;
    wgnn__st *st = st_new();
    char *joined = NULL;
    wgnn_status s = WGNN_OK;
    if (st == NULL) {
        s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
        goto cleanup;
    }
    struct stat sb;
    const char *file = path;
    int index = st_ends_with(path, ".json");
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        size_t len = strlen(path);
        joined = malloc(len + sizeof "/model.safetensors.index.json");
        if (joined == NULL) {
            s = st_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
            goto cleanup;
        }
        int sep = len > 0 && path[len - 1] != '/';
        sprintf(joined, "%s%smodel.safetensors", path, sep ? "/" : "");
        index = 0;
        if (stat(joined, &sb) != 0 && errno == ENOENT) {
            sprintf(joined, "%s%smodel.safetensors.index.json", path, sep ? "/" : "");
            index = 1;
            if (stat(joined, &sb) != 0 && errno == ENOENT) {
                s = st_fail(&e, WGNN_ERR_IO, "folder holds neither model.safetensors nor "
                            "model.safetensors.index.json");
                goto cleanup;
            }
        }
        file = joined;
    }
    s = index ? st_open_index(st, file, err, err_len) : st_open_file(st, file, err, err_len);

cleanup:
    free(joined);
    if (s != WGNN_OK) {
        wgnn__st_close(st);
        return s;
    }
    *out = st;
    return WGNN_OK;
}

/* ---- conversions ------------------------------------------------------------ */

static float st_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t st_f16_to_f32_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    int e = (h >> 10) & 0x1f;
    uint32_t m = h & 0x3ff;
    if (e == 31)
        return sign | 0x7f800000u | (m << 13);
    if (e == 0) {
        if (m == 0)
            return sign;
        while (!(m & 0x400)) { /* subnormal: normalize */
            m <<= 1;
            e--;
        }
        e++;
        m &= 0x3ff;
    }
    return sign | (uint32_t)(e + 112) << 23 | m << 13;
}

/* Round to nearest even; overflow to inf; NaN stays NaN (quiet, top payload
 * bits kept). */
static uint16_t st_f32_bits_to_f16(uint32_t x)
{
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t a = x & 0x7fffffffu;
    int e = (int)(a >> 23);
    uint32_t mant = a & 0x7fffff;
    if (e == 255)
        return sign | (mant ? (uint16_t)(0x7e00 | (mant >> 13)) : 0x7c00);
    if (e > 142) /* >= 2^16 */
        return sign | 0x7c00;
    if (e >= 113) { /* normal half; a carry out of the mantissa bumps the exponent, up to inf */
        uint32_t h = (uint32_t)(e - 112) << 10 | mant >> 13;
        uint32_t rem = mant & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
            h++;
        return sign | (uint16_t)h;
    }
    if (e < 102) /* below 2^-25: rounds to zero */
        return sign;
    uint32_t m = mant | 0x800000; /* subnormal half: m * 2^(e-150) in units of 2^-24 */
    int shift = 126 - e;
    uint32_t h = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1)))
        h++;
    return sign | (uint16_t)h;
}

static wgnn_status st_unsupported(const wgnn__st_tensor *t, char *err, size_t err_len, const char *to)
{
    st_err e = {err, err_len, t->file};
    char shown[ST_NAME_SHOWN];
    return st_fail(&e, WGNN_ERR_UNSUPPORTED, "tensor '%s': dtype %s cannot be converted to %s (wgnn reads F32, F16, BF16)",
                   st_shown(t->name, shown, sizeof shown), t->dtype_name, to);
}

wgnn_status wgnn__st_to_f32(const wgnn__st_tensor *t, float *dst, char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case WGNN__ST_F32:
        if (t->nbytes)
            memcpy(dst, p, (size_t)t->nbytes);
        return WGNN_OK;
    case WGNN__ST_F16:
        for (uint64_t i = 0; i < t->numel; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            dst[i] = st_bits_f32(st_f16_to_f32_bits(h));
        }
        return WGNN_OK;
    case WGNN__ST_BF16:
        for (uint64_t i = 0; i < t->numel; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            dst[i] = st_bits_f32((uint32_t)h << 16);
        }
        return WGNN_OK;
    case WGNN__ST_OTHER:
        break;
    }
    return st_unsupported(t, err, err_len, "float32");
}

wgnn_status wgnn__st_to_f16(const wgnn__st_tensor *t, uint16_t *dst, char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case WGNN__ST_F32:
        for (uint64_t i = 0; i < t->numel; i++) {
            uint32_t u;
            memcpy(&u, p + 4 * i, 4);
            dst[i] = st_f32_bits_to_f16(u);
        }
        return WGNN_OK;
    case WGNN__ST_F16:
        if (t->nbytes)
            memcpy(dst, p, (size_t)t->nbytes);
        return WGNN_OK;
    case WGNN__ST_BF16:
        for (uint64_t i = 0; i < t->numel; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            dst[i] = st_f32_bits_to_f16((uint32_t)h << 16);
        }
        return WGNN_OK;
    case WGNN__ST_OTHER:
        break;
    }
    return st_unsupported(t, err, err_len, "float16");
}
