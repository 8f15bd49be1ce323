/* test_image.c - PNG / JPEG decoding, Pillow-exact resizing, preprocessor
 * configs and HF preprocessing (src/io/image.c), hostile inputs.
 *
 * References come from Pillow (tests/data/images/make_images.py) and from
 * the model fixtures (tests/models/{vit,siglip}/image_pixel_values.npy). */
#include "io/image.h"
#include "testutil.h"

#include <unistd.h>

#define DATA WGNN_SOURCE_DIR "/tests/data/images/"
#define MODELS WGNN_SOURCE_DIR "/tests/models/"

static char err[WGNN__ERR_LEN];

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = b ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    return b;
}

static wgnn_status load(const char *name, wgnn__image *img)
{
    char path[1024];
    snprintf(path, sizeof path, DATA "%s", name);
    wgnn_status s = wgnn__image_load(path, img, err, sizeof err);
    if (s != WGNN_OK)
        fprintf(stderr, "  %s\n", err);
    return s;
}

/* Pixels (bytes) that differ, and the largest difference. */
static size_t diff(const wgnn__image *a, const wgnn__image *b, int *max)
{
    *max = 0;
    if (a->w != b->w || a->h != b->h)
        return (size_t)-1;
    size_t n = 0;
    for (size_t i = 0; i < (size_t)a->w * a->h * 3; i++) {
        int d = abs((int)a->rgb[i] - (int)b->rgb[i]);
        n += d != 0;
        if (d > *max)
            *max = d;
    }
    return n;
}

static void test_decode(void)
{
    const char *png[] = {"grey", "grey_alpha", "rgba", "palette", "palette_trns", "grey16", "rgb16"};
    for (size_t i = 0; i < sizeof png / sizeof png[0]; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "dec_%s.png", png[i]);
        snprintf(b, sizeof b, "want_%s.png", png[i]);
        wgnn__image got, want;
        CHECK(load(a, &got) == WGNN_OK, "%s", a);
        CHECK(load(b, &want) == WGNN_OK, "%s", b);
        int max;
        size_t n = diff(&got, &want, &max);
        CHECK(got.w == 9 && got.h == 6 && n == 0, "%s: %d x %d, %zu bytes differ (max %d)", png[i], got.w, got.h, n,
              max);
        wgnn__image_free(&got);
        wgnn__image_free(&want);
    }
    /* stb_image's JPEG decoder (IDCT, chroma upsampling) is not libjpeg's:
     * close to Pillow's decode, not equal */
    const char *jpg[] = {"jpeg", "jpeg_progressive", "jpeg_444", "jpeg_grey"};
    for (size_t i = 0; i < sizeof jpg / sizeof jpg[0]; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "dec_%s.jpg", jpg[i]);
        snprintf(b, sizeof b, "want_%s.png", jpg[i]);
        wgnn__image got, want;
        CHECK(load(a, &got) == WGNN_OK, "%s", a);
        CHECK(load(b, &want) == WGNN_OK, "%s", b);
        int max;
        size_t n = diff(&got, &want, &max);
        CHECK(got.w == 24 && got.h == 16 && max <= 8, "%s: %d x %d, %zu bytes differ from Pillow's decode (max %d)",
              jpg[i], got.w, got.h, n, max);
        printf("  %s: %zu of %d bytes differ from Pillow's decode, max %d\n", jpg[i], n, 24 * 16 * 3, max);
        wgnn__image_free(&got);
        wgnn__image_free(&want);
    }
}

