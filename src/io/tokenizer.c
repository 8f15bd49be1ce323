/*
 * tokenizer.c - byte-level BPE from a Hugging Face tokenizer.json (see
 * tokenizer.h for what is supported).
 *
 * Encoding: the raw text is split around added tokens (leftmost match,
 * longest first); every other segment is NFC-normalized (when asked), split
 * by each Split regex in turn (Isolated: the matches and the text between
 * them are pieces), then ByteLevel (prefix space, GPT-2 regex when
 * use_regex), mapped byte by byte to GPT-2's printable characters and
 * merged: the adjacent pair of lowest merge rank first (leftmost on ties),
 * through a heap, so a long piece costs O(n log n).
 *
 * The file is untrusted: ids are bounded (and must not repeat), merges must
 * name vocab tokens (as `tokenizers` demands), every size product is
 * checked and regexes run under PCRE2's match and heap limits.
 *
 * This file: the tables and loading; tokenizer_encode.c: encoding,
 * decoding and the public wgnn_tokenizer_* names; tokenizer_impl.h: what
 * both share.
 */
#include "io/tokenizer_impl.h"

#include "io/json.h"

#include <pcre2.h>
#include <utf8proc.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* GPT-2's bytes_to_unicode: printable bytes stand for themselves, the rest
 * for U+0100 + n in byte order. */
uint32_t wgnn__tok_byte_cp[256];
static int16_t g_cp_byte[512]; /* code point -> byte, -1 none */

static void tok_tables(void)
{
    /* idempotent: the same values whichever thread writes them */
    int n = 0;
    for (int i = 0; i < 512; i++)
        g_cp_byte[i] = -1;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        wgnn__tok_byte_cp[b] = printable ? (uint32_t)b : (uint32_t)(256 + n++);
        g_cp_byte[wgnn__tok_byte_cp[b]] = (int16_t)b;
    }
}

wgnn_status wgnn__tok_fail(wgnn_status s, char *err, size_t err_len, const char *fmt, ...)
{
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* A short printable rendering of text for messages. */
void wgnn__tok_quote(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, cap - o, "\\%c", c);
        else if (c < 0x20 || c == 0x7F)
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
        if (i + 1 < n && o + 8 >= cap) {
            memcpy(out + o, "...", 3);
            o += 3;
        }
    }
    out[o < cap ? o : cap - 1] = '\0';
}

static uint64_t tok_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

int32_t wgnn__tok_find(const wgnn__tokenizer *t, const char *s, size_t n)
{
    if (t->tok_cap == 0)
        return -1;
    size_t mask = t->tok_cap - 1;
    for (size_t i = (size_t)tok_hash(s, n) & mask;; i = (i + 1) & mask) {
        int32_t id = t->tok_map[i];
        if (id < 0)
            return -1;
        if (t->tok[id].len == n && memcmp(t->tok[id].str, s, n) == 0)
            return id;
    }
}

static void tok_insert(wgnn__tokenizer *t, int32_t id)
{
    size_t mask = t->tok_cap - 1;
    size_t i = (size_t)tok_hash(t->tok[id].str, t->tok[id].len) & mask;
    while (t->tok_map[i] >= 0)
        i = (i + 1) & mask;
    t->tok_map[i] = id;
}

static uint64_t pair_key(int32_t a, int32_t b) { return (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1; }

static size_t pair_slot(const wgnn__tokenizer *t, uint64_t key)
{
    size_t mask = t->pair_cap - 1;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & mask;
    while (t->pairs[i].key != 0 && t->pairs[i].key != key)
        i = (i + 1) & mask;
    return i;
}

const tok_pair *wgnn__tok_pair_find(const wgnn__tokenizer *t, int32_t a, int32_t b)
{
    if (t->pair_cap == 0)
        return NULL;
    const tok_pair *p = &t->pairs[pair_slot(t, pair_key(a, b))];
    return p->key ? p : NULL;
}

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c <<= 1;
    return c;
}

/* ---- loading ------------------------------------------------------------------ */

typedef struct tok_load {
    wgnn__tokenizer *t;
    const char *label;
    char *err;
    size_t err_len;
} tok_load;

