/*
 * json.c - JSON files through cJSON, with typed lookups (see json.h).
 *
 * Files are read whole (regular files only, under a size cap) and parsed
 * with cJSON_ParseWithLengthOpts, whose error pointer gives the line and
 * column of a syntax error. Only whitespace may follow the value. Lookups
 * walk a dotted path object by object; cJSON keeps duplicate keys and a
 * lookup sees the first.
 */
#include "io/file.h"
#include "io/json.h"

#include <utf8proc.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_DEFAULT_MAX ((size_t)64 << 20)
#define JSON_SHOWN 48 /* characters of a string value quoted in a message */

#if defined(__GNUC__) || defined(__clang__)
#define JSON_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JSON_PRINTF(f, a)
#endif

/* "label: " + message. */
static JSON_PRINTF(4, 5) wgnn_status json_fail(char *err, size_t err_len, const char *label, const char *fmt, ...)
{
    if (err == NULL || err_len == 0)
        return WGNN_ERR_FORMAT;
    int n = snprintf(err, err_len, "%s: ", label && label[0] ? label : "(json)");
    if (n >= 0 && (size_t)n < err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return WGNN_ERR_FORMAT;
}

static void json_set_label(wgnn__json *out, const char *label)
{
    snprintf(out->label, sizeof out->label, "%s", label && label[0] ? label : "(json)");
}

/* Line and column (both from 1) of text[at]. */
static void json_line_col(const char *text, size_t at, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < at; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int json_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *wgnn__json_dup_key(const cJSON *v, bool *oom)
{
    if (cJSON_IsObject(v)) {
        size_t n = 0;
        for (const cJSON *c = v->child; c; c = c->next)
            n++;
        if (n > 1) {
            const char **names = malloc(n * sizeof *names);
            if (names == NULL) {
                *oom = true;
                return NULL;
            }
            size_t k = 0;
            for (const cJSON *c = v->child; c; c = c->next)
                names[k++] = c->string ? c->string : "";
            qsort(names, n, sizeof *names, json_name_cmp);
            const char *dup = NULL;
            for (size_t i = 1; i < n && dup == NULL; i++)
                if (strcmp(names[i - 1], names[i]) == 0)
                    dup = names[i];
            free(names);
            if (dup)
                return dup;
        }
    }
    if (cJSON_IsObject(v) || cJSON_IsArray(v))
        for (const cJSON *c = v->child; c; c = c->next) {
            const char *d = wgnn__json_dup_key(c, oom);
            if (d || *oom)
                return d;
        }
    return NULL;
}

size_t wgnn__json_bad_at(const char *text, size_t len, wgnn__json_bad *why)
{
    /* text is JSON as cJSON parsed it: backslashes only inside strings,
     * each starting an escape (\uXXXX, or a backslash and one character) */
    bool in_str = false;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80) {
            utf8proc_int32_t cp;
            utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)text + i, (utf8proc_ssize_t)(len - i), &cp);
            if (k <= 0) {
                *why = WGNN__JSON_BAD_UTF8;
                return i;
            }
            i += (size_t)k;
            continue;
        }
        if (in_str && c == '\\') {
            if (i + 6 <= len && text[i + 1] == 'u' && memcmp(text + i + 2, "0000", 4) == 0) {
                *why = WGNN__JSON_BAD_NUL;
                return i;
            }
            i += 2;
            continue;
        }
        if (in_str && c < 0x20) {
            *why = WGNN__JSON_BAD_CONTROL;
            return i;
        }
        if (c == '"')
            in_str = !in_str;
        i++;
    }
    return (size_t)-1;
}

