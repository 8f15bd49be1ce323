/* test_safetensors.c - the safetensors reader on files built here in memory,
 * in a temporary folder (single files, shards) and on the committed
 * fixtures. No GPU. */
#include "io/safetensors.h"
#include "testutil.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef WGNN_SOURCE_DIR
#define WGNN_SOURCE_DIR "."
#endif

/* An image: 8-byte length, header text, data bytes. */
static unsigned char *st_image(const char *hdr, const void *data, size_t dlen, size_t *len)
{
    size_t h = strlen(hdr);
    unsigned char *b = malloc(8 + h + dlen + 1);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, hdr, h);
    if (dlen)
        memcpy(b + 8 + h, data, dlen);
    *len = 8 + h + dlen;
    return b;
}

static void write_file(const char *path, const void *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        if (len)
            fwrite(b, 1, len, f);
        fclose(f);
    }
}

static void write_st(const char *path, const char *hdr, const void *data, size_t dlen)
{
    size_t len;
    unsigned char *b = st_image(hdr, data, dlen, &len);
    write_file(path, b, len);
    free(b);
}

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* ---- a valid file with every kind of entry -------------------------------- */

static void test_valid(void)
{
    /* data: w F32 [2,3] @0, h F16 [4] @24, b BF16 [3] @32, i I64 [1] @38,
     * u U8 [] @46, z F32 [0,4] @47 (empty): the data area exactly */
    unsigned char data[47];
    float w[6] = {1.0f, -2.0f, 0.5f, 3.25f, -0.0f, 100.0f};
    uint16_t h[4] = {0x3c00, 0xc100, 0x0001, 0x7c00}; /* 1, -2.5, 2^-24, inf */
    uint16_t b[3] = {0x3f80, 0xc040, 0x7fc0};         /* 1, -3, NaN */
    int64_t i64 = -7;
    memcpy(data, w, 24);
    memcpy(data + 24, h, 8);
    memcpy(data + 32, b, 6);
    memcpy(data + 38, &i64, 8);
    data[46] = 200;
    const char *hdr =
        "{\"__metadata__\": {\"format\": \"pt\"},"
        " \"w\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]},"
        " \"h\": {\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [24, 32]},"
        " \"b\": {\"dtype\": \"BF16\", \"shape\": [3], \"data_offsets\": [32, 38]},"
        " \"i\": {\"dtype\": \"I64\", \"shape\": [1], \"data_offsets\": [38, 46]},"
        " \"u\": {\"dtype\": \"U8\", \"shape\": [], \"data_offsets\": [46, 47]},"
        " \"z\": {\"dtype\": \"F32\", \"shape\": [0, 4], \"data_offsets\": [47, 47]}}   ";
    size_t len;
    unsigned char *img = st_image(hdr, data, sizeof data, &len);
    wgnn__st *st = NULL;
    char err[512] = "";
    wgnn_status s = wgnn__st_parse(img, len, "mem.safetensors", &st, err, sizeof err);
    CHECK(s == WGNN_OK, "parse: %s", err);
    if (s != WGNN_OK) {
        free(img);
        return;
    }
    CHECK(wgnn__st_count(st) == 6, "count %d", wgnn__st_count(st));
    CHECK(wgnn__st_find(st, "__metadata__") == NULL, "metadata is not a tensor");
    CHECK(wgnn__st_find(st, "nope") == NULL, "absent name");
    CHECK(wgnn__st_at(st, 6) == NULL && wgnn__st_at(st, -1) == NULL, "at out of range");
    const unsigned char *base = img + len - sizeof data;

    const wgnn__st_tensor *t = wgnn__st_find(st, "w");
    CHECK(t && t->dtype == WGNN__ST_F32 && strcmp(t->dtype_name, "F32") == 0 && t->rank == 2 && t->dims[0] == 2 &&
              t->dims[1] == 3 && t->numel == 6 && t->nbytes == 24 && t->data == base &&
              strcmp(t->file, "mem.safetensors") == 0,
          "w fields");
    float f[6];
    uint16_t hb[6];
    CHECK(wgnn__st_to_f32(t, f, err, sizeof err) == WGNN_OK && memcmp(f, w, 24) == 0, "w to f32");
    CHECK(wgnn__st_to_f16(t, hb, err, sizeof err) == WGNN_OK && hb[0] == 0x3c00 && hb[1] == 0xc000 &&
              hb[2] == 0x3800 && hb[3] == 0x4280 && hb[4] == 0x8000 && hb[5] == 0x5640,
          "w to f16: %04x %04x %04x %04x %04x %04x", hb[0], hb[1], hb[2], hb[3], hb[4], hb[5]);

    t = wgnn__st_find(st, "h");
    CHECK(t && t->dtype == WGNN__ST_F16 && t->rank == 1 && t->dims[0] == 4 && t->nbytes == 8 && t->data == base + 24,
          "h fields");
    CHECK(wgnn__st_to_f32(t, f, err, sizeof err) == WGNN_OK && f[0] == 1.0f && f[1] == -2.5f &&
              f[2] == ldexpf(1.0f, -24) && isinf(f[3]) && f[3] > 0,
          "h to f32: %g %g %g %g", f[0], f[1], f[2], f[3]);
    CHECK(wgnn__st_to_f16(t, hb, err, sizeof err) == WGNN_OK && memcmp(hb, h, 8) == 0, "h to f16 copies");

    t = wgnn__st_find(st, "b");
    CHECK(t && t->dtype == WGNN__ST_BF16 && strcmp(t->dtype_name, "BF16") == 0 && t->numel == 3 &&
              t->data == base + 32,
          "b fields");
    CHECK(wgnn__st_to_f32(t, f, err, sizeof err) == WGNN_OK && f[0] == 1.0f && f[1] == -3.0f && isnan(f[2]),
          "b to f32: %g %g %g", f[0], f[1], f[2]);
    CHECK(wgnn__st_to_f16(t, hb, err, sizeof err) == WGNN_OK && hb[0] == 0x3c00 && hb[1] == 0xc200 &&
              (hb[2] & 0x7c00) == 0x7c00 && (hb[2] & 0x3ff) != 0,
          "b to f16: %04x %04x %04x", hb[0], hb[1], hb[2]);

    t = wgnn__st_find(st, "i");
    CHECK(t && t->dtype == WGNN__ST_OTHER && strcmp(t->dtype_name, "I64") == 0 && t->nbytes == 8, "i fields");
    s = wgnn__st_to_f32(t, f, err, sizeof err);
    CHECK(s == WGNN_ERR_UNSUPPORTED && strstr(err, "'i'") && strstr(err, "I64"), "i to f32: %d %s", s, err);
    s = wgnn__st_to_f16(t, hb, err, sizeof err);
    CHECK(s == WGNN_ERR_UNSUPPORTED && strstr(err, "'i'"), "i to f16: %d %s", s, err);

    t = wgnn__st_find(st, "u");
    CHECK(t && t->rank == 0 && t->numel == 1 && t->nbytes == 1 && *(const unsigned char *)t->data == 200, "u scalar");
    t = wgnn__st_find(st, "z");
    CHECK(t && t->rank == 2 && t->dims[0] == 0 && t->dims[1] == 4 && t->numel == 0 && t->nbytes == 0, "z empty");
    CHECK(t && wgnn__st_to_f32(t, f, err, sizeof err) == WGNN_OK, "z converts (nothing)");

    /* every tensor reachable by index and by name */
    int found = 0;
    for (int i = 0; i < wgnn__st_count(st); i++)
        found += wgnn__st_find(st, wgnn__st_at(st, i)->name) == wgnn__st_at(st, i);
    CHECK(found == 6, "at/find agree: %d", found);
    wgnn__st_close(st);
    wgnn__st_close(NULL);
    free(img);
}

