/*
 * npy.c - NumPy .npy reader (format versions 1.0, 2.0, 3.0); the writer is
 * npy_write.c, the constants and helpers both use npy_impl.h.
 *
 * Layout: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0,
 * uint32 LE for 2.0 / 3.0), then a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and '\n', then the raw C-order element bytes.
 *
 * The header parser accepts what numpy's reader accepts for the dtypes wgnn
 * has and rejects everything else with a reason. Input is untrusted: every
 * byte read is bounds-checked, integers are parsed with overflow checks and
 * the data size must match the file exactly before anything is allocated.
 *
 * Files are read header first: the header (at most NPY_MAX_HEADER bytes) is
 * read and checked, then the data size is compared with the file size, and
 * only then is memory allocated for the data. Pipes and FIFOs are read as
 * streams: exactly the data size the header declares, then a look for
 * trailing bytes, so an endless stream cannot take more memory than its own
 * header asked for. Devices are refused without being opened.
 *
 * Needs nothing from the library but the types in wgnn.h, so that it links
 * alone into fuzz/fuzz_npy.c.
 */
#define _POSIX_C_SOURCE 200809L /* getpid, lstat, O_CLOEXEC */

#include "wgnn.h"
#include "io/file.h"
#include "io/npy_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct npy_cursor {
    const unsigned char *s;
    size_t n;
    size_t i;
} npy_cursor;

wgnn_status wgnn__npy_fail(const npy_err *e, wgnn_status status, const char *fmt, ...)
{
    if (e->buf == NULL || e->len == 0)
        return status;
    int n = e->path ? snprintf(e->buf, e->len, "npy: %s: ", e->path)
                    : snprintf(e->buf, e->len, "npy: ");
    if (n >= 0 && (size_t)n < e->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->buf + n, e->len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* Local twin of wgnn_dtype_size, so this file links without the library. */
size_t wgnn__npy_dtype_size(wgnn_dtype t)
{
    switch (t) {
    case WGNN_F32: return 4;
    case WGNN_I32: return 4;
    case WGNN_F16: return 2;
    }
    return 0;
}

const char *wgnn__npy_dtype_descr(wgnn_dtype t)
{
    switch (t) {
    case WGNN_F32: return "<f4";
    case WGNN_I32: return "<i4";
    case WGNN_F16: return "<f2";
    }
    return NULL;
}

/* Copies up to len header bytes into out for a message, with anything
 * unprintable as '?', and "..." when cut. */
static void npy_excerpt(const unsigned char *s, size_t len, char *out, size_t out_len)
{
    size_t keep = len;
    int cut = 0;
    if (keep + 1 > out_len) {
        keep = out_len > 4 ? out_len - 4 : 0;
        cut = 1;
    }
    for (size_t i = 0; i < keep; i++)
        out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
    if (cut && out_len >= 4) {
        memcpy(out + keep, "...", 3);
        keep += 3;
    }
    if (out_len > 0)
        out[keep < out_len ? keep : out_len - 1] = '\0';
}

/* "(2, 3)", "(3,)" or "()", as numpy's repr of the shape tuple. */
void wgnn__npy_shape_str(const int64_t *dims, int rank, char *out, size_t out_len)
{
    size_t used = 0;
    int n = snprintf(out, out_len, "(");
    for (int i = 0; n >= 0 && i < rank; i++) {
        used += (size_t)n;
        if (used >= out_len)
            return;
        n = snprintf(out + used, out_len - used, i ? ", %lld" : "%lld", (long long)dims[i]);
    }
    if (n < 0)
        return;
    used += (size_t)n;
    if (used < out_len)
        snprintf(out + used, out_len - used, rank == 1 ? ",)" : ")");
}

/* ---- header dict parsing ----------------------------------------------- */

static int npy_peek(const npy_cursor *c)
{
    return c->i < c->n ? c->s[c->i] : -1;
}

static void npy_skip_ws(npy_cursor *c)
{
    while (c->i < c->n) {
        unsigned char ch = c->s[c->i];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\f' && ch != '\v')
            break;
        c->i++;
    }
}

/* Error for finding something other than what `want` describes at the cursor. */
static wgnn_status npy_unexpected(const npy_err *e, const npy_cursor *c, const char *want)
{
    if (c->i >= c->n)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "header ends where %s was expected", want);
    char got[24];
    npy_excerpt(c->s + c->i, c->n - c->i, got, sizeof got);
    return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "header: expected %s at offset %zu, found \"%s\"", want,
                    c->i, got);
}

