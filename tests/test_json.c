/* test_json.c - JSON loading and typed lookups (src/io/json.c). No GPU. */
#include "io/json.h"
#include "testutil.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef WGNN_SOURCE_DIR
#define WGNN_SOURCE_DIR "."
#endif

static const char *CONFIG =
    "{\n"
    "  \"architectures\": [\"SiglipModel\"],\n"
    "  \"model_type\": \"siglip\",\n"
    "  \"num_hidden_layers\": 2,\n"
    "  \"layers_float\": 2.0,\n"
    "  \"bad_layers\": 2.5,\n"
    "  \"str_layers\": \"abc\",\n"
    "  \"huge\": 1e300,\n"
    "  \"tie\": true,\n"
    "  \"nothing\": null,\n"
    "  \"image_mean\": [0.5, 0.5, 0.5],\n"
    "  \"mixed\": [0.5, \"x\", 0.5],\n"
    "  \"vision_config\": {\n"
    "    \"hidden_size\": 32,\n"
    "    \"layer_norm_eps\": 1e-06,\n"
    "    \"hidden_act\": \"gelu_pytorch_tanh\",\n"
    "    \"patch\": {\"size\": 8}\n"
    "  },\n"
    "  \"text_config\": 7\n"
    "}\n";

static wgnn__json g_j;

static void expect_err(const char *what, wgnn_status s, const char *err, const char *s1, const char *s2)
{
    CHECK(s == WGNN_ERR_FORMAT, "%s: status %d: %s", what, s, err);
    CHECK(strncmp(err, "config.json: ", 13) == 0, "%s: message names the file: %s", what, err);
    CHECK(!s1 || strstr(err, s1), "%s: message lacks '%s': %s", what, s1, err);
    CHECK(!s2 || strstr(err, s2), "%s: message lacks '%s': %s", what, s2, err);
}

