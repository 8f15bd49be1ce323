/*
 * tokenizer_encode.c - encoding and decoding with a loaded tokenizer
 * (tokenizer.c loads it; tokenizer.h and wgnn.h say what is supported),
 * and the public wgnn_tokenizer_* / wgnn_detok_* names.
 */
#include "io/tokenizer_impl.h"

#include <utf8proc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- encoding ------------------------------------------------------------------ */

typedef struct heap_item {
    uint32_t rank;
    uint32_t pos;
} heap_item;

typedef struct tok_enc {
    const wgnn__tokenizer *t;
    int32_t *ids;
    size_t n, cap;
    /* scratch, grown to the longest piece */
    int32_t *sym, *prev, *next;
    heap_item *heap;
    char *buf; /* prefix space + piece, or the piece's byte-level string */
    size_t scratch;
    pcre2_match_data *md;
    char *err;
    size_t err_len;
} tok_enc;

static wgnn_status enc_push(tok_enc *E, int32_t id)
{
    if (E->n == E->cap) {
        size_t c = E->cap ? E->cap * 2 : 64;
        int32_t *p = c > SIZE_MAX / sizeof *p ? NULL : realloc(E->ids, c * sizeof *p);
        if (p == NULL)
            return wgnn__tok_fail(WGNN_ERR_OUT_OF_MEMORY, E->err, E->err_len, "%s: out of memory for %zu ids",
                            E->t->label, c);
        E->ids = p;
        E->cap = c;
    }
    E->ids[E->n++] = id;
    return WGNN_OK;
}

static wgnn_status enc_scratch(tok_enc *E, size_t n)
{
    if (n <= E->scratch)
        return WGNN_OK;
    size_t c = n < 256 ? 256 : n;
    if (c > SIZE_MAX / 4 / sizeof(heap_item) - 2)
        return wgnn__tok_fail(WGNN_ERR_OUT_OF_MEMORY, E->err, E->err_len, "%s: piece too long", E->t->label);
    int32_t *sym = malloc(c * sizeof *sym), *prev = malloc(c * sizeof *prev), *next = malloc(c * sizeof *next);
    heap_item *heap = malloc(3 * c * sizeof *heap); /* n - 1 pairs, then at most 2 a merge */
    char *buf = malloc(2 * c + 2);
    if (!sym || !prev || !next || !heap || !buf) {
        free(sym), free(prev), free(next), free(heap), free(buf);
        return wgnn__tok_fail(WGNN_ERR_OUT_OF_MEMORY, E->err, E->err_len, "%s: out of memory", E->t->label);
    }
    free(E->sym), free(E->prev), free(E->next), free(E->heap), free(E->buf);
    E->sym = sym, E->prev = prev, E->next = next, E->heap = heap, E->buf = buf;
    E->scratch = c;
    return WGNN_OK;
}

static bool heap_less(heap_item a, heap_item b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }

static void heap_push(heap_item *h, size_t *n, heap_item x)
{
    size_t i = (*n)++;
    while (i > 0 && heap_less(x, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static heap_item heap_pop(heap_item *h, size_t *n)
{
    heap_item top = h[0], x = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap_less(h[c + 1], h[c]))
            c++;
        if (!heap_less(h[c], x))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = x;
    return top;
}

/* Pushes the pair starting at symbol i, if it merges. Each symbol starts at
 * most one live pair, and a pair's entry is checked when popped. */
static void pair_push(tok_enc *E, size_t *nh, int32_t i)
{
    if (i < 0 || E->next[i] < 0)
        return;
    const tok_pair *p = wgnn__tok_pair_find(E->t, E->sym[i], E->sym[E->next[i]]);
    if (p)
        heap_push(E->heap, nh, (heap_item){p->rank, (uint32_t)i});
}

/* BPE on one pre-token (raw bytes). */
static wgnn_status enc_bpe(tok_enc *E, const char *s, size_t n)
{
    const wgnn__tokenizer *t = E->t;
    if (n == 0)
        return WGNN_OK;
    wgnn_status st = enc_scratch(E, n);
    if (st != WGNN_OK)
        return st;
    if (t->ignore_merges) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            m += (size_t)utf8proc_encode_char((utf8proc_int32_t)wgnn__tok_byte_cp[(unsigned char)s[i]],
                                              (utf8proc_uint8_t *)E->buf + m);
        int32_t id = wgnn__tok_find(t, E->buf, m);
        if (id >= 0)
            return enc_push(E, id);
    }
    for (size_t i = 0; i < n; i++) {
        E->sym[i] = t->byte_id[(unsigned char)s[i]];
        E->prev[i] = (int32_t)i - 1;
        E->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
        if (E->sym[i] < 0 && t->unk < 0) {
            char q[96];
            wgnn__tok_quote(s, n, q, sizeof q);
            return wgnn__tok_fail(WGNN_ERR_FORMAT, E->err, E->err_len,
                            "%s: byte 0x%02x of the piece \"%s\" has no token (no unk_token, no byte_fallback)",
                            t->label, (unsigned char)s[i], q);
        }
    }
    size_t nh = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (E->sym[i] >= 0 && E->sym[i + 1] >= 0)
            pair_push(E, &nh, (int32_t)i);
    while (nh) {
        heap_item h = heap_pop(E->heap, &nh);
        int32_t i = (int32_t)h.pos, j = E->next[i];
        if (E->sym[i] < 0 || j < 0 || E->sym[j] < 0)
            continue;
        const tok_pair *p = wgnn__tok_pair_find(t, E->sym[i], E->sym[j]);
        if (p == NULL || p->rank != h.rank)
            continue; /* stale: one side merged since */
        E->sym[i] = p->id;
        E->next[i] = E->next[j];
        if (E->next[j] >= 0)
            E->prev[E->next[j]] = i;
        E->sym[j] = -2; /* merged away */
        pair_push(E, &nh, E->prev[i]);
        pair_push(E, &nh, i);
    }
    bool last_unk = false;
    for (int32_t i = 0; i >= 0; i = E->next[i]) {
        int32_t id = E->sym[i] >= 0 ? E->sym[i] : t->unk;
        bool is_unk = E->sym[i] < 0;
        if (!(is_unk && last_unk && t->fuse_unk) && (st = enc_push(E, id)) != WGNN_OK)
            return st;
        last_unk = is_unk;
    }
    return WGNN_OK;
}

typedef wgnn_status (*piece_fn)(tok_enc *E, int level, const char *s, size_t n);

/* Calls fn on the matches of re in s and on the text between them. */
static wgnn_status enc_isolated(tok_enc *E, const pcre2_code *re, int level, piece_fn fn, const char *s, size_t n)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (md == NULL)
        return wgnn__tok_fail(WGNN_ERR_OUT_OF_MEMORY, E->err, E->err_len, "%s: out of memory", E->t->label);
    wgnn_status st = WGNN_OK;
    size_t at = 0, done = 0;
    while (at <= n && st == WGNN_OK) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            st = wgnn__tok_fail(WGNN_ERR_FORMAT, E->err, E->err_len, "%s: pre_tokenizer regex failed: %s", E->t->label,
                          (const char *)msg);
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t b = ov[0], e = ov[1];
        if (e <= b || b < done) { /* empty match (or \K games): step one character on */
            at = (b > at ? b : at) + 1;
            while (at < n && ((unsigned char)s[at] & 0xC0) == 0x80)
                at++;
            continue;
        }
        if (b > done)
            st = fn(E, level + 1, s + done, b - done);
        if (st == WGNN_OK)
            st = fn(E, level + 1, s + b, e - b);
        done = at = e;
    }
    if (st == WGNN_OK && done < n)
        st = fn(E, level + 1, s + done, n - done);
    pcre2_match_data_free(md);
    return st;
}

static wgnn_status enc_bpe_piece(tok_enc *E, int level, const char *s, size_t n) { return enc_bpe(E, s, n); }

/* level < n_split: Split step `level`; == n_split: ByteLevel. */
static wgnn_status enc_piece(tok_enc *E, int level, const char *s, size_t n)
{
    const wgnn__tokenizer *t = E->t;
    if (n == 0)
        return WGNN_OK;
    if (level < t->n_split)
        return enc_isolated(E, t->split[level], level, enc_piece, s, n);
    char *tmp = NULL;
    if (t->add_prefix_space && s[0] != ' ') {
        tmp = malloc(n + 1);
        if (tmp == NULL)
            return wgnn__tok_fail(WGNN_ERR_OUT_OF_MEMORY, E->err, E->err_len, "%s: out of memory", t->label);
        tmp[0] = ' ';
        memcpy(tmp + 1, s, n);
        s = tmp;
        n++;
    }
    wgnn_status st = t->gpt2 ? enc_isolated(E, t->gpt2, level, enc_bpe_piece, s, n) : enc_bpe(E, s, n);
    free(tmp);
    return st;
}