/* A Python string literal, '...' or "...", without escapes. Sets *str and
 * *len to its contents, which stay in the header buffer. */
static wgnn_status npy_parse_string(const npy_err *e, npy_cursor *c, const unsigned char **str,
                                    size_t *len, const char *what)
{
    int q = npy_peek(c);
    if (q != '\'' && q != '"')
        return npy_unexpected(e, c, what);
    size_t start = ++c->i;
    while (c->i < c->n && c->s[c->i] != (unsigned char)q) {
        if (c->s[c->i] == '\\')
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                            "header: escape sequence in a string at offset %zu is not supported",
                            c->i);
        if (c->s[c->i] == '\n')
            break;
        c->i++;
    }
    if (c->i >= c->n || c->s[c->i] != (unsigned char)q)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "header: unterminated string starting at offset %zu",
                        start - 1);
    *str = c->s + start;
    *len = c->i - start;
    c->i++;
    return WGNN_OK;
}

static int npy_str_is(const unsigned char *s, size_t len, const char *lit)
{
    return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

static wgnn_status npy_parse_descr(const npy_err *e, npy_cursor *c, wgnn_dtype *dtype)
{
    if (npy_peek(c) == '[')
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                        "structured (record) dtypes are not supported (wgnn reads <f4, <i4, <f2)");
    const unsigned char *s;
    size_t len;
    wgnn_status st = npy_parse_string(e, c, &s, &len, "a dtype string for 'descr'");
    if (st != WGNN_OK)
        return st;
    static const wgnn_dtype known[] = {WGNN_F32, WGNN_I32, WGNN_F16};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        const char *d = wgnn__npy_dtype_descr(known[k]);
        if (npy_str_is(s, len, d)) {
            *dtype = known[k];
            return WGNN_OK;
        }
    }
    char shown[40];
    npy_excerpt(s, len, shown, sizeof shown);
    if (len == 3 && s[0] == '>') {
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
            if (memcmp(s + 1, wgnn__npy_dtype_descr(known[k]) + 1, 2) == 0)
                return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                                "big-endian dtype '%s' is not supported; convert with "
                                "a.astype(a.dtype.newbyteorder('<'))",
                                shown);
        }
    }
    return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "unsupported dtype '%s' (wgnn reads <f4, <i4, <f2)", shown);
}

static wgnn_status npy_parse_bool(const npy_err *e, npy_cursor *c, int *value)
{
    size_t start = c->i;
    while (c->i < c->n && ((c->s[c->i] >= 'a' && c->s[c->i] <= 'z') ||
                           (c->s[c->i] >= 'A' && c->s[c->i] <= 'Z')))
        c->i++;
    if (npy_str_is(c->s + start, c->i - start, "True")) {
        *value = 1;
        return WGNN_OK;
    }
    if (npy_str_is(c->s + start, c->i - start, "False")) {
        *value = 0;
        return WGNN_OK;
    }
    c->i = start;
    return npy_unexpected(e, c, "True or False for 'fortran_order'");
}

/* One non-negative decimal dimension, as Python writes it (an 'L' suffix
 * from Python 2 is allowed). */
static wgnn_status npy_parse_dim(const npy_err *e, npy_cursor *c, int64_t *dim)
{
    if (npy_peek(c) == '-')
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "shape has a negative dimension at offset %zu",
                        c->i);
    int ch = npy_peek(c);
    if (ch < '0' || ch > '9')
        return npy_unexpected(e, c, "a dimension in 'shape'");
    size_t start = c->i;
    int64_t v = 0;
    while ((ch = npy_peek(c)) >= '0' && ch <= '9') {
        int d = ch - '0';
        if (v > (INT64_MAX - d) / 10)
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                            "shape dimension at offset %zu is too large (over 2^63-1)", start);
        v = v * 10 + d;
        c->i++;
    }
    if (npy_peek(c) == 'L' || npy_peek(c) == 'l')
        c->i++;
    *dim = v;
    return WGNN_OK;
}

/* A tuple of dimensions: "()", "(3,)", "(2, 3)", "(2, 3,)". Counts past
 * WGNN_MAX_RANK so that the message can say the real rank. */
