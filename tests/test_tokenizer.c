/* test_tokenizer.c - the byte-level BPE tokenizer (src/io/tokenizer.c) on
 * small tokenizer.json files built here, with ids derived by hand (there is
 * no Hugging Face `tokenizers` on this machine to give references), and on
 * two tokenizer.json files against the ids and text that `tokenizers` gave
 * on a machine that has it (test_hf_cases).
 *
 * Every vocab built here has the 256 byte-level characters as ids 0..255
 * (id = the byte), then extra tokens from 256 on. With ignore_merges and a
 * vocab holding the pieces a pre-tokenizer should give (and decoys it should
 * not), the ids show how the text was split: a piece found whole gives its
 * id, anything else falls back to byte ids. No GPU needed. */
#include "io/json.h"
#include "io/tokenizer.h"
#include "testutil.h"

#define QWEN2_REGEX                                                                                                    \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|" \
    "\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"

#define BL "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}"

static uint32_t byte_cp(int b) /* GPT-2's bytes_to_unicode, written out again */
{
    int n = 0;
    for (int x = 0; x < 256; x++) {
        bool printable = (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255);
        if (x == b)
            return printable ? (uint32_t)x : (uint32_t)(256 + n);
        if (!printable)
            n++;
    }
    return 0;
}

/* Appends raw as a JSON string of its byte-level characters. */
static void put_bl(char *buf, size_t cap, const char *raw)
{
    size_t o = strlen(buf);
    o += (size_t)snprintf(buf + o, cap - o, "\"");
    for (const unsigned char *p = (const unsigned char *)raw; *p; p++)
        o += (size_t)snprintf(buf + o, cap - o, "\\u%04x", byte_cp(*p));
    snprintf(buf + o, cap - o, "\"");
}

typedef struct spec {
    const char *const *extra; /* raw texts of tokens 256, 257, ... (NULL-terminated) */
    const char *const *merges; /* "a b" pairs of raw texts, rank order (NULL-terminated) */
    const char *added;         /* the added_tokens array, JSON */
    const char *normalizer;    /* JSON */
    const char *pre;           /* JSON */
    bool ignore_merges;
} spec;

static char g_json[1 << 17];

static wgnn__tokenizer *build(const spec *s)
{
    char *b = g_json;
    size_t cap = sizeof g_json;
    b[0] = '\0';
    snprintf(b, cap, "{\"version\":\"1.0\",\"added_tokens\":%s,\"normalizer\":%s,\"pre_tokenizer\":%s,"
                     "\"decoder\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"ignore_merges\":%s,\"vocab\":{",
             s->added ? s->added : "[]", s->normalizer ? s->normalizer : "null", s->pre,
             s->ignore_merges ? "true" : "false");
    for (int i = 0; i < 256; i++) {
        char raw[2] = {(char)i, 0};
        if (i == 0) { /* cannot be a C string: written by hand */
            snprintf(b + strlen(b), cap - strlen(b), "\"\\u%04x\":0", byte_cp(0));
            continue;
        }
        strcat(b, ",");
        put_bl(b, cap, raw);
        snprintf(b + strlen(b), cap - strlen(b), ":%d", i);
    }
    for (int i = 0; s->extra && s->extra[i]; i++) {
        strcat(b, ",");
        put_bl(b, cap, s->extra[i]);
        snprintf(b + strlen(b), cap - strlen(b), ":%d", 256 + i);
    }
    strcat(b, "},\"merges\":[");
    for (int i = 0; s->merges && s->merges[i]; i++) {
        char l[64], r[64];
        const char *sp = strchr(s->merges[i], ' ');
        snprintf(l, sizeof l, "%.*s", (int)(sp - s->merges[i]), s->merges[i]);
        snprintf(r, sizeof r, "%s", sp + 1);
        strcat(b, i ? ",[" : "[");
        put_bl(b, cap, l);
        strcat(b, ",");
        put_bl(b, cap, r);
        strcat(b, "]");
    }
    strcat(b, "]}}");
    wgnn__tokenizer *t = NULL;
    char err[512];
    wgnn_status st = wgnn__tokenizer_parse(b, strlen(b), "t.json", &t, err, sizeof err);
    CHECK(st == WGNN_OK, "parse: %s", err);
    return t;
}

