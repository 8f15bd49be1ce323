/* tokenizer_impl.h - the tokenizer's types and the helpers its two files
 * share (internal): src/io/tokenizer.c (tables, loading) and
 * src/io/tokenizer_encode.c (encoding, decoding, the public API). */
#ifndef WGNN_IO_TOKENIZER_IMPL_H
#define WGNN_IO_TOKENIZER_IMPL_H

#include "io/tokenizer.h"

#include <pcre2.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOK_MAX_FILE ((size_t)256 << 20)
#define TOK_MAX_SPLITS 8          /* Split steps in a pre_tokenizer Sequence */
#define TOK_ID_SLACK 65536        /* ids may leave gaps, but not beyond 4 x entries + this */
#define TOK_MAX_ID (1 << 26)
#define TOK_MAX_TEXT (1 << 30)
#define TOK_GPT2_REGEX "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

#if defined(__GNUC__) || defined(__clang__)
#define TOK_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TOK_PRINTF(f, a)
#endif

typedef struct tok_entry {
    char *str;       /* NUL-terminated (cJSON strings cannot hold NUL) */
    uint32_t len;
    unsigned char *bytes; /* what it decodes to */
    uint32_t n_bytes;
    bool added;      /* decodes to its content as is */
} tok_entry;

typedef struct tok_added {
    int32_t id;
    uint32_t len;
    const char *str; /* the entry's string */
} tok_added;

typedef struct tok_pair {
    uint64_t key; /* (a << 32 | b) + 1; 0: empty slot */
    uint32_t rank;
    int32_t id;
} tok_pair;

struct wgnn_tokenizer {
    char label[256];
    tok_entry *tok; /* by id; str NULL for a gap */
    int32_t n_ids;
    int32_t *tok_map; /* open addressing: string -> id, -1 empty */
    size_t tok_cap;
    tok_pair *pairs;
    size_t pair_cap;
    tok_added *added; /* longest first */
    size_t n_added;
    int32_t byte_id[256]; /* the byte's one-character token, -1 if none */
    int32_t unk;          /* -1: none */
    bool fuse_unk, ignore_merges, nfc;
    bool add_prefix_space, use_regex;
    pcre2_code *split[TOK_MAX_SPLITS];
    int n_split;
    pcre2_code *gpt2; /* when use_regex */
    size_t max_bytes; /* longest decoded token */
};

/* GPT-2's bytes_to_unicode: byte -> the code point that stands for it
 * (filled at the first load). */
extern uint32_t wgnn__tok_byte_cp[256];

/* Writes the message into err (when given) and returns s. */
wgnn_status wgnn__tok_fail(wgnn_status s, char *err, size_t err_len, const char *fmt, ...) TOK_PRINTF(4, 5);
/* A short printable rendering of text for messages. */
void wgnn__tok_quote(const char *s, size_t n, char *out, size_t cap);
/* The id of the token spelled s[0..n), -1 if none. */
int32_t wgnn__tok_find(const wgnn__tokenizer *t, const char *s, size_t n);
/* The merge of ids a then b, or NULL. */
const tok_pair *wgnn__tok_pair_find(const wgnn__tokenizer *t, int32_t a, int32_t b);

#endif /* WGNN_IO_TOKENIZER_IMPL_H */