static void test_lookups(void)
{
    char err[512] = "";
    wgnn_status s = wgnn__json_parse(CONFIG, strlen(CONFIG), "config.json", &g_j, err, sizeof err);
    CHECK(s == WGNN_OK, "parse: %s", err);
    if (s != WGNN_OK)
        return;
    CHECK(wgnn__json_has(&g_j, "vision_config.hidden_size"), "has nested");
    CHECK(!wgnn__json_has(&g_j, "vision_config.nope"), "has absent");
    CHECK(!wgnn__json_has(&g_j, "text_config.hidden_size"), "through a non-object");
    CHECK(wgnn__json_get(&g_j, "vision_config.patch.size") != NULL, "three levels");
    CHECK(wgnn__json_get(&g_j, "") == NULL && wgnn__json_get(&g_j, "vision_config.") == NULL, "empty segment");
    CHECK(wgnn__json_get(NULL, "x") == NULL && wgnn__json_get(&g_j, NULL) == NULL, "NULLs");

    int64_t i = 0;
    s = wgnn__json_int(&g_j, "num_hidden_layers", false, 0, 1, 1000, &i, err, sizeof err);
    CHECK(s == WGNN_OK && i == 2, "int: %s", err);
    s = wgnn__json_int(&g_j, "layers_float", false, 0, 1, 1000, &i, err, sizeof err);
    CHECK(s == WGNN_OK && i == 2, "2.0 is an integer: %s", err);
    s = wgnn__json_int(&g_j, "vision_config.hidden_size", false, 0, 1, INT64_MAX, &i, err, sizeof err);
    CHECK(s == WGNN_OK && i == 32, "nested int: %s", err);
    s = wgnn__json_int(&g_j, "vision_config.patch.size", false, 0, 1, 64, &i, err, sizeof err);
    CHECK(s == WGNN_OK && i == 8, "deep int: %s", err);

    s = wgnn__json_int(&g_j, "bad_layers", false, 0, 1, 1000, &i, err, sizeof err);
    expect_err("2.5", s, err, "bad_layers: expected an integer in [1, 1000], got 2.5", NULL);
    s = wgnn__json_int(&g_j, "str_layers", false, 0, 1, 1000, &i, err, sizeof err);
    expect_err("string", s, err, "str_layers: expected an integer in [1, 1000], got \"abc\"", NULL);
    s = wgnn__json_int(&g_j, "num_hidden_layers", false, 0, 3, 1000, &i, err, sizeof err);
    expect_err("below", s, err, "num_hidden_layers: expected an integer in [3, 1000], got 2", NULL);
    s = wgnn__json_int(&g_j, "vision_config.hidden_size", false, 0, 1, 16, &i, err, sizeof err);
    expect_err("above", s, err, "vision_config.hidden_size", "got 32");
    s = wgnn__json_int(&g_j, "huge", false, 0, INT64_MIN, INT64_MAX, &i, err, sizeof err);
    expect_err("1e300", s, err, "expected an integer, got 1e+300", NULL);
    s = wgnn__json_int(&g_j, "str_layers", false, 0, 1, INT64_MAX, &i, err, sizeof err);
    expect_err("positive", s, err, "expected a positive integer, got \"abc\"", NULL);
    s = wgnn__json_int(&g_j, "tie", false, 0, 0, INT64_MAX, &i, err, sizeof err);
    expect_err("bool as int", s, err, "expected a non-negative integer, got true", NULL);
    s = wgnn__json_int(&g_j, "nothing", false, 0, 0, 10, &i, err, sizeof err);
    expect_err("null as int", s, err, "got null", NULL);
    s = wgnn__json_int(&g_j, "vision_config", false, 0, 0, 10, &i, err, sizeof err);
    expect_err("object as int", s, err, "got an object", NULL);
    s = wgnn__json_int(&g_j, "image_mean", false, 0, 0, 10, &i, err, sizeof err);
    expect_err("array as int", s, err, "got an array", NULL);

    s = wgnn__json_int(&g_j, "num_layers", false, 0, 1, 1000, &i, err, sizeof err);
    expect_err("missing", s, err, "num_layers: missing", "[1, 1000]");
    s = wgnn__json_int(&g_j, "vision_config.num_layers", false, 0, 1, 1000, &i, err, sizeof err);
    expect_err("missing nested", s, err, "vision_config.num_layers: missing", NULL);
    s = wgnn__json_int(&g_j, "text_config.hidden_size", false, 0, 1, 1000, &i, err, sizeof err);
    expect_err("through a number", s, err, "text_config.hidden_size: missing", "text_config is 7, not an object");
    i = 0;
    s = wgnn__json_int(&g_j, "num_layers", true, 12, 1, 1000, &i, err, sizeof err);
    CHECK(s == WGNN_OK && i == 12 && err[0] == '\0', "default: %s", err);
    s = wgnn__json_int(&g_j, "str_layers", true, 12, 1, 1000, &i, err, sizeof err);
    expect_err("default does not hide a wrong type", s, err, "\"abc\"", NULL);

    double d = 0;
    s = wgnn__json_num(&g_j, "vision_config.layer_norm_eps", false, 0, 0, 1, &d, err, sizeof err);
    CHECK(s == WGNN_OK && d == 1e-6, "num: %s", err);
    s = wgnn__json_num(&g_j, "bad_layers", false, 0, 0, 1, &d, err, sizeof err);
    expect_err("num range", s, err, "bad_layers: expected a number in [0, 1], got 2.5", NULL);
    s = wgnn__json_num(&g_j, "str_layers", false, 0, 0, INFINITY, &d, err, sizeof err);
    expect_err("num type", s, err, "expected a number >= 0, got \"abc\"", NULL);
    s = wgnn__json_num(&g_j, "eps", true, 1e-5, 0, 1, &d, err, sizeof err);
    CHECK(s == WGNN_OK && d == 1e-5, "num default");
    s = wgnn__json_num(&g_j, "eps", false, 0, -INFINITY, INFINITY, &d, err, sizeof err);
    expect_err("num missing", s, err, "eps: missing", NULL);

    bool b = false;
    s = wgnn__json_bool(&g_j, "tie", false, false, &b, err, sizeof err);
    CHECK(s == WGNN_OK && b, "bool");
    s = wgnn__json_bool(&g_j, "qkv_bias", true, true, &b, err, sizeof err);
    CHECK(s == WGNN_OK && b, "bool default");
    s = wgnn__json_bool(&g_j, "num_hidden_layers", true, true, &b, err, sizeof err);
    expect_err("bool type", s, err, "num_hidden_layers: expected true or false, got 2", NULL);

    char str[32];
    s = wgnn__json_str(&g_j, "vision_config.hidden_act", NULL, str, sizeof str, err, sizeof err);
    CHECK(s == WGNN_OK && strcmp(str, "gelu_pytorch_tanh") == 0, "str: %s", err);
    s = wgnn__json_str(&g_j, "hidden_act", "gelu", str, sizeof str, err, sizeof err);
    CHECK(s == WGNN_OK && strcmp(str, "gelu") == 0, "str default");
    s = wgnn__json_str(&g_j, "hidden_act", NULL, str, sizeof str, err, sizeof err);
    expect_err("str missing", s, err, "hidden_act: missing", NULL);
    s = wgnn__json_str(&g_j, "vision_config.hidden_act", NULL, str, 8, err, sizeof err);
    expect_err("str truncated", s, err, "vision_config.hidden_act", "too long");
    s = wgnn__json_str(&g_j, "num_hidden_layers", NULL, str, sizeof str, err, sizeof err);
    expect_err("str type", s, err, "expected a string, got 2", NULL);

    double v[4] = {0};
    int got = 0;
    s = wgnn__json_nums(&g_j, "image_mean", v, 3, 0, NULL, err, sizeof err);
    CHECK(s == WGNN_OK && v[0] == 0.5 && v[2] == 0.5, "nums exact: %s", err);
    s = wgnn__json_nums(&g_j, "image_mean", v, 0, 4, &got, err, sizeof err);
    CHECK(s == WGNN_OK && got == 3, "nums up to cap: %s", err);
    s = wgnn__json_nums(&g_j, "image_mean", v, 4, 0, NULL, err, sizeof err);
    expect_err("nums count", s, err, "image_mean: expected an array of 4 numbers, got 3 elements", NULL);
    s = wgnn__json_nums(&g_j, "image_mean", v, 0, 2, &got, err, sizeof err);
    expect_err("nums over cap", s, err, "1 to 2 numbers", NULL);
    s = wgnn__json_nums(&g_j, "mixed", v, 3, 0, NULL, err, sizeof err);
    expect_err("nums element", s, err, "mixed[1]: expected a number, got \"x\"", NULL);
    s = wgnn__json_nums(&g_j, "tie", v, 3, 0, NULL, err, sizeof err);
    expect_err("nums type", s, err, "got true", NULL);
    s = wgnn__json_nums(&g_j, "image_std", v, 3, 0, NULL, err, sizeof err);
    expect_err("nums missing", s, err, "image_std: missing", NULL);
    wgnn__json_free(&g_j);
    wgnn__json_free(&g_j);
}