static wgnn_status enc_segment(tok_enc *E, const char *s, size_t n)
{
    if (n == 0)
        return WGNN_OK;
    if (!E->t->nfc)
        return enc_piece(E, 0, s, n);
    utf8proc_uint8_t *norm = NULL;
    utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &norm,
                                      UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (m < 0)
        return wgnn__tok_fail(m == UTF8PROC_ERROR_NOMEM ? WGNN_ERR_OUT_OF_MEMORY : WGNN_ERR_INVALID_ARGUMENT, E->err,
                        E->err_len, "%s: NFC: %s", E->t->label, utf8proc_errmsg(m));
    wgnn_status st = enc_piece(E, 0, (const char *)norm, (size_t)m);
    free(norm);
    return st;
}

/* Offset of the first byte that is not part of valid UTF-8, or n. */
static size_t utf8_bad_at(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0)
            return i;
        i += (size_t)k;
    }
    return n;
}

wgnn_status wgnn__tokenizer_encode(const wgnn__tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                   char *err, size_t err_len)
{
    if (ids)
        *ids = NULL;
    if (n)
        *n = 0;
    if (t == NULL || ids == NULL || n == NULL || (text == NULL && len))
        return wgnn__tok_fail(WGNN_ERR_INVALID_ARGUMENT, err, err_len, "tokenizer: encode: NULL argument");
    if (len > TOK_MAX_TEXT) /* symbol indices are int32_t */
        return wgnn__tok_fail(WGNN_ERR_INVALID_ARGUMENT, err, err_len, "tokenizer: the text to encode has %zu bytes, over the "
                        "limit of %d", len, TOK_MAX_TEXT);
    size_t bad = utf8_bad_at(text, len);
    if (bad < len)
        return wgnn__tok_fail(WGNN_ERR_INVALID_ARGUMENT, err, err_len, "tokenizer: the text to encode is not valid UTF-8 at "
                        "byte %zu (0x%02x)", bad, (unsigned char)text[bad]);
    tok_enc E = {.t = t, .err = err, .err_len = err_len};
    wgnn_status st = WGNN_OK;
    size_t seg = 0, i = 0;
    while (i < len && st == WGNN_OK) {
        const tok_added *hit = NULL;
        for (size_t k = 0; k < t->n_added; k++) { /* longest first */
            const tok_added *a = &t->added[k];
            if (a->len <= len - i && a->str[0] == text[i] && memcmp(a->str, text + i, a->len) == 0) {
                hit = a;
                break;
            }
        }
        if (hit == NULL) {
            i++;
            continue;
        }
        st = enc_segment(&E, text + seg, i - seg);
        if (st == WGNN_OK)
            st = enc_push(&E, hit->id);
        i += hit->len;
        seg = i;
    }
    if (st == WGNN_OK)
        st = enc_segment(&E, text + seg, len - seg);
    free(E.sym), free(E.prev), free(E.next), free(E.heap), free(E.buf);
    if (st != WGNN_OK) {
        free(E.ids);
        return st;
    }
    *ids = E.ids;
    *n = E.n;
    return WGNN_OK;
}

/* ---- decoding ------------------------------------------------------------------ */

void wgnn__detok_init(wgnn__detok *d)
{
    if (d)
        memset(d, 0, sizeof *d);
}

size_t wgnn__detok_max_out(const wgnn__tokenizer *t) { return t ? 3 * (t->max_bytes + 4) : 0; }

/* Complete characters of a ++ b go to out; an incomplete tail to tail. */
static wgnn_status utf8_drain(const unsigned char *a, size_t na, const unsigned char *b, size_t nb, char *out,
                              size_t cap, size_t *n_out, unsigned char *tail, size_t *n_tail)
{
#define AT(k) ((k) < na ? a[k] : b[(k) - na])
    size_t n = na + nb, i = 0, o = 0;
    static const char fffd[] = "\xEF\xBF\xBD";
    while (i < n) {
        unsigned c = AT(i);
        size_t need = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
                                                                  : (c >= 0xF0 && c <= 0xF4) ? 4
                                                                                            : 0;
        size_t k = 1;
        bool bad = need == 0;
        for (; !bad && k < need; k++) {
            if (i + k >= n) { /* incomplete: hold back */
                *n_tail = n - i;
                for (size_t q = 0; q < *n_tail; q++)
                    tail[q] = AT(i + q);
                *n_out = o;
                return WGNN_OK;
            }
            unsigned x = AT(i + k), lo = 0x80, hi = 0xBF;
            if (k == 1)
                lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
            if (x < lo || x > hi)
                bad = true;
        }
        if (bad) {
            k = k > 1 ? k - 1 : 1; /* the maximal invalid subpart */
            if (o + 3 > cap)
                return WGNN_ERR_LIMIT;
            memcpy(out + o, fffd, 3);
            o += 3;
            i += k;
            continue;
        }
        if (o + need > cap)
            return WGNN_ERR_LIMIT;
        for (size_t q = 0; q < need; q++)
            out[o++] = (char)AT(i + q);
        i += need;
    }
#undef AT
    *n_tail = 0;
    *n_out = o;
    return WGNN_OK;
}