wgnn_status wgnn__json_parse(const char *text, size_t len, const char *label, wgnn__json *out, char *err,
                             size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    if (out == NULL)
        return json_fail(err, err_len, label, "parse: out is NULL");
    memset(out, 0, sizeof *out);
    json_set_label(out, label);
    if (text == NULL && len != 0)
        return json_fail(err, err_len, out->label, "parse: text is NULL");
    const char *end = NULL;
    cJSON *root = len ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
    if (root == NULL) {
        if (len == 0)
            return json_fail(err, err_len, out->label, "empty file (expected JSON)");
        size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        int line, col;
        json_line_col(text, at, &line, &col);
        return json_fail(err, err_len, out->label, "invalid JSON at line %d, column %d", line, col);
    }
    for (const char *p = end; p && p < text + len; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            int line, col;
            json_line_col(text, (size_t)(p - text), &line, &col);
            cJSON_Delete(root);
            return json_fail(err, err_len, out->label, "unexpected text after the JSON value at line %d, column %d",
                             line, col);
        }
    }
    wgnn__json_bad why;
    size_t bad = wgnn__json_bad_at(text, len, &why);
    if (bad != (size_t)-1) {
        int line, col;
        json_line_col(text, bad, &line, &col);
        cJSON_Delete(root);
        if (why == WGNN__JSON_BAD_NUL)
            return json_fail(err, err_len, out->label,
                             "a string holds \\u0000 (a NUL character) at line %d, column %d, which would cut it short",
                             line, col);
        if (why == WGNN__JSON_BAD_CONTROL)
            return json_fail(err, err_len, out->label,
                             "a string holds the raw control character 0x%02x at line %d, column %d (JSON wants it "
                             "escaped)", (unsigned char)text[bad], line, col);
        return json_fail(err, err_len, out->label, "not valid UTF-8 at line %d, column %d (byte 0x%02x)", line, col,
                         (unsigned char)text[bad]);
    }
    bool oom = false;
    const char *dup = wgnn__json_dup_key(root, &oom);
    if (dup || oom) {
        wgnn_status st = oom ? json_fail(err, err_len, out->label, "out of memory checking keys")
                             : json_fail(err, err_len, out->label,
                                         "key \"%.64s\" stands twice in one object (JSON readers differ on which "
                                         "wins: remove one)", dup);
        cJSON_Delete(root);
        return oom ? WGNN_ERR_OUT_OF_MEMORY : st;
    }
    out->root = root;
    return WGNN_OK;
}

wgnn_status wgnn__json_load(const char *path, size_t max_bytes, wgnn__json *out, char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    if (out == NULL || path == NULL)
        return json_fail(err, err_len, path, "load: %s is NULL", out ? "path" : "out");
    memset(out, 0, sizeof *out);
    if (max_bytes == 0)
        max_bytes = JSON_DEFAULT_MAX;
    unsigned char *text = NULL;
    size_t have = 0;
    char why[256];
    wgnn_status s = wgnn__file_read(path, max_bytes, &text, &have, why, sizeof why);
    if (s != WGNN_OK) {
        json_fail(err, err_len, path, "%s", why);
        return s;
    }
    s = wgnn__json_parse((const char *)text, have, path, out, err, err_len);
    free(text);
    return s;
}

void wgnn__json_free(wgnn__json *j)
{
    if (j == NULL)
        return;
    cJSON_Delete(j->root);
    j->root = NULL;
}

/* Walks path; *stop is the item the walk could not enter (not an object),
 * *stop_len the length of the path prefix naming it. */
static const cJSON *json_walk(const wgnn__json *j, const char *path, const cJSON **stop, size_t *stop_len)
{
    *stop = NULL;
    *stop_len = 0;
    if (j == NULL || j->root == NULL || path == NULL)
        return NULL;
    const cJSON *cur = j->root;
    const char *seg = path;
    char key[256];
    for (;;) {
        const char *dot = strchr(seg, '.');
        size_t n = dot ? (size_t)(dot - seg) : strlen(seg);
        if (!cJSON_IsObject(cur)) {
            *stop = cur;
            *stop_len = seg > path ? (size_t)(seg - path) - 1 : 0;
            return NULL;
        }
        if (n >= sizeof key)
            return NULL;
        memcpy(key, seg, n);
        key[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        if (cur == NULL || dot == NULL)
            return cur;
        seg = dot + 1;
    }
}

const cJSON *wgnn__json_get(const wgnn__json *j, const char *path)
{
    const cJSON *stop;
    size_t stop_len;
    return json_walk(j, path, &stop, &stop_len);
}

bool wgnn__json_has(const wgnn__json *j, const char *path)
{
    return wgnn__json_get(j, path) != NULL;
}

/* Shortest "%g" that reads back as d. */
static void json_num_str(double d, char *out, size_t cap)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, d);
        if (strtod(out, NULL) == d)
            return;
    }
}