static void expect_parse_err(const char *what, const char *text, const char *s1)
{
    wgnn__json j;
    char err[512] = "";
    wgnn_status s = wgnn__json_parse(text, strlen(text), "config.json", &j, err, sizeof err);
    CHECK(s == WGNN_ERR_FORMAT && j.root == NULL, "%s: status %d: %s", what, s, err);
    CHECK(strstr(err, "config.json: ") == err && strstr(err, s1), "%s: message lacks '%s': %s", what, s1, err);
    wgnn__json_free(&j);
}

static void test_parse_errors(void)
{
    expect_parse_err("trailing comma", "{\n  \"a\": 1,\n  \"b\": 2,\n}\n", "line 4, column");
    expect_parse_err("bad literal", "{\"a\": tru}", "line 1, column 7");
    expect_parse_err("unterminated", "{\n \"a\": \"xyz", "line 2");
    expect_parse_err("empty", "", "empty");
    expect_parse_err("trailing text", "{\"a\": 1}\n\n  x", "line 3, column 3");
    expect_parse_err("two values", "{} {}", "after the JSON value");
    /* a key twice in one object, at any depth: readers differ on which wins */
    expect_parse_err("duplicate key", "{\"num_hidden_layers\": 2, \"x\": 0, \"num_hidden_layers\": 1}",
                     "key \"num_hidden_layers\" stands twice in one object");
    expect_parse_err("nested duplicate key", "{\"a\": [1, {\"b\": {\"c\": 1, \"c\": 2}}]}", "key \"c\" stands twice");
    /* a NUL escape would cut a C string short: "model\u0000x" read as "model" */
    expect_parse_err("NUL in a value", "{\"a\": 1,\n \"f\": \"model\\u0000.bin\"}", "\\u0000 (a NUL character) at line 2, column 13");
    expect_parse_err("NUL in a key", "{\"a\\u0000b\": 1}", "NUL");
    /* raw control characters in strings (JSON wants them escaped) and bytes
     * that are not UTF-8 anywhere: Hugging Face's readers refuse both */
    expect_parse_err("raw tab in a string", "{\"a\": \"x\ty\"}", "raw control character 0x09 at line 1, column 9");
    expect_parse_err("raw control after an escaped quote", "{\"a\": \"\\\"\x01\"}", "raw control character 0x01");
    expect_parse_err("invalid UTF-8 in a value", "{\"a\": \"\xff\"}", "not valid UTF-8 at line 1, column 8 (byte 0xff)");
    expect_parse_err("a lone continuation in a key", "{\"\x9f\x98\x80\": 1}", "not valid UTF-8");
    expect_parse_err("a UTF-8 surrogate", "{\"a\": \"\xed\xa0\x80\"}", "not valid UTF-8");
    {
        wgnn__json j;
        char e[256];
        const char raw_nul[] = "{\"a\": \"<|end\0oftext|>\"}";
        CHECK(wgnn__json_parse(raw_nul, sizeof raw_nul - 1, "x.json", &j, e, sizeof e) == WGNN_ERR_FORMAT &&
                  strstr(e, "raw control character 0x00"),
              "a raw NUL in a string: %s", e);
        const char *ok = "{\"a\": \"caf\xc3\xa9 \xf0\x9f\x98\x80\",\n\t\"b\": 1}";
        CHECK(wgnn__json_parse(ok, strlen(ok), "x.json", &j, e, sizeof e) == WGNN_OK, "UTF-8 and whitespace: %s", e);
        wgnn__json_free(&j);
    }
    {
        wgnn__json j;
        char e[256];
        const char *t = "{\"re\": \"\\\\u0000 \\u0041\"}"; /* an escaped backslash, then u0000: no NUL */
        CHECK(wgnn__json_parse(t, strlen(t), "x.json", &j, e, sizeof e) == WGNN_OK, "\\\\u0000 is no NUL: %s", e);
        wgnn__json_free(&j);
    }
    {
        wgnn__json j;
        char e[256];
        CHECK(wgnn__json_parse("{\"a\": {\"k\": 1}, \"b\": {\"k\": 2}}", 30, "x.json", &j, e, sizeof e) == WGNN_OK,
              "one key in two objects is fine: %s", e);
        wgnn__json_free(&j);
    }
    /* deep nesting is refused by cJSON, not a crash */
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 1);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    expect_parse_err("deep nesting", deep, "invalid JSON");
    free(deep);
    /* length-bounded: bytes past len are not read */
    wgnn__json j;
    char err[256];
    CHECK(wgnn__json_parse("{\"a\": 1}garbage", 8, "x.json", &j, err, sizeof err) == WGNN_OK, "bounded: %s", err);
    wgnn__json_free(&j);
    /* whitespace after the value is fine */
    CHECK(wgnn__json_parse(" [1] \r\n\t", 8, "x.json", &j, err, sizeof err) == WGNN_OK, "ws: %s", err);
    wgnn__json_free(&j);
}