static void expect_ids(const wgnn__tokenizer *t, const char *what, const char *text, const int32_t *want, size_t n_want)
{
    int32_t *ids = NULL;
    size_t n = 0;
    char err[512] = "";
    wgnn_status st = wgnn__tokenizer_encode(t, text, strlen(text), &ids, &n, err, sizeof err);
    bool same = st == WGNN_OK && n == n_want && (n == 0 || memcmp(ids, want, n * sizeof *ids) == 0);
    char got[1024] = "", exp[1024] = "";
    for (size_t i = 0; i < n && strlen(got) < 1000; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d", (int)ids[i]);
    for (size_t i = 0; i < n_want && strlen(exp) < 1000; i++)
        snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %d", (int)want[i]);
    CHECK(same, "%s: got [%s] (%s), want [%s]", what, got, err, exp);
    free(ids);
}

/* The ids of pieces: a piece among extra gives its id, else its bytes. */
static void expect_pieces(const wgnn__tokenizer *t, const spec *s, const char *text, const char *const *pieces)
{
    int32_t want[256];
    size_t n = 0;
    for (int i = 0; pieces[i]; i++) {
        int found = -1;
        for (int k = 0; s->extra[k]; k++)
            if (strcmp(s->extra[k], pieces[i]) == 0)
                found = 256 + k;
        if (found >= 0)
            want[n++] = found;
        else
            for (const unsigned char *p = (const unsigned char *)pieces[i]; *p; p++)
                want[n++] = *p;
    }
    expect_ids(t, text, text, want, n);
}

static char *decode_all(const wgnn__tokenizer *t, const int32_t *ids, size_t n)
{
    size_t cap = wgnn__detok_max_out(t), total = 0;
    char *out = malloc(n * cap + 4);
    wgnn__detok d;
    wgnn__detok_init(&d);
    for (size_t i = 0; i < n; i++) {
        size_t got = 0;
        CHECK(wgnn__detok_push(t, &d, ids[i], out + total, cap, &got) == WGNN_OK, "push %d", (int)ids[i]);
        total += got;
    }
    size_t got = 0;
    wgnn__detok_flush(&d, out + total, 3, &got);
    out[total + got] = '\0';
    return out;
}

static void round_trip(const wgnn__tokenizer *t, const char *text, const char *want)
{
    int32_t *ids = NULL;
    size_t n = 0;
    char err[512] = "";
    CHECK(wgnn__tokenizer_encode(t, text, strlen(text), &ids, &n, err, sizeof err) == WGNN_OK, "%s", err);
    char *back = decode_all(t, ids, n);
    CHECK(strcmp(back, want) == 0, "round trip of \"%s\" gave \"%s\"", text, back);
    free(back);
    free(ids);
}

/* ---- merges --------------------------------------------------------------------- */

static void test_merge_order(void)
{
    const char *extra[] = {"bc", "ab", "cd", "abcd", NULL};
    /* rank 0 "b c" beats "a b" (rank 1) although "a b" comes first in the text */
    const char *merges[] = {"b c", "a b", "c d", "ab cd", NULL};
    spec s = {extra, merges, NULL, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}",
              false};
    wgnn__tokenizer *t = build(&s);
    if (!t)
        return;
    expect_ids(t, "abc: rank, not left to right", "abc", (int32_t[]){'a', 256}, 2);
    /* "abcd": b c (0) -> a bc d; nothing merges "a bc" or "bc d" */
    expect_ids(t, "abcd", "abcd", (int32_t[]){'a', 256, 'd'}, 3);
    expect_ids(t, "ab", "ab", (int32_t[]){257}, 1);
    expect_ids(t, "abxcd: ab and cd, then nothing", "abxcd", (int32_t[]){257, 'x', 258}, 3);
    expect_ids(t, "empty", "", NULL, 0);
    CHECK(wgnn__tokenizer_vocab_size(t) == 260, "vocab size %d", wgnn__tokenizer_vocab_size(t));
    CHECK(wgnn__tokenizer_token_id(t, "ab") == 257 && wgnn__tokenizer_token_id(t, "zz") == -1, "token_id");
    wgnn__tokenizer_free(t);

    /* ties go to the leftmost pair; a merged pair then merges again */
    const char *extra2[] = {"aa", "aaaa", NULL};
    const char *merges2[] = {"a a", "aa aa", NULL};
    spec s2 = {extra2, merges2, NULL, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}",
               false};
    t = build(&s2);
    if (!t)
        return;
    expect_ids(t, "aaa", "aaa", (int32_t[]){256, 'a'}, 2);
    expect_ids(t, "aaaaa", "aaaaa", (int32_t[]){257, 'a'}, 2);
    expect_ids(t, "aaaaaaaa", "aaaaaaaa", (int32_t[]){257, 257}, 2);
    wgnn__tokenizer_free(t);
}

/* ignore_merges: a piece that is in the vocab comes out whole, even when
 * its merges would not build it. */
static void test_ignore_merges(void)
{
    const char *extra[] = {"xyz", "xy", NULL};
    const char *merges[] = {"x y", NULL}; /* "xy z" is no merge: without ignore_merges, xyz is [xy, z] */
    spec s = {extra, merges, NULL, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}",
              false};
    wgnn__tokenizer *t = build(&s);
    if (t)
        expect_ids(t, "no ignore_merges", "xyz", (int32_t[]){257, 'z'}, 2);
    wgnn__tokenizer_free(t);
    s.ignore_merges = true;
    t = build(&s);
    if (t)
        expect_ids(t, "ignore_merges", "xyz", (int32_t[]){256}, 1);
    wgnn__tokenizer_free(t);
}

/* ---- pre-tokenizers ------------------------------------------------------------ */