#define LFAIL(L, s, ...) wgnn__tok_fail((s), (L)->err, (L)->err_len, "%s: " __VA_ARGS__)

static const char *type_of(const cJSON *o)
{
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
    return cJSON_IsString(ty) ? ty->valuestring : NULL;
}

/* An optional boolean member; absent or null gives def. */
static wgnn_status get_bool(tok_load *L, const cJSON *o, const char *where, const char *key, bool def, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v == NULL || cJSON_IsNull(v)) {
        *out = def;
        return WGNN_OK;
    }
    if (!cJSON_IsBool(v))
        return LFAIL(L, WGNN_ERR_FORMAT, "%s.%s: expected true or false", L->label, where, key);
    *out = cJSON_IsTrue(v);
    return WGNN_OK;
}

/* Unicode's White_Space property, which \s is in Hugging Face's regex
 * engine (Oniguruma), as the inside of a character class. PCRE2's \s with
 * PCRE2_UCP also takes U+180E (MONGOLIAN VOWEL SEPARATOR, White_Space
 * until Unicode 6.3), which would split text where Hugging Face does not. */
#define TOK_WHITE_SPACE "\\t-\\r \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"

/* pat with \s written as TOK_WHITE_SPACE: "[...]" outside a class, the
 * list inside one; \S outside a class as "[^...]" (inside one it stays:
 * there is no way to write a negated list there, and such patterns are
 * rare). \Q...\E and POSIX [:name:] are passed over. malloc'd, or NULL. */
static char *ws_rewrite(const char *pat, size_t len)
{
    size_t n_ws = 0;
    for (size_t i = 0; i + 1 < len; i++)
        if (pat[i] == '\\') {
            n_ws += pat[i + 1] == 's' || pat[i + 1] == 'S';
            i++;
        }
    size_t cap = len + n_ws * (sizeof TOK_WHITE_SPACE + 3) + 1;
    char *o = malloc(cap);
    if (o == NULL)
        return NULL;
    size_t k = 0;
    bool in_class = false;
    for (size_t i = 0; i < len;) {
        char c = pat[i];
        if (c == '\\' && i + 1 < len) {
            char d = pat[i + 1];
            if (d == 'Q') { /* quoted up to \E (or the end) */
                const char *e = NULL;
                for (size_t j = i + 2; j + 1 < len; j++)
                    if (pat[j] == '\\' && pat[j + 1] == 'E') {
                        e = pat + j + 2;
                        break;
                    }
                size_t m = e ? (size_t)(e - (pat + i)) : len - i;
                memcpy(o + k, pat + i, m);
                k += m;
                i += m;
                continue;
            }
            if (d == 's' || (d == 'S' && !in_class)) {
                const char *pre = in_class ? "" : d == 's' ? "[" : "[^", *post = in_class ? "" : "]";
                k += (size_t)snprintf(o + k, cap - k, "%s%s%s", pre, TOK_WHITE_SPACE, post);
                i += 2;
                continue;
            }
            o[k++] = c;
            o[k++] = d;
            i += 2;
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            o[k++] = pat[i++];
            if (i < len && pat[i] == '^')
                o[k++] = pat[i++];
            if (i < len && pat[i] == ']') /* a ']' first is a member */
                o[k++] = pat[i++];
            continue;
        }
        if (in_class && c == '[' && i + 1 < len && pat[i + 1] == ':') { /* [:name:] */
            while (i < len && !(pat[i] == ']' && pat[i - 1] == ':'))
                o[k++] = pat[i++];
            if (i < len)
                o[k++] = pat[i++];
            continue;
        }
        if (in_class && c == ']')
            in_class = false;
        o[k++] = pat[i++];
    }
    o[k] = '\0';
    return o;
}