static wgnn_status npy_parse_shape(const npy_err *e, npy_cursor *c, int64_t *dims, int *rank)
{
    if (npy_peek(c) != '(')
        return npy_unexpected(e, c, "a tuple such as (2, 3) for 'shape'");
    c->i++;
    npy_skip_ws(c);
    int count = 0;
    int comma = 0;
    while (npy_peek(c) != ')') {
        int64_t d = 0;
        wgnn_status st = npy_parse_dim(e, c, &d);
        if (st != WGNN_OK)
            return st;
        if (count < WGNN_MAX_RANK)
            dims[count] = d;
        if (count < INT32_MAX)
            count++;
        npy_skip_ws(c);
        comma = 0;
        if (npy_peek(c) == ',') {
            comma = 1;
            c->i++;
            npy_skip_ws(c);
        } else if (npy_peek(c) != ')') {
            return npy_unexpected(e, c, "',' or ')' in 'shape'");
        }
    }
    c->i++;
    if (count == 1 && !comma)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                        "'shape' (%lld) is not a tuple (a 1-d shape is written (%lld,))",
                        (long long)dims[0], (long long)dims[0]);
    if (count > WGNN_MAX_RANK)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "rank %d exceeds the maximum of %d", count,
                        WGNN_MAX_RANK);
    for (int i = 0; i < count; i++) {
        if (dims[i] == 0)
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                            "shape has a zero-sized dimension; wgnn tensors need every dim >= 1");
    }
    *rank = count;
    return WGNN_OK;
}

enum { NPY_KEY_DESCR = 1, NPY_KEY_FORTRAN = 2, NPY_KEY_SHAPE = 4 };

/* Parses the dict text h[0..n) into hd (dtype, rank, dims). */
static wgnn_status npy_parse_dict(const npy_err *e, const unsigned char *h, size_t n,
                                  npy_header *hd)
{
    npy_cursor c = {h, n, 0};
    int seen = 0;
    int fortran = 0;
    npy_skip_ws(&c);
    if (npy_peek(&c) != '{')
        return npy_unexpected(e, &c, "'{' opening the header dict");
    c.i++;
    for (;;) {
        npy_skip_ws(&c);
        if (npy_peek(&c) == '}')
            break;
        if (c.i >= c.n)
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "header dict is not closed with '}'");
        const unsigned char *key;
        size_t key_len;
        wgnn_status st = npy_parse_string(e, &c, &key, &key_len, "a quoted key in the header dict");
        if (st != WGNN_OK)
            return st;
        int which = npy_str_is(key, key_len, "descr")           ? NPY_KEY_DESCR
                    : npy_str_is(key, key_len, "fortran_order") ? NPY_KEY_FORTRAN
                    : npy_str_is(key, key_len, "shape")         ? NPY_KEY_SHAPE
                                                                : 0;
        char shown[40];
        npy_excerpt(key, key_len, shown, sizeof shown);
        if (which == 0)
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                            "unexpected key '%s' in the header (expected 'descr', "
                            "'fortran_order', 'shape')",
                            shown);
        if (seen & which)
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "duplicate key '%s' in the header", shown);
        seen |= which;
        npy_skip_ws(&c);
        if (npy_peek(&c) != ':')
            return npy_unexpected(e, &c, "':' after a key");
        c.i++;
        npy_skip_ws(&c);
        if (which == NPY_KEY_DESCR)
            st = npy_parse_descr(e, &c, &hd->dtype);
        else if (which == NPY_KEY_FORTRAN)
            st = npy_parse_bool(e, &c, &fortran);
        else
            st = npy_parse_shape(e, &c, hd->dims, &hd->rank);
        if (st != WGNN_OK)
            return st;
        npy_skip_ws(&c);
        if (npy_peek(&c) == ',') {
            c.i++;
        } else if (npy_peek(&c) != '}') {
            if (c.i >= c.n)
                return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "header dict is not closed with '}'");
            return npy_unexpected(e, &c, "',' or '}' in the header dict");
        }
    }
    c.i++;
    npy_skip_ws(&c);
    if (c.i < c.n)
        return npy_unexpected(e, &c, "only padding after the header dict");
    static const struct { int bit; const char *name; } keys[] = {
        {NPY_KEY_DESCR, "descr"}, {NPY_KEY_FORTRAN, "fortran_order"}, {NPY_KEY_SHAPE, "shape"}};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (!(seen & keys[k].bit))
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "header is missing the '%s' key", keys[k].name);
    }
    if (fortran)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                        "fortran_order True (column-major) is not supported; save "
                        "np.ascontiguousarray(a) instead");
    return WGNN_OK;
}