static void test_gpt2_regex(void)
{
    const char *extra[] = {"Hello", " world", "'s", " 123", " Hello", "  ", "world's", " 1", "  123", NULL};
    spec s = {extra, NULL, NULL, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}", true};
    wgnn__tokenizer *t = build(&s);
    if (!t)
        return;
    /* "  123": \s+(?!\S) takes one space, " ?\p{N}+" the rest */
    expect_pieces(t, &s, "Hello world's  123", (const char *[]){"Hello", " world", "'s", " ", " 123", NULL});
    wgnn__tokenizer_free(t);
    s.pre = "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":true}";
    t = build(&s);
    if (!t)
        return;
    expect_pieces(t, &s, "Hello world", (const char *[]){" Hello", " world", NULL});
    expect_pieces(t, &s, " world", (const char *[]){" world", NULL}); /* no second space */
    wgnn__tokenizer_free(t);
}

static void test_qwen2_split(void)
{
    /* pieces (derived by hand, alternative by alternative) and decoys */
    const char *extra[] = {"'m", "HE", "\xE2\x80\x99S", "'S", "you", "'re", "  ", " b", "\n\n", "\tz", "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C",
                           "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "hi", " \xF0\x9F\x98\x80!", " caf\xC3\xA9", "user", "12", " 1", "I'm", "   ", "a ", " \n", "\n\ny", "\xF0\x9F\x98\x80", "123", "HE'S",
                           "caf\xC3\xA9", " cafe", "lo", " \xE1\xA0\x8E", NULL};
    spec s = {extra, NULL, NULL, "{\"type\":\"NFC\"}",
              "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"" QWEN2_REGEX
              "\"},\"behavior\":\"Isolated\",\"invert\":false},"
              "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,\"use_regex\":false}]}",
              true};
    wgnn__tokenizer *t = build(&s);
    if (!t)
        return;
    /* contraction, then "\s+" for the space before a digit, digits one by one */
    expect_pieces(t, &s, "I'm 12", (const char *[]){"I", "'m", " ", "1", "2", NULL});
    /* ’ is no contraction: "[^\r\n\p{L}\p{N}]?\p{L}+" takes it with the letter; 'S is one (case-insensitive) */
    expect_pieces(t, &s, "HE\xE2\x80\x99S", (const char *[]){"HE", "\xE2\x80\x99S", NULL});
    expect_pieces(t, &s, "HE'S", (const char *[]){"HE", "'S", NULL});
    expect_pieces(t, &s, "you're", (const char *[]){"you", "'re", NULL});
    /* "\s+(?!\S)" leaves the last space of a run to the word */
    expect_pieces(t, &s, "a   b", (const char *[]){"a", "  ", " b", NULL});
    /* "\s*[\r\n]+" for the newlines; a tab joins the next word */
    expect_pieces(t, &s, "x\n\ny\tz", (const char *[]){"x", "\n\n", "y", "\tz", NULL});
    expect_pieces(t, &s, "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C",
                  (const char *[]){"\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C", NULL});
    expect_pieces(t, &s, "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E" "123",
                  (const char *[]){"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "1", "2", "3", NULL});
    /* an emoji is no letter: " ?[^\s\p{L}\p{N}]+" takes space, emoji and "!" */
    expect_pieces(t, &s, "hi \xF0\x9F\x98\x80!", (const char *[]){"hi", " \xF0\x9F\x98\x80!", NULL});
    expect_pieces(t, &s, "hi caf\xC3\xA9", (const char *[]){"hi", " caf\xC3\xA9", NULL});
    /* U+180E is no White_Space (Unicode 6.3 on, Oniguruma's \s): " ?[^\s\p{L}\p{N}]+" takes it
     * with the space before it, as Hugging Face does (PCRE2's own \s would split " ", U+180E b) */
    expect_pieces(t, &s, "a \xE1\xA0\x8E" "b", (const char *[]){"a", " \xE1\xA0\x8E", "b", NULL});
    /* the White_Space that is: U+3000 and U+00A0 stay with the run of spaces */
    expect_pieces(t, &s, "a\xE3\x80\x80 b", (const char *[]){"a", "\xE3\x80\x80", " b", NULL});
    /* NFC: e + U+0301 becomes U+00E9 before splitting */
    expect_pieces(t, &s, "hi cafe\xCC\x81", (const char *[]){"hi", " caf\xC3\xA9", NULL});
    round_trip(t, "hi cafe\xCC\x81 a   b\n\n\xF0\x9F\x98\x80 I'm", "hi caf\xC3\xA9 a   b\n\n\xF0\x9F\x98\x80 I'm");
    wgnn__tokenizer_free(t);

    /* the same without the normalizer: the accent is a piece of its own */
    s.normalizer = NULL;
    t = build(&s);
    if (t)
        expect_pieces(t, &s, "hi cafe\xCC\x81", (const char *[]){"hi", " cafe", "\xCC\x81", NULL});
    wgnn__tokenizer_free(t);
}

static void test_added_tokens(void)
{
    const char *extra[] = {"user", "hi", NULL};
    spec s = {extra, NULL,
              "[{\"id\":1000,\"content\":\"<|im_start|>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
              "\"normalized\":false,\"special\":true},"
              "{\"id\":1001,\"content\":\"<|im_end|>\",\"special\":true},"
              "{\"id\":1002,\"content\":\"<|im\",\"special\":false}]",
              "{\"type\":\"NFC\"}",
              "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"" QWEN2_REGEX
              "\"},\"behavior\":\"Isolated\",\"invert\":false},"
              "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}]}",
              true};
    wgnn__tokenizer *t = build(&s);
    if (!t)
        return;
    expect_ids(t, "chat", "<|im_start|>user\nhi<|im_end|>", (int32_t[]){1000, 256, '\n', 257, 1001}, 5);
    /* the longest added token wins; "<|im" alone where nothing longer matches */
    expect_ids(t, "prefix", "<|imhi<|im_end|><|im_end|", (int32_t[]){1002, 257, 1001, 1002, '_', 'e', 'n', 'd', '|'},
               9);
    CHECK(wgnn__tokenizer_token_id(t, "<|im_end|>") == 1001, "token_id of an added token");
    CHECK(wgnn__tokenizer_vocab_size(t) == 1003, "vocab size %d", wgnn__tokenizer_vocab_size(t));
    round_trip(t, "<|im_start|>user\nhi<|im_end|>", "<|im_start|>user\nhi<|im_end|>");
    wgnn__tokenizer_free(t);
}

/* ---- decoding ------------------------------------------------------------------ */

static void test_detok(void)
{
    const char *extra[] = {"\xF0\x9F", "\x98\x80!", NULL};
    spec s = {extra, NULL, NULL, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}",
              false};
    wgnn__tokenizer *t = build(&s);
    if (!t)
        return;
    char out[64];
    size_t n = 99;
    wgnn__detok d;
    wgnn__detok_init(&d);
    /* the emoji F0 9F 98 80 split over two tokens: nothing, then all of it */
    CHECK(wgnn__detok_push(t, &d, 'a', out, sizeof out, &n) == WGNN_OK && n == 1 && out[0] == 'a', "a");
    CHECK(wgnn__detok_push(t, &d, 256, out, sizeof out, &n) == WGNN_OK && n == 0, "first half gave %zu bytes", n);
    CHECK(wgnn__detok_push(t, &d, 257, out, sizeof out, &n) == WGNN_OK && n == 5 &&
              memcmp(out, "\xF0\x9F\x98\x80!", 5) == 0,
          "second half gave %zu bytes", n);
    /* byte by byte */
    const int32_t bytes[] = {0xF0, 0x9F, 0x98, 0x80};
    for (int i = 0; i < 4; i++) {
        CHECK(wgnn__detok_push(t, &d, bytes[i], out, sizeof out, &n) == WGNN_OK && n == (i == 3 ? 4u : 0u),
              "byte %d gave %zu", i, n);
    }
    /* bytes that never make a character: U+FFFD, one per maximal invalid subpart */
    CHECK(wgnn__detok_push(t, &d, 0xFF, out, sizeof out, &n) == WGNN_OK && n == 3 && memcmp(out, "\xEF\xBF\xBD", 3) == 0,
          "0xFF");
    CHECK(wgnn__detok_push(t, &d, 0xE2, out, sizeof out, &n) == WGNN_OK && n == 0, "E2 held");
    CHECK(wgnn__detok_push(t, &d, 0x82, out, sizeof out, &n) == WGNN_OK && n == 0, "E2 82 held");
    CHECK(wgnn__detok_push(t, &d, 'x', out, sizeof out, &n) == WGNN_OK && n == 4 &&
              memcmp(out, "\xEF\xBF\xBDx", 4) == 0,
          "E2 82 x -> FFFD x (%zu)", n);
    CHECK(wgnn__detok_push(t, &d, 0xF0, out, sizeof out, &n) == WGNN_OK && n == 0, "F0 held");
    CHECK(wgnn__detok_flush(&d, out, sizeof out, &n) == WGNN_OK && n == 3, "flush");
    /* a cap too small fails and changes nothing */
    CHECK(wgnn__detok_push(t, &d, 256, out, sizeof out, &n) == WGNN_OK && n == 0, "held again");
    CHECK(wgnn__detok_push(t, &d, 257, out, 4, &n) == WGNN_ERR_LIMIT, "small cap");
    CHECK(wgnn__detok_push(t, &d, 257, out, 5, &n) == WGNN_OK && n == 5, "then room");
    CHECK(wgnn__detok_push(t, &d, 5000, out, sizeof out, &n) == WGNN_ERR_INVALID_ARGUMENT, "id out of range");
    CHECK(wgnn__detok_push(t, &d, -1, out, sizeof out, &n) == WGNN_ERR_INVALID_ARGUMENT, "id -1");
    /* invalid UTF-8 text is refused */
    int32_t *ids = NULL;
    size_t m = 0;
    char err[256] = "";
    CHECK(wgnn__tokenizer_encode(t, "a\xFF", 2, &ids, &m, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT &&
              strstr(err, "not valid UTF-8 at byte 1") && ids == NULL,
          "invalid UTF-8: %s", err);
    CHECK(wgnn__tokenizer_encode(t, "\xC0\x80", 2, &ids, &m, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT,
          "overlong NUL");
    CHECK(wgnn__tokenizer_encode(t, "\xED\xA0\x80", 3, &ids, &m, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT,
          "surrogate");
    /* a NUL byte inside the text is a byte like any other */
    CHECK(wgnn__tokenizer_encode(t, "a\0b", 3, &ids, &m, err, sizeof err) == WGNN_OK && m == 3 && ids[1] == 0, "NUL");
    free(ids);
    wgnn__tokenizer_free(t);
}

/* ---- hostile files --------------------------------------------------------------- */

static void expect_fail(const char *what, const char *json, wgnn_status want, const char *msg)
{
    wgnn__tokenizer *t = NULL;
    char err[512] = "";
    wgnn_status st = wgnn__tokenizer_parse(json, strlen(json), "bad.json", &t, err, sizeof err);
    CHECK(st == want && t == NULL && strncmp(err, "bad.json: ", 10) == 0 && strstr(err, msg), "%s: status %d, \"%s\"",
          what, (int)st, err);
    wgnn__tokenizer_free(t);
}

static void test_hostile(void)
{
    expect_fail("malformed", "{\"model\":", WGNN_ERR_FORMAT, "invalid JSON");
    expect_fail("empty", "", WGNN_ERR_FORMAT, "empty");
    expect_fail("array", "[]", WGNN_ERR_FORMAT, "expected a JSON object");
    expect_fail("no model", "{}", WGNN_ERR_FORMAT, "model: missing");
    expect_fail("WordPiece", "{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":0}}}", WGNN_ERR_UNSUPPORTED,
                "model.type: \"WordPiece\" is not supported");
    expect_fail("vocab array", "{\"model\":{\"type\":\"BPE\",\"vocab\":[1]}}", WGNN_ERR_FORMAT, "model.vocab");
    expect_fail("id string", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":\"0\"}}}", WGNN_ERR_FORMAT,
                "model.vocab[\"a\"]: id must be");
    expect_fail("id -1", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1}}}", WGNN_ERR_FORMAT, "id must be");
    expect_fail("id 2.5", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":2.5}}}", WGNN_ERR_FORMAT, "id must be");
    expect_fail("id huge", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":1e300}}}", WGNN_ERR_FORMAT, "id must be");
    expect_fail("id far", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":100000000}}}", WGNN_ERR_FORMAT, "id must be");
    expect_fail("duplicate id", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":0}}}", WGNN_ERR_FORMAT,
                "id 0 is given to both \"a\" and \"b\"");
    expect_fail("duplicate token", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"a\":1}}}", WGNN_ERR_FORMAT,
                "key \"a\" stands twice"); /* refused by the JSON reader */
    expect_fail("merge unknown",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"a c\"]},\"pre_tokenizer\":" BL "}",
                WGNN_ERR_FORMAT, "model.merges[0]: token \"c\" is not in the vocab");
    expect_fail("merge result unknown",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[[\"a\",\"b\"]]},\"pre_tokenizer\":" BL
                "}",
                WGNN_ERR_FORMAT, "token \"ab\" is not in the vocab");
    expect_fail("merge 3 parts", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a a a\"]}}",
                WGNN_ERR_FORMAT, "model.merges[0]: expected");
    expect_fail("merge number", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[7]}}", WGNN_ERR_FORMAT,
                "model.merges[0]");
    expect_fail("merges object", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":{}}}", WGNN_ERR_FORMAT,
                "model.merges: expected an array");
    expect_fail("byte_fallback", "{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0}}}",
                WGNN_ERR_UNSUPPORTED, "byte_fallback");
    expect_fail("no pre_tokenizer", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}}}", WGNN_ERR_UNSUPPORTED,
                "pre_tokenizer: type \"(none)\"");
    expect_fail("Lowercase", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"normalizer\":{\"type\":\"Lowercase\"}}",
                WGNN_ERR_UNSUPPORTED, "normalizer: type \"Lowercase\"");
    expect_fail("Split Removed",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"pre_tokenizer\":{\"type\":\"Sequence\","
                "\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},\"behavior\":\"Removed\"}," BL "]}}",
                WGNN_ERR_UNSUPPORTED, "pre_tokenizer.pretokenizers[0].behavior: \"Removed\" is not supported");
    expect_fail("bad regex",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"pre_tokenizer\":{\"type\":\"Sequence\","
                "\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(a\"},\"behavior\":\"Isolated\"}," BL "]}}",
                WGNN_ERR_FORMAT, "pre_tokenizer.pretokenizers[0]: cannot compile");
    expect_fail("bad regex after a \\s (the offset as written)",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"pre_tokenizer\":{\"type\":\"Sequence\","
                "\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\s+(a\"},\"behavior\":\"Isolated\"}," BL "]}}",
                WGNN_ERR_FORMAT, "cannot compile the pattern at offset 5");
    /* \C matches one byte, cutting characters apart (Oniguruma has no such escape) */
    expect_fail("\\C in a Split",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"pre_tokenizer\":{\"type\":\"Sequence\","
                "\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\C\"},\"behavior\":\"Isolated\"}," BL "]}}",
                WGNN_ERR_FORMAT, "pre_tokenizer.pretokenizers[0]: cannot compile");
    /* strings that are not UTF-8 (an added token of one continuation byte
     * matched inside a character of the text): refused by the JSON reader */
    expect_fail("added token not UTF-8",
                "{\"added_tokens\":[{\"id\":1,\"content\":\"\xa9\",\"special\":true}],"
                "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}}}",
                WGNN_ERR_FORMAT, "not valid UTF-8");
    expect_fail("ByteLevel first",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"pre_tokenizer\":{\"type\":\"Sequence\","
                "\"pretokenizers\":[" BL ",{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},\"behavior\":\"Isolated\"}]}}",
                WGNN_ERR_UNSUPPORTED, "not supported here");
    expect_fail("added no content", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"added_tokens\":[{\"id\":1}]}",
                WGNN_ERR_FORMAT, "added_tokens[0].content");
    expect_fail("added clash",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"added_tokens\":[{\"id\":0,\"content\":\"<s>\"}]}",
                WGNN_ERR_FORMAT, "id 0 is given to both");
    expect_fail("added lstrip",
                "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"added_tokens\":[{\"id\":1,\"content\":\"<s>\","
                "\"lstrip\":true}]}",
                WGNN_ERR_UNSUPPORTED, "added_tokens[0].lstrip");
    expect_fail("decoder", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"pre_tokenizer\":" BL
                           ",\"decoder\":{\"type\":\"WordPiece\"}}",
                WGNN_ERR_UNSUPPORTED, "decoder");

    /* a byte with no token and no unk_token: an error naming the piece */
    const char *ok = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},\"pre_tokenizer\":" BL "}";
    wgnn__tokenizer *t = NULL;
    char err[512] = "";
    CHECK(wgnn__tokenizer_parse(ok, strlen(ok), "bad.json", &t, err, sizeof err) == WGNN_OK, "%s", err);
    int32_t *ids = NULL;
    size_t n = 0;
    CHECK(wgnn__tokenizer_encode(t, "ab", 2, &ids, &n, err, sizeof err) == WGNN_ERR_FORMAT &&
              strstr(err, "byte 0x62 of the piece \"ab\" has no token"),
          "unknown byte: %s", err);
    wgnn__tokenizer_free(t);
    /* with unk_token: unknown bytes become it (fused with fuse_unk) */
    const char *unk = "{\"model\":{\"type\":\"BPE\",\"unk_token\":\"a\",\"fuse_unk\":true,\"vocab\":{\"a\":0,\"c\":1}},"
                      "\"pre_tokenizer\":" BL "}";
    CHECK(wgnn__tokenizer_parse(unk, strlen(unk), "bad.json", &t, err, sizeof err) == WGNN_OK, "%s", err);
    if (t)
        expect_ids(t, "unk fused", "cbbc", (int32_t[]){1, 0, 1}, 3);
    wgnn__tokenizer_free(t);

    /* load: a folder, a missing file */
    t = NULL;
    CHECK(wgnn__tokenizer_load(WGNN_SOURCE_DIR "/tests/data/tokenizers/tiny", &t, err, sizeof err) == WGNN_OK,
          "load folder: %s", err);
    if (t)
        expect_ids(t, "tiny", "Hello world", (int32_t[]){262, 264}, 2);
    wgnn__tokenizer_free(t);
    t = NULL;
    CHECK(wgnn__tokenizer_load("/nonexistent/tokenizer.json", &t, err, sizeof err) == WGNN_ERR_IO && t == NULL &&
              strstr(err, "/nonexistent/tokenizer.json"),
          "missing: %s", err);
}