static wgnn_status compile_regex(tok_load *L, const char *where, const char *pat, size_t len, bool literal,
                                 pcre2_code **out)
{
    int code = 0;
    PCRE2_SIZE at = 0;
    if (literal) { /* LITERAL refuses UCP */
        *out = pcre2_compile((PCRE2_SPTR)pat, len, PCRE2_UTF | PCRE2_LITERAL, &code, &at, NULL);
    } else {
        /* \C (one byte, even inside a character) would cut characters
         * apart: Oniguruma has no such escape, so it is refused */
        size_t n = len == PCRE2_ZERO_TERMINATED ? strlen(pat) : len;
        char *ws = ws_rewrite(pat, n);
        if (ws == NULL)
            return LFAIL(L, WGNN_ERR_OUT_OF_MEMORY, "%s: out of memory compiling the pattern", L->label, where);
        *out = pcre2_compile((PCRE2_SPTR)ws, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C,
                             &code, &at, NULL);
        free(ws);
        if (*out == NULL) { /* the error's offset in the pattern as written */
            pcre2_code *orig = pcre2_compile((PCRE2_SPTR)pat, n, PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C,
                                             &code, &at, NULL);
            pcre2_code_free(orig);
            at = at > n ? n : at;
        }
    }
    if (*out == NULL) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        return LFAIL(L, WGNN_ERR_FORMAT, "%s: cannot compile the pattern at offset %zu: %s", L->label, where,
                     (size_t)at, (const char *)msg);
    }
    return WGNN_OK;
}

static wgnn_status load_normalizer(tok_load *L, const cJSON *n)
{
    if (n == NULL || cJSON_IsNull(n))
        return WGNN_OK;
    const char *ty = type_of(n);
    if (ty && strcmp(ty, "NFC") == 0) {
        L->t->nfc = true;
        return WGNN_OK;
    }
    if (ty && strcmp(ty, "Sequence") == 0) {
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(n, "normalizers");
        if (!cJSON_IsArray(seq))
            return LFAIL(L, WGNN_ERR_FORMAT, "normalizer.normalizers: expected an array", L->label);
        const cJSON *e;
        cJSON_ArrayForEach(e, seq)
        {
            const char *et = type_of(e);
            if (!et || strcmp(et, "NFC") != 0)
                return LFAIL(L, WGNN_ERR_UNSUPPORTED,
                             "normalizer.normalizers: type \"%.64s\" is not supported (only NFC)", L->label,
                             et ? et : "(none)");
            L->t->nfc = true;
        }
        return WGNN_OK;
    }
    return LFAIL(L, WGNN_ERR_UNSUPPORTED, "normalizer: type \"%.64s\" is not supported (null, NFC or a Sequence of NFC)",
                 L->label, ty ? ty : "(none)");
}

static wgnn_status load_bytelevel(tok_load *L, const cJSON *b, const char *where)
{
    wgnn_status s = get_bool(L, b, where, "add_prefix_space", true, &L->t->add_prefix_space);
    if (s == WGNN_OK)
        s = get_bool(L, b, where, "use_regex", true, &L->t->use_regex);
    if (s == WGNN_OK && L->t->use_regex)
        s = compile_regex(L, where, TOK_GPT2_REGEX, PCRE2_ZERO_TERMINATED, false, &L->t->gpt2);
    return s;
}

static wgnn_status load_split(tok_load *L, const cJSON *sp, const char *where)
{
    wgnn__tokenizer *t = L->t;
    if (t->n_split == TOK_MAX_SPLITS)
        return LFAIL(L, WGNN_ERR_UNSUPPORTED, "%s: more than %d Split steps", L->label, where, TOK_MAX_SPLITS);
    const cJSON *beh = cJSON_GetObjectItemCaseSensitive(sp, "behavior");
    if (!cJSON_IsString(beh) || strcmp(beh->valuestring, "Isolated") != 0)
        return LFAIL(L, WGNN_ERR_UNSUPPORTED, "%s.behavior: \"%.64s\" is not supported (only Isolated)", L->label,
                     where, cJSON_IsString(beh) ? beh->valuestring : "(not a string)");
    bool invert = false;
    wgnn_status s = get_bool(L, sp, where, "invert", false, &invert);
    if (s != WGNN_OK)
        return s;
    if (invert)
        return LFAIL(L, WGNN_ERR_UNSUPPORTED, "%s.invert: true is not supported", L->label, where);
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(sp, "pattern");
    const cJSON *re = cJSON_GetObjectItemCaseSensitive(pat, "Regex");
    const cJSON *lit = cJSON_GetObjectItemCaseSensitive(pat, "String");
    const cJSON *use = cJSON_IsString(re) ? re : lit;
    if (!cJSON_IsString(use))
        return LFAIL(L, WGNN_ERR_FORMAT, "%s.pattern: expected {\"Regex\": \"...\"} or {\"String\": \"...\"}",
                     L->label, where);
    if (use->valuestring[0] == '\0')
        return LFAIL(L, WGNN_ERR_FORMAT, "%s.pattern: empty pattern", L->label, where);
    s = compile_regex(L, where, use->valuestring, PCRE2_ZERO_TERMINATED, use == lit, &t->split[t->n_split]);
    if (s == WGNN_OK)
        t->n_split++;
    return s;
}