wgnn_status wgnn__detok_push(const wgnn__tokenizer *t, wgnn__detok *d, int32_t id, char *out, size_t cap,
                             size_t *n_out)
{
    if (n_out)
        *n_out = 0;
    if (t == NULL || d == NULL || n_out == NULL || (out == NULL && cap) || d->n_tail > 3)
        return WGNN_ERR_INVALID_ARGUMENT;
    if (id < 0 || id >= t->n_ids || t->tok[id].str == NULL)
        return WGNN_ERR_INVALID_ARGUMENT;
    unsigned char tail[4];
    size_t n_tail = 0, n = 0;
    wgnn_status s =
        utf8_drain(d->tail, d->n_tail, t->tok[id].bytes, t->tok[id].n_bytes, out, cap, &n, tail, &n_tail);
    if (s != WGNN_OK)
        return s;
    memcpy(d->tail, tail, n_tail);
    d->n_tail = n_tail;
    *n_out = n;
    return WGNN_OK;
}

wgnn_status wgnn__detok_flush(wgnn__detok *d, char *out, size_t cap, size_t *n_out)
{
    if (n_out)
        *n_out = 0;
    if (d == NULL || n_out == NULL || (out == NULL && cap))
        return WGNN_ERR_INVALID_ARGUMENT;
    if (d->n_tail == 0)
        return WGNN_OK;
    if (cap < 3)
        return WGNN_ERR_LIMIT;
    memcpy(out, "\xEF\xBF\xBD", 3); /* an incomplete tail is one maximal invalid subpart */
    *n_out = 3;
    d->n_tail = 0;
    return WGNN_OK;
}

/* ---- the public API (include/wgnn.h): the same functions ---------------- */

wgnn_status wgnn_tokenizer_load(const char *path, wgnn_tokenizer **out, char *err, size_t err_len) {
    if (!path || !out) {
        if (err && err_len) snprintf(err, err_len, "wgnn_tokenizer_load: path and out must not be NULL");
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    if (!path[0]) {
        if (err && err_len) snprintf(err, err_len, "wgnn_tokenizer_load: path is empty (a tokenizer.json or its folder)");
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    return wgnn__tokenizer_load(path, out, err, err_len);
}

void wgnn_tokenizer_free(wgnn_tokenizer *t) { wgnn__tokenizer_free(t); }

wgnn_status wgnn_tokenizer_encode(const wgnn_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                  char *err, size_t err_len) {
    if (!t || (!text && len) || !ids || !n) {
        if (err && err_len) snprintf(err, err_len, "wgnn_tokenizer_encode: NULL argument");
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    return wgnn__tokenizer_encode(t, text ? text : "", len, ids, n, err, err_len);
}

int wgnn_tokenizer_vocab_size(const wgnn_tokenizer *t) { return t ? wgnn__tokenizer_vocab_size(t) : 0; }

int32_t wgnn_tokenizer_token_id(const wgnn_tokenizer *t, const char *token) {
    return t && token ? wgnn__tokenizer_token_id(t, token) : -1;
}

void wgnn_detok_init(wgnn_detok *d) {
    if (d) wgnn__detok_init(d);
}

wgnn_status wgnn_detok_push(const wgnn_tokenizer *t, wgnn_detok *d, int32_t id, char *out, size_t cap,
                            size_t *n_out) {
    if (!t || !d || (!out && cap) || !n_out) return WGNN_ERR_INVALID_ARGUMENT;
    return wgnn__detok_push(t, d, id, out, cap, n_out);
}

wgnn_status wgnn_detok_flush(wgnn_detok *d, char *out, size_t cap, size_t *n_out) {
    if (!d || (!out && cap) || !n_out || d->n_tail > 3) return WGNN_ERR_INVALID_ARGUMENT; /* as wgnn_detok_push */
    return wgnn__detok_flush(d, out, cap, n_out);
}

size_t wgnn_detok_max_out(const wgnn_tokenizer *t) { return t ? wgnn__detok_max_out(t) : 0; }