/* Split with a literal String pattern, a regex that can match empty, and a
 * long piece (the heap keeps BPE at O(n log n)). */
static void test_split_edges(void)
{
    const char *extra[] = {"xx", "axxb", "xxb", "a-b", "-b", NULL};
    spec s = {extra, NULL, NULL, NULL,
              "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},"
              "\"behavior\":\"Isolated\"},{\"type\":\"Split\",\"pattern\":{\"Regex\":\"x*\"},\"behavior\":"
              "\"Isolated\"}," BL "]}",
              true};
    wgnn__tokenizer *t = build(&s);
    if (!t)
        return;
    expect_pieces(t, &s, "a-b", (const char *[]){"a", "-", "b", NULL});
    expect_pieces(t, &s, "axxb", (const char *[]){"a", "xx", "b", NULL});
    expect_pieces(t, &s, "xx-axxb", (const char *[]){"xx", "-", "a", "xx", "b", NULL});
    wgnn__tokenizer_free(t);

    const char *extra2[] = {"aa", NULL};
    const char *merges2[] = {"a a", NULL};
    spec s2 = {extra2, merges2, NULL, NULL, "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":true}",
               false};
    t = build(&s2);
    if (!t)
        return;
    size_t len = 1 << 20;
    char *text = malloc(len + 1);
    memset(text, 'a', len);
    text[len] = '\0';
    int32_t *ids = NULL;
    size_t n = 0;
    char err[256] = "";
    /* " aaaa...": the space alone (no " a" token), then 2^19 "aa" */
    CHECK(wgnn__tokenizer_encode(t, text, len, &ids, &n, err, sizeof err) == WGNN_OK && n == 1 + len / 2 &&
              ids[0] == ' ' && ids[1] == 256 && ids[n - 1] == 256,
          "1 MiB piece: %zu ids (%s)", n, err);
    free(ids);
    free(text);
    wgnn__tokenizer_free(t);
}