static wgnn_status load_pre_tokenizer(tok_load *L, const cJSON *p)
{
    const char *ty = type_of(p);
    if (ty && strcmp(ty, "ByteLevel") == 0)
        return load_bytelevel(L, p, "pre_tokenizer");
    if (ty && strcmp(ty, "Sequence") == 0) {
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(p, "pretokenizers");
        int n = cJSON_GetArraySize(seq);
        if (!cJSON_IsArray(seq) || n < 1)
            return LFAIL(L, WGNN_ERR_FORMAT, "pre_tokenizer.pretokenizers: expected a non-empty array", L->label);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, seq)
        {
            char where[64];
            snprintf(where, sizeof where, "pre_tokenizer.pretokenizers[%d]", i);
            const char *et = type_of(e);
            wgnn_status s;
            if (et && strcmp(et, "Split") == 0 && i < n - 1)
                s = load_split(L, e, where);
            else if (et && strcmp(et, "ByteLevel") == 0 && i == n - 1)
                s = load_bytelevel(L, e, where);
            else
                s = LFAIL(L, WGNN_ERR_UNSUPPORTED,
                          "%s: type \"%.64s\" is not supported here (Split steps, then ByteLevel last)", L->label,
                          where, et ? et : "(none)");
            if (s != WGNN_OK)
                return s;
            i++;
        }
        return WGNN_OK;
    }
    return LFAIL(L, WGNN_ERR_UNSUPPORTED,
                 "pre_tokenizer: type \"%.64s\" is not supported (ByteLevel, or a Sequence of Split then ByteLevel)",
                 L->label, ty ? ty : "(none)");
}

static wgnn_status load_decoder(tok_load *L, const cJSON *d)
{
    if (d == NULL || cJSON_IsNull(d))
        return WGNN_OK; /* decoding is byte-level whatever this says */
    const char *ty = type_of(d);
    if (ty && strcmp(ty, "ByteLevel") == 0)
        return WGNN_OK;
    return LFAIL(L, WGNN_ERR_UNSUPPORTED, "decoder: type \"%.64s\" is not supported (ByteLevel)", L->label,
                 ty ? ty : "(none)");
}

/* Sets entry id to str (copied); a second string for the same id is refused
 * unless equal (an added token repeating its vocab entry). */
static wgnn_status set_entry(tok_load *L, const char *where, int32_t id, const char *str)
{
    tok_entry *e = &L->t->tok[id];
    if (e->str) {
        if (strcmp(e->str, str) == 0 && where[0] == 'a')
            return WGNN_OK;
        char a[64], b[64];
        wgnn__tok_quote(e->str, strlen(e->str), a, sizeof a);
        wgnn__tok_quote(str, strlen(str), b, sizeof b);
        return LFAIL(L, WGNN_ERR_FORMAT, "%s: id %d is given to both \"%s\" and \"%s\"", L->label, where, (int)id, a,
                     b);
    }
    size_t n = strlen(str);
    if (n > UINT32_MAX / 4)
        return LFAIL(L, WGNN_ERR_FORMAT, "%s: token %d is too long", L->label, where, (int)id);
    e->str = malloc(n + 1);
    if (e->str == NULL)
        return LFAIL(L, WGNN_ERR_OUT_OF_MEMORY, "%s: out of memory", L->label, where);
    memcpy(e->str, str, n + 1);
    e->len = (uint32_t)n;
    return WGNN_OK;
}