/* The value v as a message shows it: 2.5, "abc", true, null, an object. */
static void json_describe(const cJSON *v, char *out, size_t cap)
{
    if (cJSON_IsNumber(v)) {
        json_num_str(v->valuedouble, out, cap);
    } else if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        size_t n = 0, i = 0, len = strlen(s);
        if (cap < JSON_SHOWN + 8) {
            snprintf(out, cap, "a string");
            return;
        }
        out[n++] = '"';
        for (; i < len && i < JSON_SHOWN; i++)
            out[n++] = ((unsigned char)s[i] >= 0x20 && s[i] != 0x7f) ? s[i] : '?';
        if (i < len) {
            memcpy(out + n, "...", 3);
            n += 3;
        }
        out[n++] = '"';
        out[n] = '\0';
    } else if (cJSON_IsBool(v)) {
        snprintf(out, cap, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNull(v)) {
        snprintf(out, cap, "null");
    } else if (cJSON_IsArray(v)) {
        snprintf(out, cap, "an array");
    } else if (cJSON_IsObject(v)) {
        snprintf(out, cap, "an object");
    } else {
        snprintf(out, cap, "an invalid value");
    }
}

/* The item at path, or a "missing" error (with why, when the walk stopped
 * at a non-object); *absent says which. */
static wgnn_status json_lookup(const wgnn__json *j, const char *path, const char *want, const cJSON **item,
                               bool *absent, char *err, size_t err_len)
{
    const char *label = j ? j->label : NULL;
    if (err && err_len)
        err[0] = '\0';
    const cJSON *stop;
    size_t stop_len;
    *item = json_walk(j, path, &stop, &stop_len);
    *absent = *item == NULL;
    if (*item != NULL)
        return WGNN_OK;
    if (stop != NULL && stop_len > 0) {
        char seen[JSON_SHOWN + 16];
        json_describe(stop, seen, sizeof seen);
        return json_fail(err, err_len, label, "%s: missing (%.*s is %s, not an object); expected %s", path,
                         (int)stop_len, path, seen, want);
    }
    return json_fail(err, err_len, label, "%s: missing; expected %s", path ? path : "(null)", want);
}

static void json_int_want(int64_t lo, int64_t hi, char *out, size_t cap)
{
    if (lo == INT64_MIN && hi == INT64_MAX)
        snprintf(out, cap, "an integer");
    else if (lo == 1 && hi == INT64_MAX)
        snprintf(out, cap, "a positive integer");
    else if (lo == 0 && hi == INT64_MAX)
        snprintf(out, cap, "a non-negative integer");
    else if (hi == INT64_MAX)
        snprintf(out, cap, "an integer >= %lld", (long long)lo);
    else if (lo == INT64_MIN)
        snprintf(out, cap, "an integer <= %lld", (long long)hi);
    else
        snprintf(out, cap, "an integer in [%lld, %lld]", (long long)lo, (long long)hi);
}

wgnn_status wgnn__json_int(const wgnn__json *j, const char *path, bool has_def, int64_t def, int64_t lo, int64_t hi,
                           int64_t *out, char *err, size_t err_len)
{
    char want[96], seen[JSON_SHOWN + 16];
    json_int_want(lo, hi, want, sizeof want);
    const cJSON *v;
    bool absent;
    wgnn_status s = json_lookup(j, path, want, &v, &absent, err, err_len);
    if (absent && has_def) {
        if (err && err_len)
            err[0] = '\0';
        *out = def;
        return WGNN_OK;
    }
    if (s != WGNN_OK)
        return s;
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        /* 2^63 is exact as a double; [-2^63, 2^63) converts without overflow. */
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == floor(d)) {
            int64_t x = (int64_t)d;
            if (x >= lo && x <= hi) {
                *out = x;
                return WGNN_OK;
            }
        }
    }
    json_describe(v, seen, sizeof seen);
    return json_fail(err, err_len, j->label, "%s: expected %s, got %s", path, want, seen);
}