/* Checks the prefix (magic, version, header length) in b[0..len), which
 * holds at least the version's prefix; sets *prefix_len and *hlen. */
static wgnn_status npy_parse_prefix(const npy_err *e, const unsigned char *b, size_t len,
                                    size_t *prefix_len, uint32_t *hlen)
{
    if (len == 0)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "file is empty (0 bytes)");
    size_t cmp = len < NPY_MAGIC_LEN ? len : NPY_MAGIC_LEN;
    if (memcmp(b, NPY_MAGIC, cmp) != 0)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "not a .npy file (bad magic; expected \\x93NUMPY)");
    if (len < NPY_MAGIC_LEN + 2)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "file is too short (%zu bytes) to be a .npy file", len);
    unsigned major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                        "unsupported format version %u.%u (wgnn reads 1.0, 2.0, 3.0)", major,
                        minor);
    size_t prefix = major == 1 ? NPY_PREFIX_V1 : NPY_PREFIX_V2;
    if (len < prefix)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "file is too short (%zu bytes) to be a .npy file", len);
    uint32_t h = (uint32_t)b[8] | (uint32_t)b[9] << 8;
    if (major != 1)
        h |= (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
    if (h > NPY_MAX_HEADER)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "header too long (%lu bytes; the limit is %u)",
                        (unsigned long)h, NPY_MAX_HEADER);
    *prefix_len = prefix;
    *hlen = h;
    return WGNN_OK;
}

/* Checks prefix and header dict in b[0..len), which holds at least the whole
 * header, and computes numel, nbytes and the data offset. The data itself
 * is not looked at: see npy_check_data_size. */
static wgnn_status npy_parse_meta(const npy_err *e, const unsigned char *b, size_t len,
                                  npy_header *hd)
{
    memset(hd, 0, sizeof *hd);
    size_t prefix = 0;
    uint32_t hlen = 0;
    wgnn_status st = npy_parse_prefix(e, b, len, &prefix, &hlen);
    if (st != WGNN_OK)
        return st;
    if (hlen > len - prefix)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                        "header length %lu runs past the end of the file (%zu bytes after the "
                        "prefix)",
                        (unsigned long)hlen, len - prefix);
    st = npy_parse_dict(e, b + prefix, hlen, hd);
    if (st != WGNN_OK)
        return st;

    size_t esize = wgnn__npy_dtype_size(hd->dtype);
    uint64_t numel = 1;
    for (int i = 0; i < hd->rank; i++) {
        if ((uint64_t)hd->dims[i] > UINT64_MAX / numel) {
            char shape[NPY_SHAPE_STR];
            wgnn__npy_shape_str(hd->dims, hd->rank, shape, sizeof shape);
            return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "shape %s is too large: element count overflows "
                            "64 bits", shape);
        }
        numel *= (uint64_t)hd->dims[i];
    }
    if (numel > UINT64_MAX / esize) {
        char shape[NPY_SHAPE_STR];
        wgnn__npy_shape_str(hd->dims, hd->rank, shape, sizeof shape);
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "shape %s is too large: byte count overflows 64 bits",
                        shape);
    }
    hd->numel = numel;
    hd->nbytes = numel * esize;
    hd->data_offset = prefix + hlen;
    return WGNN_OK;
}

/* The data the header declares against the `avail` bytes that follow it. */
static wgnn_status npy_check_data_size(const npy_err *e, const npy_header *hd, uint64_t avail)
{
    if (hd->nbytes > avail)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT, "truncated: expected %llu data bytes, found %llu",
                        (unsigned long long)hd->nbytes, (unsigned long long)avail);
    if (hd->nbytes < avail)
        return wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                        "%llu trailing bytes after the %llu data bytes the header describes",
                        (unsigned long long)(avail - hd->nbytes), (unsigned long long)hd->nbytes);
    if (hd->nbytes > SIZE_MAX)
        return wgnn__npy_fail(e, WGNN_ERR_OUT_OF_MEMORY, "%llu data bytes do not fit in memory",
                        (unsigned long long)hd->nbytes);
    return WGNN_OK;
}