/* Llama 3's pattern: digits in groups of up to three. */
static void test_llama3_split(void)
{
    const char *extra[] = {"123", "45", "12345", " 123", "Hi", " there", NULL};
    spec s = {extra, NULL, NULL, NULL,
              "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\""
              "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+"
              "[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},\"behavior\":\"Isolated\",\"invert\":false},"
              "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}]}",
              true};
    wgnn__tokenizer *t = build(&s);
    if (!t)
        return;
    expect_pieces(t, &s, "Hi there 12345", (const char *[]){"Hi", " there", " ", "123", "45", NULL});
    wgnn__tokenizer_free(t);
}

/* ---- against Hugging Face's answers ----------------------------------------------- */

/* text as a C string literal, for messages */
static const char *esc(const char *text, char *buf, size_t cap)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && o + 5 < cap; p++)
        o += (size_t)((*p >= 0x20 && *p < 0x7F && *p != '\\' && *p != '"')
                          ? snprintf(buf + o, cap - o, "%c", *p)
                          : snprintf(buf + o, cap - o, "\\x%02X", *p));
    buf[o] = '\0';
    return buf;
}

/* cases.json (tests/models/make_qwen3_fixtures.py): {"cases": [{"text",
 * "ids", "decoded"}, ...]}, the ids of encode(text, add_special_tokens=False)
 * and decode(ids) by `tokenizers`. Every case: the same ids, and the same
 * text through the incremental decoder, one id at a time. */