static void test_resize(void)
{
    static const int sizes[][2] = {{7, 5}, {11, 13}, {40, 31}, {23, 9}, {31, 17}, {1, 1}, {64, 3}, {3, 50}};
    static const char *names[] = {"nearest", "lanczos", "bilinear", "bicubic", "box", "hamming"};
    wgnn__image src;
    CHECK(load("src.png", &src) == WGNN_OK, "src.png");
    for (int f = 0; f <= 5; f++) {
        size_t bad = 0;
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            char name[64];
            snprintf(name, sizeof name, "rs_%d_%dx%d.png", f, sizes[i][0], sizes[i][1]);
            wgnn__image want, got;
            CHECK(load(name, &want) == WGNN_OK, "%s", name);
            wgnn_status s = wgnn__image_resize(&src, sizes[i][0], sizes[i][1], f, &got, err, sizeof err);
            CHECK(s == WGNN_OK, "%s: %s", name, err);
            int max;
            size_t n = diff(&got, &want, &max);
            CHECK(n == 0, "%s (%s): %zu bytes differ from Pillow (max %d)", name, names[f], n, max);
            bad += n != 0;
            wgnn__image_free(&want);
            wgnn__image_free(&got);
        }
        printf("  resize %-8s: %s Pillow on %zu sizes\n", names[f], bad ? "DIFFERS from" : "bit-exact with",
               sizeof sizes / sizeof sizes[0]);
    }
    wgnn__image out;
    CHECK(wgnn__image_resize(&src, 0, 5, 2, &out, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT, "w 0");
    CHECK(wgnn__image_resize(&src, 5, 5, 6, &out, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT && strstr(err, "6"),
          "filter 6: %s", err);
    CHECK(wgnn__image_resize(&src, 20000, 5, 2, &out, err, sizeof err) == WGNN_ERR_LIMIT, "w 20000: %s", err);
    CHECK(out.rgb == NULL, "empty after failure");
    /* same size: a copy */
    CHECK(wgnn__image_resize(&src, src.w, src.h, 3, &out, err, sizeof err) == WGNN_OK &&
              memcmp(out.rgb, src.rgb, (size_t)src.w * src.h * 3) == 0,
          "same size");
    wgnn__image_free(&out);
    wgnn__image_free(&src);
}

/* Runs img through the config at cfg_path and compares with the .npy. */
static void check_preprocess(const char *cfg_path, const char *npy_path, const char *img_path, double tol,
                             size_t max_off, double off_tol)
{
    wgnn__preproc pp;
    wgnn__image img;
    wgnn_npy ref;
    wgnn_status s = wgnn__preproc_load(cfg_path, &pp, err, sizeof err);
    CHECK(s == WGNN_OK, "%s", err);
    s = wgnn__image_load(img_path, &img, err, sizeof err);
    CHECK(s == WGNN_OK, "%s", err);
    s = wgnn_npy_load(npy_path, &ref, err, sizeof err);
    CHECK(s == WGNN_OK, "%s", err);
    if (s != WGNN_OK || img.rgb == NULL)
        return;
    int ow, oh;
    wgnn__preproc_out_size(&pp, img.w, img.h, &ow, &oh);
    CHECK(ref.rank == 4 && ref.dims[0] == 1 && ref.dims[1] == 3 && ref.dims[2] == oh && ref.dims[3] == ow,
          "%s: %d x %d vs reference", npy_path, ow, oh);
    if (ref.rank == 4 && ref.dims[2] == oh && ref.dims[3] == ow) {
        float *out = malloc((size_t)ow * oh * 3 * sizeof *out);
        s = wgnn__image_preprocess(&img, &pp, out, ow, oh, err, sizeof err);
        CHECK(s == WGNN_OK, "%s", err);
        const float *r = ref.data;
        double max = 0;
        size_t off = 0, exact = 0;
        for (size_t i = 0; i < (size_t)ow * oh * 3; i++) {
            double d = fabs((double)out[i] - r[i]);
            if (d > max)
                max = d;
            off += d > tol;
            exact += d == 0;
        }
        CHECK(off <= max_off && max <= off_tol, "%s: %zu values off by more than %g (max %g)", npy_path, off, tol,
              max);
        printf("  %s: %zu of %d values exact, %zu past %g, max |diff| %g\n", npy_path + strlen(WGNN_SOURCE_DIR) + 1,
               exact, ow * oh * 3, off, tol, max);
        free(out);
    }
    wgnn_npy_free(&ref);
    wgnn__image_free(&img);
}

static void test_preprocess(void)
{
    /* The model fixtures were made by transformers 5's ViTImageProcessor and
     * SiglipImageProcessor, which resize with torchvision, not PIL: up to one
     * uint8 level differs from Pillow in a few pixels (135 of 3072 values for
     * bilinear, 17 for bicubic). Allowed here: that many values off by at
     * most one level (1/255/std); all others within 1e-6. */
    check_preprocess(MODELS "vit/preprocessor_config.json", MODELS "vit/image_pixel_values.npy", MODELS "image.png",
                     1e-6, 135, 1.0001 / 255 / 0.2);
    check_preprocess(MODELS "siglip/preprocessor_config.json", MODELS "siglip/image_pixel_values.npy",
                     MODELS "image.png", 1e-6, 17, 1.0001 / 255 / 0.5);
    /* transformers' slow path on Pillow (make_images.py): exact */
    check_preprocess(DATA "pp_short.json", DATA "pp_short.npy", MODELS "image.png", 0, 0, 0);
    check_preprocess(DATA "pp_nearest.json", DATA "pp_nearest.npy", MODELS "image.png", 0, 0, 0);
}

static wgnn_status cfg_text(const char *dir, const char *text, wgnn__preproc *pp)
{
    char path[512];
    snprintf(path, sizeof path, "%s/preprocessor_config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return WGNN_ERR_IO;
    fputs(text, f);
    fclose(f);
    return wgnn__preproc_load(path, pp, err, sizeof err);
}

static void test_config(void)
{
    char dir[] = "/tmp/test_image_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    wgnn__preproc pp;
    CHECK(cfg_text(dir, "{}", &pp) == WGNN_OK, "{}: %s", err);
    CHECK(pp.do_resize && pp.width == 224 && pp.height == 224 && pp.resample == 2 && pp.do_rescale &&
              fabs(pp.rescale_factor - 1 / 255.0) < 1e-15 && pp.do_normalize && pp.mean[1] == 0.5 && pp.std[2] == 0.5,
          "defaults");
    CHECK(cfg_text(dir, "{\"size\": 384, \"image_mean\": 0.1, \"image_std\": [1, 2, 3], \"do_resize\": false}", &pp) ==
                  WGNN_OK &&
              pp.width == 384 && pp.height == 384 && pp.mean[2] == 0.1 && pp.std[1] == 2 && !pp.do_resize,
          "size int, one mean: %s", err);
    int ow, oh;
    wgnn__preproc_out_size(&pp, 50, 40, &ow, &oh);
    CHECK(ow == 50 && oh == 40, "do_resize false keeps the size");
    CHECK(cfg_text(dir, "{\"size\": {\"shortest_edge\": 224}}", &pp) == WGNN_OK && pp.shortest_edge == 224, "se");
    wgnn__preproc_out_size(&pp, 640, 480, &ow, &oh);
    CHECK(ow == 298 && oh == 224, "shortest_edge 640x480 -> %d x %d", ow, oh);
    wgnn__preproc_out_size(&pp, 100, 333, &ow, &oh);
    CHECK(ow == 224 && oh == 745, "shortest_edge 100x333 -> %d x %d", ow, oh);
    /* the processor's default filter: SigLIP's bicubic, ViT's bilinear; a resample given wins */
    CHECK(cfg_text(dir, "{\"image_processor_type\": \"SiglipImageProcessor\"}", &pp) == WGNN_OK && pp.resample == 3,
          "SigLIP default resample: %d", pp.resample);
    CHECK(cfg_text(dir, "{\"image_processor_type\": \"ViTImageProcessor\"}", &pp) == WGNN_OK && pp.resample == 2,
          "ViT default resample: %d", pp.resample);
    CHECK(cfg_text(dir, "{\"image_processor_type\": \"SiglipImageProcessor\", \"resample\": 2}", &pp) == WGNN_OK &&
              pp.resample == 2,
          "SigLIP with resample 2: %d", pp.resample);

    static const struct {
        const char *json;
        wgnn_status st;
        const char *key; /* the message must name it */
    } bad[] = {
        {"{\"size\": {\"height\": -3, \"width\": 32}}", WGNN_ERR_FORMAT, "size.height"},
        {"{\"size\": {\"height\": 32, \"width\": 2.5}}", WGNN_ERR_FORMAT, "size.width"},
        {"{\"size\": {\"height\": 32}}", WGNN_ERR_FORMAT, "size"},
        {"{\"size\": \"big\"}", WGNN_ERR_FORMAT, "size"},
        {"{\"image_std\": [0.5, 0, 0.5]}", WGNN_ERR_FORMAT, "image_std"},
        {"{\"image_std\": 0}", WGNN_ERR_FORMAT, "image_std"},
        {"{\"image_mean\": [0.5, 0.5]}", WGNN_ERR_FORMAT, "image_mean"},
        {"{\"image_mean\": [0.5, \"a\", 0.5]}", WGNN_ERR_FORMAT, "image_mean"},
        {"{\"resample\": 9}", WGNN_ERR_FORMAT, "resample"},
        {"{\"resample\": \"bicubic\"}", WGNN_ERR_FORMAT, "resample"},
        {"{\"do_resize\": \"yes\"}", WGNN_ERR_FORMAT, "do_resize"},
        {"{\"do_normalize\": 1}", WGNN_ERR_FORMAT, "do_normalize"},
        {"{\"rescale_factor\": -1}", WGNN_ERR_FORMAT, "rescale_factor"},
        {"{\"rescale_factor\": 1e300}", WGNN_ERR_FORMAT, "FLT_MAX / 255"},
        {"{\"image_std\": [0.5, 1e-300, 0.5]}", WGNN_ERR_FORMAT, "not zero or subnormal"},
        {"{\"image_mean\": 1e39}", WGNN_ERR_FORMAT, "finite float32"},
        {"{\"size\": {\"height\": 16384, \"width\": 16384}}", WGNN_ERR_LIMIT, "268435456 pixels, past the limit"},
        {"{\"do_center_crop\": true}", WGNN_ERR_UNSUPPORTED, "do_center_crop"},
        {"[1, 2]", WGNN_ERR_FORMAT, "object"},
        {"{\"do_resize\": true, \"do_resize\": false}", WGNN_ERR_FORMAT, "\"do_resize\" stands twice"},
        {"{\"resample\": 3, \"image_processor_type\": \"ViT\\u0000ImageProcessor\"}", WGNN_ERR_FORMAT, "NUL character"},
        {"{\"size\": {\"height\": 32, ", WGNN_ERR_FORMAT, "invalid JSON at line 1"},
        {"{\"resample\": 3}\n{}", WGNN_ERR_FORMAT, "unexpected text after the JSON value at line 2"},
        {"", WGNN_ERR_FORMAT, "JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wgnn_status s = cfg_text(dir, bad[i].json, &pp);
        CHECK(s == bad[i].st && strstr(err, bad[i].key) && strncmp(err, "preprocessor config: /tmp/", 26) == 0,
              "%s: status %d, '%s'", bad[i].json, (int)s, err);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/none.json", dir);
    CHECK(wgnn__preproc_load(path, &pp, err, sizeof err) == WGNN_ERR_IO && strstr(err, "No such file"), "missing: %s",
          err);
    CHECK(wgnn__preproc_load(dir, &pp, err, sizeof err) == WGNN_ERR_IO && strstr(err, "directory"), "dir: %s", err);
    snprintf(path, sizeof path, "%s/preprocessor_config.json", dir);
    unlink(path);
    rmdir(dir);
}

static void expect_refused(const void *buf, size_t len, wgnn_status want, const char *what, const char *needle)
{
    wgnn__image img;
    wgnn_status s = wgnn__image_decode(buf, len, "mem", &img, err, sizeof err);
    CHECK(s == want && img.rgb == NULL && img.w == 0 && strncmp(err, "image: mem: ", 12) == 0 &&
              (!needle || strstr(err, needle)),
          "%s: status %d, '%s'", what, (int)s, err);
    if (s == WGNN_OK)
        wgnn__image_free(&img);
}

static void test_hostile(void)
{
    wgnn__image img;
    expect_refused("", 0, WGNN_ERR_FORMAT, "empty", "empty");
    expect_refused("GIF89a\1\0\1\0", 10, WGNN_ERR_FORMAT, "gif", "not a PNG or JPEG");
    unsigned char rnd[4096];
    tu_seed(5);
    for (int t = 0; t < 200; t++) {
        for (size_t i = 0; i < sizeof rnd; i++)
            rnd[i] = (unsigned char)tu_next();
        size_t n = 1 + tu_next() % sizeof rnd;
        if (t % 2) { /* with a PNG or JPEG magic, so that stb parses it */
            memcpy(rnd, t % 4 == 1 ? "\x89PNG\r\n\x1a\n" : "\xff\xd8\xff", t % 4 == 1 ? 8 : 3);
        }
        wgnn_status s = wgnn__image_decode(rnd, n, "mem", &img, err, sizeof err);
        CHECK(s != WGNN_OK || img.rgb != NULL, "random %d", t);
        wgnn__image_free(&img);
    }
    /* every truncation of a PNG and of the JPEGs */
    const char *files[] = {"src.png", "dec_rgb16.png", "dec_palette_trns.png", "dec_jpeg.jpg", "dec_jpeg_progressive.jpg"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, DATA "%s", files[f]);
        size_t len = 0;
        unsigned char *b = slurp(path, &len);
        CHECK(b && len > 100, "%s", path);
        size_t refused = 0;
        for (size_t n = 0; b && n < len; n++) {
            unsigned char *cut = malloc(n ? n : 1); /* exact size: ASan sees overreads */
            memcpy(cut, b, n);
            wgnn_status s = wgnn__image_decode(cut, n, "mem", &img, err, sizeof err);
            refused += s != WGNN_OK;
            if (s != WGNN_OK)
                CHECK(img.rgb == NULL && err[0], "%s cut at %zu", files[f], n);
            wgnn__image_free(&img);
            free(cut);
        }
        /* every cut PNG fails (chunks are walked before stb sees them);
         * the JPEGs here fail too, though stb would decode a JPEG cut in
         * its entropy data with zeros for the rest */
        printf("  %s: %zu of %zu truncations refused\n", files[f], refused, len);
        if (strstr(files[f], ".png"))
            CHECK(refused == len, "%s: only %zu of %zu truncations refused", files[f], refused, len);
        free(b);
    }
    /* declared sizes past the limits, refused before decoding */
    CHECK(load("huge_ihdr.png", &img) == WGNN_ERR_LIMIT, "100000 x 100000: %s", err);
    CHECK(strstr(err, "100000") != NULL, "%s", err);
    size_t len = 0;
    unsigned char *b = slurp(DATA "src.png", &len);
    if (b) {
        static const unsigned sides[][2] = {{20000, 10}, {10, 16385}, {10000, 10000}, {0, 5}};
        for (size_t i = 0; i < 4; i++) { /* stb does not check CRCs */
            for (int k = 0; k < 4; k++) {
                b[16 + k] = (unsigned char)(sides[i][0] >> (24 - 8 * k));
                b[20 + k] = (unsigned char)(sides[i][1] >> (24 - 8 * k));
            }
            wgnn_status s = wgnn__image_decode(b, len, "mem", &img, err, sizeof err);
            CHECK(s == (i == 3 ? WGNN_ERR_FORMAT : WGNN_ERR_LIMIT) && img.rgb == NULL, "%u x %u: %d %s", sides[i][0],
                  sides[i][1], (int)s, err);
        }
        free(b);
    }
    b = slurp(DATA "dec_jpeg.jpg", &len);
    for (size_t i = 2; b && i + 9 < len; i++) {
        if (b[i] == 0xff && b[i + 1] == 0xc0) { /* SOF0: height, width at +5, +7 */
            b[i + 5] = b[i + 7] = 0x9c;
            b[i + 6] = b[i + 8] = 0x40;
            wgnn_status s = wgnn__image_decode(b, len, "mem", &img, err, sizeof err);
            CHECK(s == WGNN_ERR_LIMIT && strstr(err, "40000 x 40000"), "JPEG 40000 x 40000: %d %s", (int)s, err);
            break;
        }
    }
    free(b);
    /* files that are not files */
    CHECK(wgnn__image_load(DATA, &img, err, sizeof err) == WGNN_ERR_IO && strstr(err, "directory"), "dir: %s", err);
    CHECK(wgnn__image_load("/dev/zero", &img, err, sizeof err) == WGNN_ERR_IO && strstr(err, "regular"), "%s", err);
    CHECK(wgnn__image_load(DATA "absent.png", &img, err, sizeof err) == WGNN_ERR_IO && strstr(err, "absent.png"), "%s",
          err);
    CHECK(wgnn__image_load(DATA "make_images.py", &img, err, sizeof err) == WGNN_ERR_FORMAT && strstr(err, "magic"),
          "%s", err);
    CHECK(img.rgb == NULL, "empty after failure");
}

int main(void)
{
    test_decode();
    test_resize();
    test_preprocess();
    test_config();
    test_hostile();
    return tu_finish();
}