/* Validates the whole image (prefix, header, data size) without copying. */
static wgnn_status npy_parse_header(const npy_err *e, const unsigned char *b, size_t len,
                                    npy_header *hd)
{
    wgnn_status st = npy_parse_meta(e, b, len, hd);
    if (st == WGNN_OK)
        st = npy_check_data_size(e, hd, (uint64_t)(len - hd->data_offset));
    if (st != WGNN_OK)
        memset(hd, 0, sizeof *hd);
    return st;
}

static void npy_fill(wgnn_npy *out, const npy_header *hd, void *data)
{
    out->dtype = hd->dtype;
    out->rank = hd->rank;
    memcpy(out->dims, hd->dims, sizeof out->dims);
    out->data = data;
    out->numel = hd->numel;
    out->nbytes = hd->nbytes;
}

/* ---- public API ---------------------------------------------------------- */

wgnn_status wgnn_npy_parse(const void *buf, size_t len, wgnn_npy *out, char *err, size_t err_len)
{
    npy_err e = {err, err_len, NULL};
    npy_header hd;
    if (err && err_len)
        err[0] = '\0';
    if (out)
        memset(out, 0, sizeof *out);
    if (out == NULL || (buf == NULL && len != 0))
        return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "parse: %s is NULL", out ? "buf" : "out");
    wgnn_status st = npy_parse_header(&e, buf, len, &hd);
    if (st != WGNN_OK)
        return st;
    void *data = malloc((size_t)hd.nbytes);
    if (data == NULL)
        return wgnn__npy_fail(&e, WGNN_ERR_OUT_OF_MEMORY, "out of memory for %llu data bytes",
                        (unsigned long long)hd.nbytes);
    memcpy(data, (const unsigned char *)buf + hd.data_offset, (size_t)hd.nbytes);
    npy_fill(out, &hd, data);
    return WGNN_OK;
}

/* ---- reading files --------------------------------------------------------- */