static void test_hf_cases(const char *tokenizer_dir, const char *cases_path)
{
    wgnn__tokenizer *t = NULL;
    wgnn__json j = {0};
    char err[512] = "";
    CHECK(wgnn__tokenizer_load(tokenizer_dir, &t, err, sizeof err) == WGNN_OK, "load %s: %s", tokenizer_dir, err);
    CHECK(wgnn__json_load(cases_path, 0, &j, err, sizeof err) == WGNN_OK, "load %s: %s", cases_path, err);
    const cJSON *cases = wgnn__json_get(&j, "cases");
    CHECK(cJSON_IsArray(cases) && cJSON_GetArraySize(cases) > 0, "%s: no cases", cases_path);
    if (!t || !cJSON_IsArray(cases))
        goto cleanup;
    int n_case = 0, n_bad = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "text"));
        const char *decoded = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "decoded"));
        const cJSON *jids = cJSON_GetObjectItemCaseSensitive(c, "ids");
        CHECK(text && decoded && cJSON_IsArray(jids), "%s: case %d is malformed", cases_path, n_case);
        if (!text || !decoded || !cJSON_IsArray(jids))
            continue;
        size_t n_want = (size_t)cJSON_GetArraySize(jids);
        int32_t *want = malloc((n_want + 1) * sizeof *want);
        size_t k = 0;
        const cJSON *id;
        cJSON_ArrayForEach(id, jids) want[k++] = (int32_t)id->valuedouble;
        char name[600];
        snprintf(name, sizeof name, "%s case %d \"%s\"", cases_path, n_case, esc(text, (char[512]){0}, 512));
        int before = tu_fail;
        expect_ids(t, name, text, want, n_want);
        char *back = decode_all(t, want, n_want);
        CHECK(strcmp(back, decoded) == 0, "%s: decoded \"%s\", want \"%s\"", name, esc(back, (char[512]){0}, 512),
              esc(decoded, (char[512]){0}, 512));
        n_bad += tu_fail > before;
        free(back);
        free(want);
        n_case++;
    }
    printf("%s: %d cases, %d disagree\n", cases_path, n_case, n_bad);