/* Many tensors: the index grows and finds every one. */
static void test_many(void)
{
    enum { N = 1000 };
    size_t cap = N * 96 + 16, n = 0;
    char *hdr = malloc(cap);
    n += (size_t)snprintf(hdr + n, cap - n, "{");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(hdr + n, cap - n, "%s\"layer.%d.weight\": {\"dtype\": \"F16\", \"shape\": [1], "
                              "\"data_offsets\": [%d, %d]}", i ? "," : "", i, 2 * i, 2 * i + 2);
    snprintf(hdr + n, cap - n, "}");
    uint16_t data[N];
    for (int i = 0; i < N; i++)
        data[i] = (uint16_t)i;
    size_t len;
    unsigned char *img = st_image(hdr, data, sizeof data, &len);
    wgnn__st *st = NULL;
    char err[512] = "", name[64];
    CHECK(wgnn__st_parse(img, len, "many", &st, err, sizeof err) == WGNN_OK, "%s", err);
    int ok = 0;
    for (int i = 0; st && i < N; i++) {
        snprintf(name, sizeof name, "layer.%d.weight", i);
        const wgnn__st_tensor *t = wgnn__st_find(st, name);
        uint16_t v;
        ok += t && wgnn__st_to_f16(t, &v, err, sizeof err) == WGNN_OK && v == i;
    }
    CHECK(ok == N, "found %d of %d", ok, N);
    wgnn__st_close(st);
    free(img);
    free(hdr);
}