static wgnn_status read_id(tok_load *L, const cJSON *v, const char *where, int32_t limit, int32_t *out)
{
    /* range before the cast: converting an out-of-range double is undefined */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < limit) ||
        v->valuedouble != (double)(int32_t)v->valuedouble)
        return LFAIL(L, WGNN_ERR_FORMAT, "%s: id must be an integer in [0, %d)", L->label, where, (int)limit);
    *out = (int32_t)v->valuedouble;
    return WGNN_OK;
}

/* Byte-level decoding of every entry (added tokens: their content). */
static wgnn_status decode_entries(tok_load *L)
{
    wgnn__tokenizer *t = L->t;
    for (int32_t id = 0; id < t->n_ids; id++) {
        tok_entry *e = &t->tok[id];
        if (e->str == NULL)
            continue;
        e->bytes = malloc(e->len + 1u);
        if (e->bytes == NULL)
            return LFAIL(L, WGNN_ERR_OUT_OF_MEMORY, "out of memory", L->label);
        bool raw = e->added;
        uint32_t n = 0;
        utf8proc_ssize_t at = 0;
        while (!raw && (uint32_t)at < e->len) {
            utf8proc_int32_t cp;
            utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)e->str + at, e->len - at, &cp);
            if (k <= 0 || cp >= 512 || g_cp_byte[cp] < 0) {
                raw = true; /* as `tokenizers`: a token with other characters decodes to its own bytes */
                break;
            }
            e->bytes[n++] = (unsigned char)g_cp_byte[cp];
            at += k;
        }
        if (raw) {
            memcpy(e->bytes, e->str, e->len);
            n = e->len;
        }
        e->n_bytes = n;
        if (n > t->max_bytes)
            t->max_bytes = n;
    }
    return WGNN_OK;
}