cleanup:
    wgnn__json_free(&j);
    wgnn__tokenizer_free(t);
}

/* fixtures.json of a model folder: each prompt's ids, and its greedy
 * continuation decoded (split characters come out as U+FFFD, as in HF). */
static void test_hf_prompts(const char *model_dir)
{
    char path[1024], err[512] = "";
    snprintf(path, sizeof path, "%s/fixtures.json", model_dir);
    wgnn__tokenizer *t = NULL;
    wgnn__json j = {0};
    CHECK(wgnn__tokenizer_load(model_dir, &t, err, sizeof err) == WGNN_OK, "load %s: %s", model_dir, err);
    CHECK(wgnn__json_load(path, 0, &j, err, sizeof err) == WGNN_OK, "load %s: %s", path, err);
    const cJSON *prompts = wgnn__json_get(&j, "prompts");
    CHECK(cJSON_IsArray(prompts) && cJSON_GetArraySize(prompts) > 0, "%s: no prompts", path);
    if (!t || !cJSON_IsArray(prompts))
        goto cleanup;
    const cJSON *p;
    cJSON_ArrayForEach(p, prompts)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "name"));
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "text"));
        const char *cont = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "continuation"));
        const cJSON *jids = cJSON_GetObjectItemCaseSensitive(p, "ids");
        const cJSON *jgen = cJSON_GetObjectItemCaseSensitive(p, "gen_ids");
        CHECK(name && text && cont && cJSON_IsArray(jids) && cJSON_IsArray(jgen), "%s: malformed prompt", path);
        if (!name || !text || !cont || !cJSON_IsArray(jids) || !cJSON_IsArray(jgen))
            continue;
        int32_t ids[256], gen[256];
        size_t n = 0, n_gen = 0;
        const cJSON *id;
        cJSON_ArrayForEach(id, jids) if (n < 256) ids[n++] = (int32_t)id->valuedouble;
        cJSON_ArrayForEach(id, jgen) if (n_gen < 256) gen[n_gen++] = (int32_t)id->valuedouble;
        char what[1200];
        snprintf(what, sizeof what, "%s prompt %s", path, name);
        expect_ids(t, what, text, ids, n);
        char *back = decode_all(t, gen, n_gen);
        CHECK(strcmp(back, cont) == 0, "%s: continuation \"%s\", want \"%s\"", what, esc(back, (char[512]){0}, 512),
              esc(cont, (char[512]){0}, 512));
        free(back);
    }