wgnn_status wgnn__json_num(const wgnn__json *j, const char *path, bool has_def, double def, double lo, double hi,
                           double *out, char *err, size_t err_len)
{
    char want[96], seen[JSON_SHOWN + 16], a[32], b[32];
    json_num_str(lo, a, sizeof a);
    json_num_str(hi, b, sizeof b);
    if (isinf(lo) && isinf(hi))
        snprintf(want, sizeof want, "a finite number");
    else if (isinf(hi))
        snprintf(want, sizeof want, "a number >= %s", a);
    else if (isinf(lo))
        snprintf(want, sizeof want, "a number <= %s", b);
    else
        snprintf(want, sizeof want, "a number in [%s, %s]", a, b);
    const cJSON *v;
    bool absent;
    wgnn_status s = json_lookup(j, path, want, &v, &absent, err, err_len);
    if (absent && has_def) {
        if (err && err_len)
            err[0] = '\0';
        *out = def;
        return WGNN_OK;
    }
    if (s != WGNN_OK)
        return s;
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= lo && v->valuedouble <= hi) {
        *out = v->valuedouble;
        return WGNN_OK;
    }
    json_describe(v, seen, sizeof seen);
    return json_fail(err, err_len, j->label, "%s: expected %s, got %s", path, want, seen);
}

wgnn_status wgnn__json_bool(const wgnn__json *j, const char *path, bool has_def, bool def, bool *out, char *err,
                            size_t err_len)
{
    char seen[JSON_SHOWN + 16];
    const cJSON *v;
    bool absent;
    wgnn_status s = json_lookup(j, path, "true or false", &v, &absent, err, err_len);
    if (absent && has_def) {
        if (err && err_len)
            err[0] = '\0';
        *out = def;
        return WGNN_OK;
    }
    if (s != WGNN_OK)
        return s;
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return WGNN_OK;
    }
    json_describe(v, seen, sizeof seen);
    return json_fail(err, err_len, j->label, "%s: expected true or false, got %s", path, seen);
}

wgnn_status wgnn__json_str(const wgnn__json *j, const char *path, const char *def, char *out, size_t cap, char *err,
                           size_t err_len)
{
    char seen[JSON_SHOWN + 16];
    const cJSON *v;
    bool absent;
    wgnn_status s = json_lookup(j, path, "a string", &v, &absent, err, err_len);
    const char *src = NULL;
    if (absent && def != NULL) {
        if (err && err_len)
            err[0] = '\0';
        src = def;
    } else if (s != WGNN_OK) {
        return s;
    } else if (cJSON_IsString(v)) {
        src = v->valuestring;
    } else {
        json_describe(v, seen, sizeof seen);
        return json_fail(err, err_len, j->label, "%s: expected a string, got %s", path, seen);
    }
    size_t n = strlen(src);
    if (out == NULL || n >= cap)
        return json_fail(err, err_len, j->label, "%s: string of %zu bytes is too long (at most %zu)", path, n,
                         cap ? cap - 1 : 0);
    memcpy(out, src, n + 1);
    return WGNN_OK;
}

wgnn_status wgnn__json_nums(const wgnn__json *j, const char *path, double *out, int n, int cap, int *got, char *err,
                            size_t err_len)
{
    char want[96], seen[JSON_SHOWN + 16];
    if (n > 0)
        snprintf(want, sizeof want, "an array of %d numbers", n);
    else
        snprintf(want, sizeof want, "an array of 1 to %d numbers", cap);
    const cJSON *v;
    bool absent;
    wgnn_status s = json_lookup(j, path, want, &v, &absent, err, err_len);
    if (s != WGNN_OK)
        return s;
    if (!cJSON_IsArray(v)) {
        json_describe(v, seen, sizeof seen);
        return json_fail(err, err_len, j->label, "%s: expected %s, got %s", path, want, seen);
    }
    int size = cJSON_GetArraySize(v);
    if (n > 0 ? size != n : (size < 1 || size > cap))
        return json_fail(err, err_len, j->label, "%s: expected %s, got %d element%s", path, want, size,
                         size == 1 ? "" : "s");
    int i = 0;
    for (const cJSON *x = v->child; x; x = x->next, i++) {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
            json_describe(x, seen, sizeof seen);
            return json_fail(err, err_len, j->label, "%s[%d]: expected a number, got %s", path, i, seen);
        }
        out[i] = x->valuedouble;
    }
    if (got)
        *got = size;
    return WGNN_OK;
}