/* open(2), again when a signal interrupts it (a FIFO's open can wait long). */
int wgnn__npy_open_retry(const char *path, int flags, mode_t mode)
{
    int fd;
    do
        fd = open(path, flags, mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* Reads until want bytes or end of file, retrying short reads and EINTR;
 * *got says how many arrived. -1 (errno set) on a read error. */
static int npy_read_full(int fd, unsigned char *buf, size_t want, size_t *got)
{
    size_t n = 0;
    while (n < want) {
        size_t chunk = want - n < NPY_IO_CHUNK ? want - n : NPY_IO_CHUNK;
        ssize_t r = read(fd, buf + n, chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            *got = n;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *got = n;
    return 0;
}

/* An open input: a regular file of known size, or a stream (pipe, FIFO). */
typedef struct npy_file {
    int fd;
    int stream;
    uint64_t size; /* regular files: the size at open */
} npy_file;

static wgnn_status npy_not_regular(const npy_err *e, mode_t m)
{
    if (S_ISDIR(m))
        return wgnn__npy_fail(e, WGNN_ERR_IO, "is a directory, not a .npy file");
    return wgnn__npy_fail(e, WGNN_ERR_IO,
                    "not a regular file (%s); wgnn reads .npy data from regular files, pipes "
                    "and FIFOs",
                    wgnn__file_kind(m));
}

/* Opens path for reading. Looks before opening: opening a device can have
 * effects of its own (a tape rewinds), and a FIFO opened and closed unread
 * would cost its writer the data. With header_only a FIFO is refused with
 * WGNN_ERR_UNSUPPORTED, unopened, since its header cannot be read without
 * consuming it. */
static wgnn_status npy_open(const npy_err *e, const char *path, int header_only, npy_file *nf)
{
    struct stat sb;
    nf->fd = -1;
    if (stat(path, &sb) != 0)
        return wgnn__npy_fail(e, WGNN_ERR_IO, "cannot open: %s", strerror(errno));
    if (S_ISFIFO(sb.st_mode) && header_only)
        return wgnn__npy_fail(e, WGNN_ERR_UNSUPPORTED,
                        "is a pipe or FIFO: its header cannot be read without consuming it; "
                        "read it whole with wgnn_npy_load");
    if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode))
        return npy_not_regular(e, sb.st_mode);
    int fd = wgnn__npy_open_retry(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
    if (fd < 0)
        return wgnn__npy_fail(e, WGNN_ERR_IO, "cannot open: %s", strerror(errno));
    nf->fd = fd;
    /* The path may have been replaced between stat and open. */
    if (fstat(fd, &sb) != 0)
        return wgnn__npy_fail(e, WGNN_ERR_IO, "cannot stat: %s", strerror(errno));
    if (S_ISFIFO(sb.st_mode) && !header_only) {
        nf->stream = 1;
        return WGNN_OK;
    }
    if (!S_ISREG(sb.st_mode))
        return npy_not_regular(e, sb.st_mode);
    nf->stream = 0;
    nf->size = (uint64_t)sb.st_size;
    return WGNN_OK;
}

/* Grows *buf to hold `want` bytes and reads into it until *have == want or
 * end of file. */
static wgnn_status npy_read_more(const npy_err *e, const npy_file *nf, unsigned char **buf,
                                 size_t *have, size_t want)
{
    if (*have >= want)
        return WGNN_OK;
    unsigned char *grown = realloc(*buf, want);
    if (grown == NULL)
        return wgnn__npy_fail(e, WGNN_ERR_OUT_OF_MEMORY, "out of memory reading a %zu-byte header",
                        want);
    *buf = grown;
    size_t got = 0;
    int rc = npy_read_full(nf->fd, *buf + *have, want - *have, &got);
    *have += got;
    if (rc != 0)
        return wgnn__npy_fail(e, WGNN_ERR_IO, "read failed: %s", strerror(errno));
    return WGNN_OK;
}

/* Reads exactly the header and checks it; leaves the file at the data. For a
 * regular file also checks that the file holds exactly the data the header
 * declares, before anything of that size is allocated. */
static wgnn_status npy_read_header(const npy_err *e, const npy_file *nf, npy_header *hd)
{
    unsigned char *buf = NULL;
    size_t have = 0, prefix = 0;
    uint32_t hlen = 0;
    /* Never read past the header: for a stream those bytes would be lost.
     * Version 1 has a 10-byte prefix, versions 2 and 3 one of 12. */
    wgnn_status st = npy_read_more(e, nf, &buf, &have, NPY_PREFIX_V1);
    if (st == WGNN_OK && have == NPY_PREFIX_V1 && buf[6] >= 2)
        st = npy_read_more(e, nf, &buf, &have, NPY_PREFIX_V2);
    if (st != WGNN_OK)
        goto cleanup;
    if (have >= NPY_PREFIX_V1) {
        st = npy_parse_prefix(e, buf, have, &prefix, &hlen);
        if (st != WGNN_OK)
            goto cleanup;
        st = npy_read_more(e, nf, &buf, &have, prefix + hlen);
        if (st != WGNN_OK)
            goto cleanup;
    }
    if (have < prefix + hlen || have < NPY_PREFIX_V1) {
        /* The file ended early, so buf holds all of it: the in-memory parser
         * says what is wrong, in the same words as wgnn_npy_parse. */
        st = npy_parse_header(e, buf, have, hd);
        if (st == WGNN_OK) /* not reachable: no valid .npy is this short */
            st = wgnn__npy_fail(e, WGNN_ERR_FORMAT, "file is too short (%zu bytes)", have);
        goto cleanup;
    }
    st = npy_parse_meta(e, buf, have, hd);
    if (st != WGNN_OK || nf->stream)
        goto cleanup;
    if (nf->size < hd->data_offset) {
        st = wgnn__npy_fail(e, WGNN_ERR_IO, "file changed while its header was read");
        goto cleanup;
    }
    st = npy_check_data_size(e, hd, nf->size - hd->data_offset);

cleanup:
    free(buf);
    return st;
}

/* Reads the hd->nbytes data bytes that follow the header into a fresh
 * buffer, then makes sure nothing follows them. A stream's buffer grows as
 * data arrives, so a stream that ends early never costs the declared size. */
static wgnn_status npy_read_data(const npy_err *e, const npy_file *nf, const npy_header *hd,
                                 void **out)
{
    size_t nbytes = (size_t)hd->nbytes; /* fits: npy_check_data_size, or below */
    size_t cap, have = 0;
    unsigned char *data = NULL;
    wgnn_status st = WGNN_OK;
    if (hd->nbytes > SIZE_MAX)
        return wgnn__npy_fail(e, WGNN_ERR_OUT_OF_MEMORY, "%llu data bytes do not fit in memory",
                        (unsigned long long)hd->nbytes);
    cap = nf->stream && nbytes > NPY_STREAM_CHUNK ? NPY_STREAM_CHUNK : nbytes;
    data = malloc(cap ? cap : 1);
    if (data == NULL)
        return wgnn__npy_fail(e, WGNN_ERR_OUT_OF_MEMORY, "out of memory for %zu data bytes", cap);
    for (;;) {
        size_t got = 0;
        if (npy_read_full(nf->fd, data + have, cap - have, &got) != 0) {
            st = wgnn__npy_fail(e, WGNN_ERR_IO, "read failed: %s", strerror(errno));
            goto cleanup;
        }
        have += got;
        if (have < cap || cap == nbytes)
            break;
        size_t next = cap <= nbytes / 2 ? cap * 2 : nbytes;
        unsigned char *grown = realloc(data, next);
        if (grown == NULL) {
            st = wgnn__npy_fail(e, WGNN_ERR_OUT_OF_MEMORY, "out of memory for %zu data bytes", next);
            goto cleanup;
        }
        data = grown;
        cap = next;
    }
    if (have < nbytes) {
        if (nf->stream)
            st = wgnn__npy_fail(e, WGNN_ERR_FORMAT, "truncated: expected %zu data bytes, found %zu",
                          nbytes, have);
        else
            st = wgnn__npy_fail(e, WGNN_ERR_IO, "file shrank while reading (%zu of %zu data bytes)",
                          have, nbytes);
        goto cleanup;
    }
    /* Count what follows, up to a limit: an endless stream is not drained. */
    unsigned char scratch[4096];
    uint64_t extra = 0;
    for (;;) {
        size_t got = 0;
        if (npy_read_full(nf->fd, scratch, sizeof scratch, &got) != 0) {
            st = wgnn__npy_fail(e, WGNN_ERR_IO, "read failed: %s", strerror(errno));
            goto cleanup;
        }
        extra += got;
        if (got < sizeof scratch)
            break;
        if (extra >= NPY_TRAILING_SCAN) {
            st = wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                          "at least %llu trailing bytes after the %zu data bytes the header "
                          "describes",
                          (unsigned long long)extra, nbytes);
            goto cleanup;
        }
    }
    if (extra > 0) {
        st = wgnn__npy_fail(e, WGNN_ERR_FORMAT,
                      "%llu trailing bytes after the %zu data bytes the header describes%s",
                      (unsigned long long)extra, nbytes,
                      nf->stream ? "" : " (the file grew while it was read)");
        goto cleanup;
    }
    *out = data;
    data = NULL;

cleanup:
    free(data);
    return st;
}

/* wgnn_npy_load and wgnn_npy_load_header. */
static wgnn_status npy_load(const char *path, wgnn_npy *out, char *err, size_t err_len,
                            int header_only)
{
    npy_err e = {err, err_len, path};
    npy_file nf = {-1, 0, 0};
    npy_header hd;
    void *data = NULL;
    wgnn_status st;

    if (err && err_len)
        err[0] = '\0';
    if (out)
        memset(out, 0, sizeof *out);
    if (path == NULL || out == NULL) {
        e.path = NULL;
        return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "%s: %s is NULL",
                        header_only ? "load_header" : "load", path ? "out" : "path");
    }
    st = npy_open(&e, path, header_only, &nf);
    if (st == WGNN_OK)
        st = npy_read_header(&e, &nf, &hd);
    if (st == WGNN_OK && !header_only)
        st = npy_read_data(&e, &nf, &hd, &data);
    if (st == WGNN_OK)
        npy_fill(out, &hd, data);
    if (nf.fd >= 0)
        close(nf.fd); /* read-only: nothing to lose */
    return st;
}

wgnn_status wgnn_npy_load(const char *path, wgnn_npy *out, char *err, size_t err_len)
{
    return npy_load(path, out, err, err_len, 0);
}

wgnn_status wgnn_npy_load_header(const char *path, wgnn_npy *out, char *err, size_t err_len)
{
    return npy_load(path, out, err, err_len, 1);
}

void wgnn_npy_free(wgnn_npy *n)
{
    if (n == NULL)
        return;
    free(n->data);
    n->data = NULL;
}