static int cmp_added(const void *a, const void *b)
{
    const tok_added *x = a, *y = b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static wgnn_status load_model(tok_load *L, const cJSON *root)
{
    wgnn__tokenizer *t = L->t;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsObject(model))
        return LFAIL(L, WGNN_ERR_FORMAT, "model: missing or not an object", L->label);
    const char *ty = type_of(model);
    if (ty && strcmp(ty, "BPE") != 0)
        return LFAIL(L, WGNN_ERR_UNSUPPORTED, "model.type: \"%.64s\" is not supported (only BPE)", L->label, ty);
    bool fb = false;
    wgnn_status s = get_bool(L, model, "model", "byte_fallback", false, &fb);
    if (s == WGNN_OK && fb)
        s = LFAIL(L, WGNN_ERR_UNSUPPORTED, "model.byte_fallback: true is not supported", L->label);
    if (s == WGNN_OK)
        s = get_bool(L, model, "model", "ignore_merges", false, &t->ignore_merges);
    if (s == WGNN_OK)
        s = get_bool(L, model, "model", "fuse_unk", false, &t->fuse_unk);
    if (s != WGNN_OK)
        return s;
    const char *affix[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(model, affix[i]);
        if (a && !cJSON_IsNull(a) && !(cJSON_IsString(a) && a->valuestring[0] == '\0'))
            return LFAIL(L, WGNN_ERR_UNSUPPORTED, "model.%s: only null is supported", L->label, affix[i]);
    }
    const cJSON *drop = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (drop && !cJSON_IsNull(drop) && !(cJSON_IsNumber(drop) && drop->valuedouble == 0))
        return LFAIL(L, WGNN_ERR_UNSUPPORTED, "model.dropout: only null is supported", L->label);

    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!cJSON_IsObject(vocab))
        return LFAIL(L, WGNN_ERR_FORMAT, "model.vocab: missing or not an object", L->label);
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    if (added && !cJSON_IsNull(added) && !cJSON_IsArray(added))
        return LFAIL(L, WGNN_ERR_FORMAT, "added_tokens: expected an array", L->label);
    size_t n_vocab = (size_t)cJSON_GetArraySize(vocab), n_add = added ? (size_t)cJSON_GetArraySize(added) : 0;
    size_t entries = n_vocab + n_add;
    int32_t limit = entries > (TOK_MAX_ID - TOK_ID_SLACK) / 4 ? TOK_MAX_ID : (int32_t)(entries * 4 + TOK_ID_SLACK);

    /* ids first, to size the table */
    int32_t max_id = -1, id = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, vocab)
    {
        char where[96];
        snprintf(where, sizeof where, "model.vocab[\"%.48s\"]", e->string ? e->string : "");
        if ((s = read_id(L, e, where, limit, &id)) != WGNN_OK)
            return s;
        if (id > max_id)
            max_id = id;
    }
    size_t i = 0;
    cJSON_ArrayForEach(e, added)
    {
        char where[64];
        snprintf(where, sizeof where, "added_tokens[%zu].id", i++);
        if (!cJSON_IsObject(e))
            return LFAIL(L, WGNN_ERR_FORMAT, "added_tokens[%zu]: expected an object", L->label, i - 1);
        if ((s = read_id(L, cJSON_GetObjectItemCaseSensitive(e, "id"), where, limit, &id)) != WGNN_OK)
            return s;
        if (id > max_id)
            max_id = id;
    }
    if (max_id < 0)
        return LFAIL(L, WGNN_ERR_FORMAT, "model.vocab: empty", L->label);
    t->n_ids = max_id + 1;
    t->tok = calloc((size_t)t->n_ids, sizeof *t->tok);
    t->added = n_add ? calloc(n_add, sizeof *t->added) : NULL;
    if (t->tok == NULL || (n_add && t->added == NULL))
        return LFAIL(L, WGNN_ERR_OUT_OF_MEMORY, "out of memory for %d ids", L->label, (int)t->n_ids);
    cJSON_ArrayForEach(e, vocab)
    {
        if (e->string == NULL)
            return LFAIL(L, WGNN_ERR_FORMAT, "model.vocab: entry without a name", L->label);
        read_id(L, e, "", limit, &id);
        if ((s = set_entry(L, "model.vocab", id, e->string)) != WGNN_OK)
            return s;
    }
    i = 0;
    cJSON_ArrayForEach(e, added)
    {
        char where[64];
        snprintf(where, sizeof where, "added_tokens[%zu]", i);
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(e, "content");
        if (!cJSON_IsString(content) || content->valuestring[0] == '\0')
            return LFAIL(L, WGNN_ERR_FORMAT, "%s.content: expected a non-empty string", L->label, where);
        const char *flags[] = {"lstrip", "rstrip", "single_word"};
        for (int k = 0; k < 3; k++) {
            bool f = false;
            if ((s = get_bool(L, e, where, flags[k], false, &f)) != WGNN_OK)
                return s;
            if (f)
                return LFAIL(L, WGNN_ERR_UNSUPPORTED, "%s.%s: true is not supported", L->label, where, flags[k]);
        }
        read_id(L, cJSON_GetObjectItemCaseSensitive(e, "id"), "", limit, &id);
        if ((s = set_entry(L, where, id, content->valuestring)) != WGNN_OK)
            return s;
        t->tok[id].added = true;
        t->added[i].id = id;
        t->added[i].str = t->tok[id].str;
        t->added[i].len = t->tok[id].len;
        i++;
    }
    t->n_added = n_add;
    if (n_add)
        qsort(t->added, n_add, sizeof *t->added, cmp_added);

    /* string -> id; a string given twice (vocab and an added token) keeps the first id */
    t->tok_cap = pow2_at_least(entries * 2 + 1);
    t->tok_map = malloc(t->tok_cap * sizeof *t->tok_map);
    if (t->tok_map == NULL)
        return LFAIL(L, WGNN_ERR_OUT_OF_MEMORY, "out of memory", L->label);
    memset(t->tok_map, 0xFF, t->tok_cap * sizeof *t->tok_map);
    for (id = 0; id < t->n_ids; id++) {
        if (t->tok[id].str == NULL)
            continue;
        int32_t had = wgnn__tok_find(t, t->tok[id].str, t->tok[id].len);
        if (had < 0) {
            tok_insert(t, id);
        } else if (!t->tok[id].added && !t->tok[had].added) {
            char q[96];
            wgnn__tok_quote(t->tok[id].str, t->tok[id].len, q, sizeof q);
            return LFAIL(L, WGNN_ERR_FORMAT, "model.vocab: token \"%s\" appears twice (ids %d and %d)", L->label, q,
                         (int)had, (int)id);
        }
    }
    for (int b = 0; b < 256; b++) {
        char u[4];
        int n = (int)utf8proc_encode_char((utf8proc_int32_t)wgnn__tok_byte_cp[b], (utf8proc_uint8_t *)u);
        t->byte_id[b] = wgnn__tok_find(t, u, (size_t)n);
    }
    t->unk = -1;
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    if (cJSON_IsString(unk)) {
        t->unk = wgnn__tok_find(t, unk->valuestring, strlen(unk->valuestring));
        if (t->unk < 0)
            return LFAIL(L, WGNN_ERR_FORMAT, "model.unk_token: not in the vocab", L->label);
    } else if (unk && !cJSON_IsNull(unk)) {
        return LFAIL(L, WGNN_ERR_FORMAT, "model.unk_token: expected a string or null", L->label);
    }

    /* merges: rank = index; a pair given twice keeps the later rank, as `tokenizers` does */
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (merges && !cJSON_IsNull(merges) && !cJSON_IsArray(merges))
        return LFAIL(L, WGNN_ERR_FORMAT, "model.merges: expected an array", L->label);
    size_t n_merges = merges ? (size_t)cJSON_GetArraySize(merges) : 0;
    t->pair_cap = pow2_at_least(n_merges * 2 + 1);
    t->pairs = calloc(t->pair_cap, sizeof *t->pairs);
    if (t->pairs == NULL)
        return LFAIL(L, WGNN_ERR_OUT_OF_MEMORY, "out of memory for %zu merges", L->label, n_merges);
    uint32_t rank = 0;
    cJSON_ArrayForEach(e, merges)
    {
        const char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        if (cJSON_IsString(e)) {
            const char *sp = strchr(e->valuestring, ' ');
            if (sp && strchr(sp + 1, ' ') == NULL) {
                a = e->valuestring;
                na = (size_t)(sp - a);
                b = sp + 1;
                nb = strlen(b);
            }
        } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
                   cJSON_IsString(e->child->next)) {
            a = e->child->valuestring;
            na = strlen(a);
            b = e->child->next->valuestring;
            nb = strlen(b);
        }
        if (a == NULL)
            return LFAIL(L, WGNN_ERR_FORMAT, "model.merges[%u]: expected \"a b\" (one space) or [\"a\", \"b\"]",
                         L->label, rank);
        int32_t ia = wgnn__tok_find(t, a, na), ib = wgnn__tok_find(t, b, nb), im = -1;
        char buf[256];
        if (ia >= 0 && ib >= 0) {
            if (na + nb < sizeof buf) {
                memcpy(buf, a, na);
                memcpy(buf + na, b, nb);
                im = wgnn__tok_find(t, buf, na + nb);
            } else {
                char *cat = malloc(na + nb);
                if (cat == NULL)
                    return LFAIL(L, WGNN_ERR_OUT_OF_MEMORY, "out of memory", L->label);
                memcpy(cat, a, na);
                memcpy(cat + na, b, nb);
                im = wgnn__tok_find(t, cat, na + nb);
                free(cat);
            }
        }
        if (ia < 0 || ib < 0 || im < 0) {
            const char *which = ia < 0 ? a : ib < 0 ? b : NULL;
            size_t nw = ia < 0 ? na : nb;
            char q[96];
            if (which)
                wgnn__tok_quote(which, nw, q, sizeof q);
            else {
                char qa[48], qb[48];
                wgnn__tok_quote(a, na, qa, sizeof qa);
                wgnn__tok_quote(b, nb, qb, sizeof qb);
                snprintf(q, sizeof q, "%s%s", qa, qb);
            }
            return LFAIL(L, WGNN_ERR_FORMAT, "model.merges[%u]: token \"%s\" is not in the vocab", L->label, rank, q);
        }
        tok_pair *p = &t->pairs[pair_slot(t, pair_key(ia, ib))];
        p->key = pair_key(ia, ib);
        p->rank = rank++;
        p->id = im;
    }
    return decode_entries(L);
}