/* ---- conversions --------------------------------------------------------- */

static uint16_t to_f16(float x)
{
    char hdr[128];
    snprintf(hdr, sizeof hdr, "{\"x\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}");
    size_t len;
    unsigned char *img = st_image(hdr, &x, 4, &len);
    wgnn__st *st = NULL;
    char err[256];
    uint16_t h = 0xdead;
    if (wgnn__st_parse(img, len, "x", &st, err, sizeof err) == WGNN_OK)
        wgnn__st_to_f16(wgnn__st_at(st, 0), &h, err, sizeof err);
    wgnn__st_close(st);
    free(img);
    return h;
}

static void test_rounding(void)
{
    static const struct { float x; uint16_t h; const char *what; } cases[] = {
        {1.0f, 0x3c00, "1"},
        {65504.0f, 0x7bff, "max half"},
        {65519.0f, 0x7bff, "just below the inf threshold"},
        {65520.0f, 0x7c00, "tie at the top rounds to even = inf"},
        {1e10f, 0x7c00, "overflow"},
        {-1e10f, 0xfc00, "negative overflow"},
        {1.0f + 0x1p-11f, 0x3c00, "tie rounds down to even"},
        {1.0f + 0x3p-11f, 0x3c02, "tie rounds up to even"},
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01, "above the tie rounds up"},
        {0x1p-14f, 0x0400, "min normal"},
        {0x1p-24f, 0x0001, "min subnormal"},
        {0x1p-25f, 0x0000, "half the min subnormal ties to zero"},
        {0x1.8p-25f, 0x0001, "above half rounds up"},
        {0x3p-25f, 0x0002, "subnormal tie to even (1.5 -> 2)"},
        {0x5p-25f, 0x0002, "subnormal tie to even (2.5 -> 2)"},
        {0x1.ffcp-15f, 0x0400, "subnormal rounding carries into the min normal"},
        {1e-10f, 0x0000, "underflow"},
        {-0.0f, 0x8000, "negative zero"},
        {INFINITY, 0x7c00, "inf"},
        {-INFINITY, 0xfc00, "-inf"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = to_f16(cases[i].x);
        CHECK(h == cases[i].h, "%s: %a -> %04x, want %04x", cases[i].what, (double)cases[i].x, h, cases[i].h);
    }
    uint16_t n = to_f16(bits_f(0x7fc00000u));
    CHECK((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0, "NaN stays NaN: %04x", n);
    n = to_f16(bits_f(0xff800001u)); /* signalling NaN with a low payload */
    CHECK((n & 0xfc00) == 0xfc00 && (n & 0x3ff) != 0, "-sNaN stays NaN: %04x", n);

    /* every half round-trips through f32 */
    uint16_t all[65536];
    for (uint32_t i = 0; i < 65536; i++)
        all[i] = (uint16_t)i;
    char hdr[128];
    snprintf(hdr, sizeof hdr, "{\"a\": {\"dtype\": \"F16\", \"shape\": [65536], \"data_offsets\": [0, 131072]}}");
    size_t len;
    unsigned char *img = st_image(hdr, all, sizeof all, &len);
    wgnn__st *st = NULL;
    char err[256];
    float *f = malloc(65536 * sizeof *f);
    CHECK(wgnn__st_parse(img, len, "all", &st, err, sizeof err) == WGNN_OK, "%s", err);
    int bad = 0;
    if (st && wgnn__st_to_f32(wgnn__st_at(st, 0), f, err, sizeof err) == WGNN_OK) {
        for (uint32_t i = 0; i < 65536; i++) {
            bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
            if (nan ? !isnan(f[i]) || to_f16(f[i]) != (i | 0x200) : to_f16(f[i]) != i)
                bad++;
        }
        /* spot values */
        CHECK(f[0x3555] == 0.333251953125f && f[0x0001] == 0x1p-24f && f[0x03ff] == 0x3ffp-24f &&
                  f[0x7bff] == 65504.0f && f[0xc000] == -2.0f && f_bits(f[0x8000]) == 0x80000000u,
              "f16 spot values");
    }
    CHECK(bad == 0, "%d halves do not round-trip", bad);
    free(f);
    wgnn__st_close(st);
    free(img);
}

/* ---- hostile headers ------------------------------------------------------ */

static void expect_parse(const char *what, const unsigned char *b, size_t len, wgnn_status want, const char *s1,
                         const char *s2)
{
    wgnn__st *st = (wgnn__st *)1;
    char err[512] = "";
    wgnn_status s = wgnn__st_parse(b, len, "bad.safetensors", &st, err, sizeof err);
    CHECK(s == want && st == NULL, "%s: status %d (want %d): %s", what, s, want, err);
    CHECK(strstr(err, "bad.safetensors") != NULL, "%s: message names the file: %s", what, err);
    CHECK(!s1 || strstr(err, s1), "%s: message lacks '%s': %s", what, s1, err);
    CHECK(!s2 || strstr(err, s2), "%s: message lacks '%s': %s", what, s2, err);
    if (s == WGNN_OK)
        wgnn__st_close(st);
}

static void expect_header(const char *what, const char *hdr, size_t dlen, const char *s1, const char *s2)
{
    unsigned char data[64] = {0};
    size_t len;
    unsigned char *img = st_image(hdr, data, dlen, &len);
    expect_parse(what, img, len, WGNN_ERR_FORMAT, s1, s2);
    free(img);
}

#define T(name, dtype, shape, offs) "\"" name "\": {\"dtype\": " dtype ", \"shape\": " shape ", \"data_offsets\": " offs "}"

static void test_hostile(void)
{
    unsigned char small[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    expect_parse("empty", small, 0, WGNN_ERR_FORMAT, "empty", NULL);
    expect_parse("5 bytes", small, 5, WGNN_ERR_FORMAT, "too short", NULL);
    expect_parse("length past the end", small, 8, WGNN_ERR_FORMAT, "runs past the end", NULL);
    unsigned char huge[16] = {0x01, 0xe1, 0xf5, 0x05, 0, 0, 0, 0, '{', '}'}; /* 100000001 */
    expect_parse("header over 100 MB", huge, sizeof huge, WGNN_ERR_FORMAT, "exceeds the limit", NULL);
    unsigned char all_ff[16];
    memset(all_ff, 0xff, sizeof all_ff);
    expect_parse("length 2^64-1", all_ff, sizeof all_ff, WGNN_ERR_FORMAT, "exceeds the limit", NULL);

    expect_header("not JSON", "{\"w\": ", 0, "header: invalid JSON at line 1, column", NULL);
    expect_header("garbage after the object", "{} x", 0, "unexpected text after the JSON value", NULL);
    expect_header("array", "[1, 2]", 0, "expected a JSON object", NULL);
    expect_header("entry not an object", "{\"wq\": 3}", 0, "'wq'", "expected an object");
    expect_header("dtype not a string", "{" T("wq", "4", "[1]", "[0, 4]") "}", 4, "'wq'", "dtype");
    expect_header("unknown dtype", "{" T("wq", "\"F33\"", "[1]", "[0, 4]") "}", 4, "'wq'", "F33");
    expect_header("missing dtype", "{\"wq\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 4, "'wq'", "dtype");
    expect_header("missing offsets", "{\"wq\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4, "'wq'", "data_offsets");
    expect_header("shape not an array", "{" T("wq", "\"F32\"", "3", "[0, 12]") "}", 12, "'wq'", "shape");
    expect_header("negative dim", "{" T("wq", "\"F32\"", "[-1]", "[0, 4]") "}", 4, "'wq'", "shape[0]");
    expect_header("fractional dim", "{" T("wq", "\"F32\"", "[1, 2.5]", "[0, 4]") "}", 4, "'wq'", "shape[1]");
    expect_header("string dim", "{" T("wq", "\"F32\"", "[\"2\"]", "[0, 8]") "}", 8, "'wq'", "shape[0]");
    expect_header("rank 9", "{" T("wq", "\"F32\"", "[1,1,1,1,1,1,1,1,1]", "[0, 4]") "}", 4, "'wq'", "rank 9");
    expect_header("numel overflow", "{" T("wq", "\"F32\"", "[4294967296, 4294967296, 16]", "[0, 4]") "}", 4,
                  "'wq'", "overflows");
    expect_header("bytes overflow", "{" T("wq", "\"F64\"", "[4294967296, 4294967296]", "[0, 4]") "}", 4, "'wq'",
                  "overflows");
    expect_header("dim over 2^53", "{" T("wq", "\"F32\"", "[18446744073709551616]", "[0, 4]") "}", 4, "'wq'",
                  "shape[0]");
    expect_header("one offset", "{" T("wq", "\"F32\"", "[1]", "[4]") "}", 4, "'wq'", "data_offsets");
    expect_header("three offsets", "{" T("wq", "\"F32\"", "[1]", "[0, 4, 8]") "}", 8, "'wq'", "data_offsets");
    expect_header("string offset", "{" T("wq", "\"F32\"", "[1]", "[\"0\", 4]") "}", 4, "'wq'", "data_offsets");
    expect_header("negative offset", "{" T("wq", "\"F32\"", "[1]", "[-4, 0]") "}", 4, "'wq'", "data_offsets");
    expect_header("offsets object", "{" T("wq", "\"F32\"", "[1]", "{}") "}", 4, "'wq'", "data_offsets");
    expect_header("begin after end", "{" T("wq", "\"F32\"", "[0]", "[8, 4]") "}", 8, "'wq'", "before they begin");
    expect_header("size mismatch", "{" T("wq", "\"F32\"", "[2]", "[0, 4]") "}", 8, "'wq'", "needs 8");
    expect_header("bf16 size mismatch", "{" T("wq", "\"BF16\"", "[2]", "[0, 8]") "}", 8, "'wq'", "needs 4");
    expect_header("past the data", "{" T("wq", "\"F32\"", "[2]", "[0, 8]") "}", 4, "'wq'", "past the end");
    expect_header("overlap", "{" T("wa", "\"F32\"", "[2]", "[0, 8]") ", " T("wb", "\"F32\"", "[2]", "[4, 12]") "}",
                  12, "'wa'", "'wb'");
    expect_header("overlap past a short one",
                  "{" T("wa", "\"F32\"", "[4]", "[0, 16]") ", " T("wb", "\"F32\"", "[1]", "[4, 8]") ", "
                  T("wc", "\"F32\"", "[1]", "[12, 16]") "}",
                  16, "overlap", "'wa'");
    expect_header("duplicate name", "{" T("wq", "\"F32\"", "[1]", "[0, 4]") ", " T("wq", "\"F32\"", "[1]", "[4, 8]") "}",
                  8, "\"wq\" stands twice", NULL); /* refused by the JSON reader */
    expect_header("a key twice in an entry",
                  "{\"wq\": {\"dtype\": \"F32\", \"dtype\": \"F16\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
                  "\"dtype\" stands twice", NULL);
    expect_header("metadata not an object", "{\"__metadata__\": [\"pt\"]}", 0, "__metadata__", "object");
    expect_header("metadata value not a string", "{\"__metadata__\": {\"format\": \"pt\", \"epochs\": 3}}", 0,
                  "__metadata__", "'epochs'");
    expect_header("metadata twice", "{\"__metadata__\": {}, \"__metadata__\": {}}", 0, "\"__metadata__\" stands twice", NULL);

    expect_header("NUL in a name", "{" T("w\\u0000x", "\"F32\"", "[1]", "[0, 4]") "}", 4, "\\u0000", "NUL");
    /* holes and bytes after the last tensor: the format allows none */
    expect_header("hole", "{" T("wa", "\"F32\"", "[1]", "[0, 4]") ", " T("wb", "\"F32\"", "[1]", "[8, 12]") "}", 12,
                  "'wb'", "hole");
    expect_header("hole at the start", "{" T("wa", "\"F32\"", "[1]", "[4, 8]") "}", 8, "'wa'", "begins at byte 4");
    expect_header("bytes after the last tensor", "{" T("wa", "\"F32\"", "[1]", "[0, 4]") "}", 9, "end at byte 4",
                  "the last 5");
    expect_header("data but no tensor", "{\"__metadata__\": {}}", 3, "end at byte 0", "no tensor");

    /* allowed: same offsets for two empty tensors, an empty header */
    unsigned char data[4] = {0};
    size_t len;
    unsigned char *img = st_image("{" T("e1", "\"F32\"", "[0]", "[4, 4]") ", " T("e2", "\"F16\"", "[3, 0]", "[4, 4]")
                                  ", " T("f", "\"F32\"", "[1]", "[0, 4]") "}",
                                  data, 4, &len);
    wgnn__st *st = NULL;
    char err[512] = "";
    CHECK(wgnn__st_parse(img, len, "ok", &st, err, sizeof err) == WGNN_OK && wgnn__st_count(st) == 3, "empties: %s",
          err);
    wgnn__st_close(st);
    free(img);
    img = st_image("{}", NULL, 0, &len);
    st = NULL;
    CHECK(wgnn__st_parse(img, len, "ok", &st, err, sizeof err) == WGNN_OK && wgnn__st_count(st) == 0, "{}: %s", err);
    wgnn__st_close(st);
    free(img);
}

/* ---- files and folders ---------------------------------------------------- */

static char g_dir[64];

static const char *in_dir(char *buf, size_t cap, const char *fmt, ...)
{
    int n = snprintf(buf, cap, "%s/", g_dir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
    va_end(ap);
    return buf;
}

static void expect_open(const char *what, const char *path, wgnn_status want, const char *s1, const char *s2)
{
    wgnn__st *st = NULL;
    char err[1024] = "";
    wgnn_status s = wgnn__st_open(path, &st, err, sizeof err);
    CHECK(s == want && (s == WGNN_OK) == (st != NULL), "%s: status %d (want %d): %s", what, s, want, err);
    CHECK(!s1 || strstr(err, s1), "%s: message lacks '%s': %s", what, s1, err);
    CHECK(!s2 || strstr(err, s2), "%s: message lacks '%s': %s", what, s2, err);
    wgnn__st_close(st);
}

static const char *ONE = "{" T("a", "\"F32\"", "[2]", "[0, 8]") ", " T("b", "\"BF16\"", "[2]", "[8, 12]") "}";
static const unsigned char ONE_DATA[12] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0x80, 0x3f, 0x40, 0xc0};

static void test_files(void)
{
    char p[512], q[512];
    /* a folder with model.safetensors */
    mkdir(in_dir(p, sizeof p, "single"), 0700);
    write_st(in_dir(p, sizeof p, "single/model.safetensors"), ONE, ONE_DATA, sizeof ONE_DATA);
    wgnn__st *st = NULL;
    char err[1024] = "";
    wgnn_status s = wgnn__st_open(in_dir(p, sizeof p, "single"), &st, err, sizeof err);
    CHECK(s == WGNN_OK && wgnn__st_count(st) == 2, "open folder: %s", err);
    if (s == WGNN_OK) {
        const wgnn__st_tensor *a = wgnn__st_find(st, "a"), *b = wgnn__st_find(st, "b");
        float f[2] = {0};
        CHECK(a && strstr(a->file, "single/model.safetensors") && wgnn__st_to_f32(a, f, err, sizeof err) == WGNN_OK &&
                  f[0] == 1.0f && f[1] == 2.0f,
              "a from the mapping");
        CHECK(b && wgnn__st_to_f32(b, f, err, sizeof err) == WGNN_OK && f[0] == 1.0f && f[1] == -3.0f, "b bf16");
    }
    wgnn__st_close(st);
    expect_open("folder with a slash", in_dir(p, sizeof p, "single/"), WGNN_OK, NULL, NULL);
    expect_open("the file itself", in_dir(p, sizeof p, "single/model.safetensors"), WGNN_OK, NULL, NULL);

    mkdir(in_dir(p, sizeof p, "empty_dir"), 0700);
    expect_open("folder without weights", in_dir(p, sizeof p, "empty_dir"), WGNN_ERR_IO, "model.safetensors",
                "model.safetensors.index.json");
    mkdir(in_dir(p, sizeof p, "dir_as_file"), 0700);
    mkdir(in_dir(p, sizeof p, "dir_as_file/model.safetensors"), 0700);
    expect_open("model.safetensors is a folder", in_dir(p, sizeof p, "dir_as_file"), WGNN_ERR_IO, "directory", NULL);
    expect_open("device", "/dev/null", WGNN_ERR_IO, "character device", "/dev/null");
    expect_open("absent", in_dir(p, sizeof p, "nope.safetensors"), WGNN_ERR_IO, "nope.safetensors", "No such file");
    write_file(in_dir(p, sizeof p, "empty.safetensors"), "", 0);
    expect_open("empty file", p, WGNN_ERR_FORMAT, "empty", "empty.safetensors");
    write_file(in_dir(p, sizeof p, "short.safetensors"), "abc", 3);
    expect_open("short file", p, WGNN_ERR_FORMAT, "too short", "short.safetensors");
    write_st(in_dir(p, sizeof p, "bad.safetensors"), "{" T("wq", "\"F32\"", "[2]", "[0, 8]") "}", ONE_DATA, 4);
    expect_open("bad header on disk", p, WGNN_ERR_FORMAT, "'wq'", "bad.safetensors");

    /* shards */
    const char *s1 = "model-00001-of-00002.safetensors", *s2 = "model-00002-of-00002.safetensors";
    mkdir(in_dir(p, sizeof p, "sharded"), 0700);
    write_st(in_dir(p, sizeof p, "sharded/%s", s1), ONE, ONE_DATA, sizeof ONE_DATA);
    write_st(in_dir(p, sizeof p, "sharded/%s", s2), "{" T("c", "\"F16\"", "[1]", "[0, 2]") "}",
             (const unsigned char[]){0x00, 0x3c}, 2);
    snprintf(q, sizeof q,
             "{\"metadata\": {\"total_size\": 14}, \"weight_map\": {\"a\": \"%s\", \"c\": \"%s\", \"b\": \"%s\"}}",
             s1, s2, s1);
    write_file(in_dir(p, sizeof p, "sharded/model.safetensors.index.json"), q, strlen(q));
    st = NULL;
    s = wgnn__st_open(in_dir(p, sizeof p, "sharded"), &st, err, sizeof err);
    CHECK(s == WGNN_OK && wgnn__st_count(st) == 3, "sharded folder: %s", err);
    if (s == WGNN_OK) {
        const wgnn__st_tensor *a = wgnn__st_find(st, "a"), *c = wgnn__st_find(st, "c");
        float f = 0;
        CHECK(a && strstr(a->file, s1) && c && strstr(c->file, s2), "shard files");
        CHECK(c && wgnn__st_to_f32(c, &f, err, sizeof err) == WGNN_OK && f == 1.0f, "c from shard 2");
    }
    wgnn__st_close(st);
    expect_open("the index itself", in_dir(p, sizeof p, "sharded/model.safetensors.index.json"), WGNN_OK, NULL, NULL);

    static const struct { const char *what, *map; wgnn_status want; const char *s1, *s2; } bad[] = {
        {"parent shard", "{\"a\": \"../model.safetensors\"}", WGNN_ERR_FORMAT, "'a'", "../model.safetensors"},
        {"shard in a subfolder", "{\"a\": \"sub/x.safetensors\"}", WGNN_ERR_FORMAT, "'a'", "sub/x"},
        {"shard ..", "{\"a\": \"..\"}", WGNN_ERR_FORMAT, "'a'", NULL},
        {"empty shard name", "{\"a\": \"\"}", WGNN_ERR_FORMAT, "'a'", NULL},
        {"shard not a string", "{\"a\": 1}", WGNN_ERR_FORMAT, "'a'", NULL},
        {"absent shard", "{\"a\": \"model-00003-of-00002.safetensors\"}", WGNN_ERR_IO, "model-00003", NULL},
        {"tensor not in its shard", "{\"zz\": \"model-00002-of-00002.safetensors\"}", WGNN_ERR_FORMAT, "'zz'",
         "model-00002"},
        {"tensor in the other shard",
         "{\"a\": \"model-00002-of-00002.safetensors\", \"c\": \"model-00001-of-00002.safetensors\"}",
         WGNN_ERR_FORMAT, "'a'", "model-00001"},
        {"listed twice",
         "{\"a\": \"model-00001-of-00002.safetensors\", \"a\": \"model-00001-of-00002.safetensors\"}",
         WGNN_ERR_FORMAT, "\"a\" stands twice", NULL}, /* refused by the JSON reader */
        {"listed twice, two shards",
         "{\"a\": \"model-00001-of-00002.safetensors\", \"a\": \"model-00002-of-00002.safetensors\"}",
         WGNN_ERR_FORMAT, "\"a\" stands twice", NULL},
        {"NUL in a shard's name", "{\"a\": \"model-00001-of-00002.safetensors\\u0000x\"}", WGNN_ERR_FORMAT,
         "NUL", NULL}, /* would read model-00001-of-00002.safetensors */
        {"duplicate across shards", "{\"a\": \"model-00001-of-00002.safetensors\", \"x\": \"dup.safetensors\"}",
         WGNN_ERR_FORMAT, "'a'", "dup.safetensors"},
        {"weight_map an array", NULL, WGNN_ERR_FORMAT, "weight_map", NULL},
    };
    write_st(in_dir(p, sizeof p, "sharded/dup.safetensors"),
             "{" T("x", "\"F32\"", "[1]", "[0, 4]") ", " T("a", "\"F32\"", "[1]", "[4, 8]") "}", ONE_DATA, 8);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bad[i].map)
            snprintf(q, sizeof q, "{\"weight_map\": %s}", bad[i].map);
        else
            snprintf(q, sizeof q, "{\"weight_map\": []}");
        write_file(in_dir(p, sizeof p, "sharded/bad.index.json"), q, strlen(q));
        expect_open(bad[i].what, p, bad[i].want, bad[i].s1, bad[i].s2);
    }
    write_file(in_dir(p, sizeof p, "sharded/bad.index.json"), "{\"weight_map\": {", 16);
    expect_open("index not JSON", p, WGNN_ERR_FORMAT, "bad.index.json", "line 1");
}

static void rm_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- committed fixtures --------------------------------------------------- */

static void test_fixtures(void)
{
    wgnn__st *st = NULL;
    char err[1024] = "";
    wgnn_status s = wgnn__st_open(WGNN_SOURCE_DIR "/tests/models/vit/model.safetensors", &st, err, sizeof err);
    CHECK(s == WGNN_OK && wgnn__st_count(st) > 10, "vit: %s", err);
    const wgnn__st_tensor *t = wgnn__st_find(st, "embeddings.cls_token");
    CHECK(t && t->dtype == WGNN__ST_F32 && t->rank == 3 && t->dims[0] == 1 && t->dims[1] == 1 && t->dims[2] == 32,
          "vit cls_token");
    float *f = t ? malloc((size_t)t->numel * sizeof *f) : NULL;
    CHECK(f && wgnn__st_to_f32(t, f, err, sizeof err) == WGNN_OK && isfinite(f[0]), "cls_token converts");
    free(f);
    wgnn__st_close(st);

    st = NULL;
    s = wgnn__st_open(WGNN_SOURCE_DIR "/tests/models/vit_bf16", &st, err, sizeof err);
    CHECK(s == WGNN_OK, "vit_bf16: %s", err);
    int bf16 = 0, ok = 0;
    for (int i = 0; i < wgnn__st_count(st); i++) {
        t = wgnn__st_at(st, i);
        bf16 += t->dtype == WGNN__ST_BF16;
        float *g = malloc((size_t)t->numel * sizeof *g + 4);
        uint16_t *h = malloc((size_t)t->numel * sizeof *h + 2);
        ok += wgnn__st_to_f32(t, g, err, sizeof err) == WGNN_OK && wgnn__st_to_f16(t, h, err, sizeof err) == WGNN_OK;
        free(g);
        free(h);
    }
    CHECK(bf16 > 0 && ok == wgnn__st_count(st), "vit_bf16: %d BF16 tensors, %d of %d convert", bf16, ok,
          wgnn__st_count(st));
    t = wgnn__st_find(st, "embeddings.cls_token");
    CHECK(t && t->dtype == WGNN__ST_BF16 && strcmp(t->dtype_name, "BF16") == 0 && t->nbytes == 64,
          "vit_bf16 cls_token");
    wgnn__st_close(st);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/wgnn_st_XXXXXX");
    if (mkdtemp(g_dir) == NULL) {
        fprintf(stderr, "mkdtemp failed\n");
        return 1;
    }
    test_valid();
    test_many();
    test_rounding();
    test_hostile();
    test_files();
    test_fixtures();
    rm_tree(g_dir);
    return tu_finish();
}