cleanup:
    wgnn__json_free(&j);
    wgnn__tokenizer_free(t);
}

/* The public API (wgnn_tokenizer_*, wgnn_detok_*, include/wgnn.h): the same
 * ids as the internal functions, a streamed round trip, NULL arguments. */
static void test_public_api(const char *dir)
{
    char err[512] = "";
    wgnn_tokenizer *t = NULL;
    wgnn_status s = wgnn_tokenizer_load(dir, &t, err, sizeof err);
    CHECK(s == WGNN_OK, "public load: %s", err);
    if (s != WGNN_OK)
        return;
    const char *text = "Grüße, 世界! I'm 42 🙂\n\tdone<|im_end|>";
    int32_t *ids = NULL, *ref = NULL;
    size_t n = 0, nref = 0;
    s = wgnn_tokenizer_encode(t, text, strlen(text), &ids, &n, err, sizeof err);
    CHECK(s == WGNN_OK && n > 0, "public encode: %s", err);
    CHECK(wgnn__tokenizer_encode(t, text, strlen(text), &ref, &nref, err, sizeof err) == WGNN_OK && nref == n &&
              memcmp(ids, ref, n * sizeof *ids) == 0,
          "public and internal encode differ");
    size_t cap = wgnn_detok_max_out(t), len = 0;
    char *out = malloc(cap * (n + 1) + 4), *p = out;
    wgnn_detok d;
    wgnn_detok_init(&d);
    for (size_t i = 0; out && i < n; i++) {
        size_t k = 0;
        CHECK(wgnn_detok_push(t, &d, ids[i], p, cap, &k) == WGNN_OK, "public detok push %zu", i);
        p += k;
        len += k;
    }
    size_t k = 0;
    CHECK(out && wgnn_detok_flush(&d, p, 4, &k) == WGNN_OK, "public flush");
    len += k;
    CHECK(out && len == strlen(text) && memcmp(out, text, len) == 0, "public round trip: %.*s", (int)len,
          out ? out : "");
    CHECK(wgnn_tokenizer_token_id(t, "<|im_end|>") == 1023 && wgnn_tokenizer_vocab_size(t) == 1024,
          "public token_id / vocab_size");
    CHECK(wgnn_detok_push(t, &d, 99999, out, cap, &k) == WGNN_ERR_INVALID_ARGUMENT, "public push of a bad id");
    CHECK(wgnn_tokenizer_encode(t, NULL, 3, &ids, &n, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT,
          "public encode of NULL text");
    CHECK(wgnn_tokenizer_load(NULL, &t, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT, "public load of NULL");
    free(out);
    free(ids);
    free(ref);
    wgnn_tokenizer_free(t);
    wgnn_tokenizer_free(NULL);
}

int main(void)
{
    test_merge_order();
    test_ignore_merges();
    test_gpt2_regex();
    test_qwen2_split();
    test_added_tokens();
    test_detok();
    test_split_edges();
    test_llama3_split();
    test_hostile();
    test_hf_cases(WGNN_SOURCE_DIR "/tests/models/qwen3", WGNN_SOURCE_DIR "/tests/models/qwen3/tokenizer_cases.json");
    test_hf_cases(WGNN_SOURCE_DIR "/tests/data/tokenizers/tiny",
                  WGNN_SOURCE_DIR "/tests/data/tokenizers/tiny/cases.json");
    test_hf_prompts(WGNN_SOURCE_DIR "/tests/models/qwen3");
    test_hf_prompts(WGNN_SOURCE_DIR "/tests/models/qwen3_untied");
    test_public_api(WGNN_SOURCE_DIR "/tests/models/qwen3");
    return tu_finish();
}