static wgnn_status tok_parse_json(const wgnn__json *j, wgnn__tokenizer **out, char *err, size_t err_len)
{
    wgnn__tokenizer *t = calloc(1, sizeof *t);
    if (t == NULL)
        return wgnn__tok_fail(WGNN_ERR_OUT_OF_MEMORY, err, err_len, "%s: out of memory", j->label);
    tok_tables();
    snprintf(t->label, sizeof t->label, "%s", j->label);
    tok_load L = {t, t->label, err, err_len};
    wgnn_status s = WGNN_OK;
    if (!cJSON_IsObject(j->root))
        s = LFAIL(&L, WGNN_ERR_FORMAT, "expected a JSON object", t->label);
    if (s == WGNN_OK)
        s = load_model(&L, j->root);
    if (s == WGNN_OK)
        s = load_normalizer(&L, cJSON_GetObjectItemCaseSensitive(j->root, "normalizer"));
    if (s == WGNN_OK)
        s = load_pre_tokenizer(&L, cJSON_GetObjectItemCaseSensitive(j->root, "pre_tokenizer"));
    if (s == WGNN_OK)
        s = load_decoder(&L, cJSON_GetObjectItemCaseSensitive(j->root, "decoder"));
    if (s != WGNN_OK) {
        wgnn__tokenizer_free(t);
        return s;
    }
    *out = t;
    return WGNN_OK;
}