static void test_files(void)
{
    wgnn__json j;
    char err[1024] = "";
    wgnn_status s = wgnn__json_load(WGNN_SOURCE_DIR "/tests/models/siglip/config.json", 0, &j, err, sizeof err);
    CHECK(s == WGNN_OK, "siglip config: %s", err);
    int64_t v = 0;
    char str[64];
    CHECK(wgnn__json_int(&j, "num_hidden_layers", false, 0, 1, 1000, &v, err, sizeof err) == WGNN_OK && v == 2,
          "siglip layers: %s", err);
    CHECK(wgnn__json_str(&j, "model_type", NULL, str, sizeof str, err, sizeof err) == WGNN_OK &&
              strcmp(str, "siglip_vision_model") == 0,
          "siglip model_type: %s", err);
    s = wgnn__json_int(&j, "vision_config.hidden_size", false, 0, 1, 1000, &v, err, sizeof err);
    CHECK(s == WGNN_ERR_FORMAT && strstr(err, "siglip/config.json: vision_config.hidden_size: missing"), "%s", err);
    wgnn__json_free(&j);

    s = wgnn__json_load(WGNN_SOURCE_DIR "/tests/models/siglip/config.json", 100, &j, err, sizeof err);
    CHECK(s == WGNN_ERR_LIMIT && strstr(err, "more than the 100 allowed"), "size cap: %s", err);
    s = wgnn__json_load(WGNN_SOURCE_DIR "/tests/models/siglip", 0, &j, err, sizeof err);
    CHECK(s == WGNN_ERR_IO && strstr(err, "directory"), "folder: %s", err);
    s = wgnn__json_load("/dev/null", 0, &j, err, sizeof err);
    CHECK(s == WGNN_ERR_IO && strstr(err, "/dev/null") && strstr(err, "regular"), "device: %s", err);
    s = wgnn__json_load("/nonexistent/config.json", 0, &j, err, sizeof err);
    CHECK(s == WGNN_ERR_IO && strstr(err, "/nonexistent/config.json") && strstr(err, "No such file"), "absent: %s",
          err);

    char path[] = "/tmp/wgnn_json_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        const char *bad = "{\n  \"a\": 1\n  \"b\": 2\n}\n";
        CHECK(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad), "write");
        close(fd);
        s = wgnn__json_load(path, 0, &j, err, sizeof err);
        CHECK(s == WGNN_ERR_FORMAT && strstr(err, path) && strstr(err, "line 3, column 3"), "file parse error: %s",
              err);
        unlink(path);
    }
}

int main(void)
{
    test_lookups();
    test_parse_errors();
    test_files();
    return tu_finish();
}