wgnn_status wgnn__tokenizer_parse(const char *json, size_t len, const char *label, wgnn__tokenizer **out, char *err,
                                  size_t err_len)
{
    if (out == NULL)
        return wgnn__tok_fail(WGNN_ERR_INVALID_ARGUMENT, err, err_len, "tokenizer: out is NULL");
    *out = NULL;
    wgnn__json j;
    wgnn_status s = wgnn__json_parse(json, len, label ? label : "tokenizer.json", &j, err, err_len);
    if (s != WGNN_OK)
        return s;
    s = tok_parse_json(&j, out, err, err_len);
    wgnn__json_free(&j);
    return s;
}

wgnn_status wgnn__tokenizer_load(const char *path, wgnn__tokenizer **out, char *err, size_t err_len)
{
    if (out == NULL || path == NULL)
        return wgnn__tok_fail(WGNN_ERR_INVALID_ARGUMENT, err, err_len, "tokenizer: %s is NULL", out ? "path" : "out");
    *out = NULL;
    char file[4096];
    struct stat sb;
    int n = snprintf(file, sizeof file, "%s", path);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        n = snprintf(file, sizeof file, "%s/tokenizer.json", path);
    if (n < 0 || (size_t)n >= sizeof file)
        return wgnn__tok_fail(WGNN_ERR_INVALID_ARGUMENT, err, err_len, "tokenizer: path too long");
    wgnn__json j;
    wgnn_status s = wgnn__json_load(file, TOK_MAX_FILE, &j, err, err_len);
    if (s != WGNN_OK)
        return s;
    s = tok_parse_json(&j, out, err, err_len);
    wgnn__json_free(&j);
    return s;
}

void wgnn__tokenizer_free(wgnn__tokenizer *t)
{
    if (t == NULL)
        return;
    for (int32_t i = 0; t->tok && i < t->n_ids; i++) {
        free(t->tok[i].str);
        free(t->tok[i].bytes);
    }
    free(t->tok);
    free(t->tok_map);
    free(t->pairs);
    free(t->added);
    for (int i = 0; i < t->n_split; i++)
        pcre2_code_free(t->split[i]);
    pcre2_code_free(t->gpt2);
    free(t);
}

int32_t wgnn__tokenizer_token_id(const wgnn__tokenizer *t, const char *token)
{
    return t && token ? wgnn__tok_find(t, token, strlen(token)) : -1;
}

int wgnn__tokenizer_vocab_size(const wgnn__tokenizer *t) { return t ? t->n_ids : 0; }
