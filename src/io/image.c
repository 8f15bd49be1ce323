/*
 * image.c - PNG / JPEG input (stb_image, src/io/image_stb.c) and Hugging
 * Face image-processor preprocessing: PIL's resize, then rescale and
 * normalize as transformers' numpy image_transforms do.
 *
 * Input is untrusted. A file is read only when it is a regular file of at
 * most IMAGE_MAX_FILE bytes; the magic must be PNG's or JPEG's, and the
 * dimensions stbi_info reads from the header are checked against
 * WGNN__IMAGE_MAX_SIDE / WGNN__IMAGE_MAX_PIXELS before anything is decoded,
 * so a small file cannot make stb allocate for a huge declared image.
 *
 * The resize follows Pillow's src/libImaging/Resample.c (unchanged in what
 * matters from 9.4 to 12.3): per output pixel, filter weights over
 * [center - support, center + support] with the support widened by the
 * downscale factor, normalized to sum 1 in double, then turned into 22-bit
 * fixed point; a horizontal pass over the rows the vertical pass needs, then
 * a vertical pass, each rounding to uint8; a pass is skipped when its size
 * does not change. NEAREST is not a filter in Pillow: Image.resize sends it
 * to ImagingScaleAffine (Geometry.c), which steps a double source position
 * by the scale from half a pixel in; copied here the same way, accumulation
 * included, so that the truncations match.
 */
#include "io/image.h"
#include "io/file.h" /* wgnn__file_read */
#include "io/json.h" /* wgnn__json_parse */

#include <cjson/cJSON.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_MAX_FILE ((size_t)256 << 20)  /* an image file larger than this is refused */
#define CONFIG_MAX_FILE ((size_t)1 << 20)   /* preprocessor_config.json */
#define PRECISION_BITS (32 - 8 - 2)         /* Pillow's fixed point for 8-bit resampling */
#define IMAGE_PI 3.14159265358979323846 /* M_PI, which strict C11 does not declare */

#if defined(__GNUC__) || defined(__clang__)
#define IMAGE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define IMAGE_PRINTF(f, a)
#endif

/* "what: label: message" into err; returns status. label may be NULL. */
static IMAGE_PRINTF(6, 7) wgnn_status image_fail(char *err, size_t err_len, wgnn_status status, const char *what,
                                                 const char *label, const char *fmt, ...)
{
    if (err == NULL || err_len == 0)
        return status;
    int n = label ? snprintf(err, err_len, "%s: %s: ", what, label) : snprintf(err, err_len, "%s: ", what);
    if (n >= 0 && (size_t)n < err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* Reads the regular file at path (at most max bytes) into a malloc'd buffer
 * (src/io/file.c), the reason for a failure after "what: path: ". */
static wgnn_status read_small_file(const char *path, size_t max, const char *what, unsigned char **out,
                                   size_t *out_len, char *err, size_t err_len)
{
    *out = NULL;
    *out_len = 0;
    if (path == NULL)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, what, NULL, "path is NULL");
    char why[256];
    wgnn_status s = wgnn__file_read(path, max, out, out_len, why, sizeof why);
    return s == WGNN_OK ? s : image_fail(err, err_len, s, what, path, "%s", why);
}

/* ---- decoding ------------------------------------------------------------- */

static const unsigned char PNG_MAGIC[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
static const unsigned char JPEG_MAGIC[3] = {0xff, 0xd8, 0xff};

void wgnn__image_free(wgnn__image *img)
{
    if (img == NULL)
        return;
    free(img->rgb);
    img->rgb = NULL;
    img->w = img->h = 0;
}

static wgnn_status check_size(int w, int h, const char *what, const char *label, char *err, size_t err_len)
{
    if (w < 1 || h < 1)
        return image_fail(err, err_len, WGNN_ERR_FORMAT, what, label, "size %d x %d is empty", w, h);
    if (w > WGNN__IMAGE_MAX_SIDE || h > WGNN__IMAGE_MAX_SIDE)
        return image_fail(err, err_len, WGNN_ERR_LIMIT, what, label, "size %d x %d passes the limit of %d on a side", w,
                          h, WGNN__IMAGE_MAX_SIDE);
    if ((uint64_t)w * (uint64_t)h > WGNN__IMAGE_MAX_PIXELS)
        return image_fail(err, err_len, WGNN_ERR_LIMIT, what, label,
                          "size %d x %d is %llu pixels, past the limit of %llu", w, h,
                          (unsigned long long)w * (unsigned long long)h, (unsigned long long)WGNN__IMAGE_MAX_PIXELS);
    return WGNN_OK;
}

static unsigned be16(const unsigned char *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

/* The size the header declares, read here as well as by stbi_info: stb
 * refuses headers whose image would pass 2^30 bytes with only "unknown image
 * type", and a size past the limits deserves its own message. PNG: IHDR is
 * the first chunk. JPEG: the first SOFn marker. 0 when not found. */
static int declared_size(const unsigned char *p, size_t len, int png, uint32_t *w, uint32_t *h)
{
    if (png) {
        if (len < 24 || memcmp(p + 12, "IHDR", 4) != 0)
            return 0;
        *w = (uint32_t)be16(p + 16) << 16 | be16(p + 18);
        *h = (uint32_t)be16(p + 20) << 16 | be16(p + 22);
        return 1;
    }
    size_t i = 2;
    while (i + 1 < len) {
        if (p[i] != 0xff) { /* stb skips junk between markers */
            i++;
            continue;
        }
        unsigned char m = p[i + 1];
        if (m == 0xff) { /* fill byte */
            i++;
            continue;
        }
        if (m == 0x01 || (m >= 0xd0 && m <= 0xd8)) { /* no length */
            i += 2;
            continue;
        }
        if (m == 0xd9 || m == 0xda || i + 4 > len) /* EOI, SOS: no frame header before */
            return 0;
        size_t seg = be16(p + i + 2);
        if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
            if (seg < 7 || i + 9 > len)
                return 0;
            *h = be16(p + i + 5);
            *w = be16(p + i + 7);
            return 1;
        }
        if (seg < 2)
            return 0;
        i += 2 + seg;
    }
    return 0;
}

/* Chunk lengths and the first IDAT, checked before stb sees them: stb
 * grows its IDAT buffer to a chunk's declared length before reading it, so
 * a 72-byte file declaring a 1.2 GB IDAT made it allocate 2 GB (found by
 * the fuzzer); and it adds the first IDAT's offset to a NULL buffer when
 * that chunk is empty (undefined behaviour). NULL when fine, else why not. */
static const char *png_chunks_check(const unsigned char *p, size_t len)
{
    size_t off = 8;
    int seen_data = 0;
    while (off < len) {
        if (len - off < 12)
            return "truncated (a chunk is cut short)";
        size_t n = (size_t)be16(p + off) << 16 | be16(p + off + 2);
        if (n > len - off - 12)
            return "a chunk's length runs past the end of the file (truncated?)";
        const unsigned char *type = p + off + 4;
        if (memcmp(type, "IDAT", 4) == 0) {
            if (n == 0 && !seen_data)
                return "empty IDAT chunk before the image data";
            seen_data = 1;
        }
        if (memcmp(type, "IEND", 4) == 0)
            return NULL;
        off += 12 + n;
    }
    return "truncated (no IEND chunk)";
}

/* Debian 12's stb_image (git 20220908) trusts a DHT segment's 16 code
 * counts: their sum n can reach 4080 while its tables hold 256 symbols, and
 * stbi__build_huffman / the value loop then write past them (found by
 * fuzz/fuzz_image.c; newer stb refuses n > 256). Walks the markers as stb
 * meets them (junk between markers and entropy-coded data are skipped the
 * way stb skips them, FF 00 and restart markers included, so every DHT stb
 * can reach is seen) and refuses such a table. It also refuses a scan
 * that uses a table no DHT defined before it: stb reads such a table from
 * uninitialized memory and indexes out of bounds with it (also found by the
 * fuzzer). Bytes past the end count as 0, as stb reads them. */
static int jpeg_huffman_ok(const unsigned char *p, size_t len)
{
    int defined[2][4] = {{0}};
    size_t i = 2;
    while (i + 1 < len) {
        if (p[i] != 0xff) {
            i++;
            continue;
        }
        unsigned char m = p[i + 1];
        if (m == 0xff) {
            i++;
            continue;
        }
        if (m == 0x00 || m == 0x01 || (m >= 0xd0 && m <= 0xd9)) {
            i += 2;
            continue;
        }
        if (i + 4 > len)
            return 1;
        size_t seg = be16(p + i + 2);
        if (m == 0xc4) {
            size_t j = i + 4, end = i + 2 + seg;
            while (j < end) { /* class/id byte, 16 counts, n values */
                size_t n = 0;
                for (size_t c = 1; c <= 16; c++)
                    n += j + c < len ? p[j + c] : 0;
                if (n > 256)
                    return 0;
                unsigned q = j < len ? p[j] : 0;
                if ((q >> 4) <= 1 && (q & 15) <= 3)
                    defined[q >> 4][q & 15] = 1;
                j += 17 + n;
            }
        } else if (m == 0xda) { /* Ns, (Cs, Td << 4 | Ta) x Ns, Ss, Se, Ah << 4 | Al */
#define AT(k) ((k) < len ? p[k] : 0)
            unsigned ns = AT(i + 4);
            unsigned ss = AT(i + 5 + 2 * ns), se = AT(i + 6 + 2 * ns);
            for (unsigned c = 0; c < ns; c++) {
                unsigned sel = AT(i + 6 + 2 * c);
                if (ss == 0 && !defined[0][(sel >> 4) & 3]) /* DC coefficients */
                    return 0;
                if (se > 0 && !defined[1][sel & 3])         /* AC coefficients */
                    return 0;
            }
#undef AT
        }
        i += 2 + seg;
    }
    return 1;
}

wgnn_status wgnn__image_decode(const void *buf, size_t len, const char *label, wgnn__image *out, char *err,
                               size_t err_len)
{
    if (out == NULL)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, "image", label, "out is NULL");
    out->w = out->h = 0;
    out->rgb = NULL;
    if (err && err_len)
        err[0] = '\0';
    if (buf == NULL && len > 0)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, "image", label, "buffer is NULL");
    if (len == 0)
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label, "empty file");
    const unsigned char *p = buf;
    const char *kind;
    if (len >= sizeof PNG_MAGIC && memcmp(p, PNG_MAGIC, sizeof PNG_MAGIC) == 0)
        kind = "PNG";
    else if (len >= sizeof JPEG_MAGIC && memcmp(p, JPEG_MAGIC, sizeof JPEG_MAGIC) == 0)
        kind = "JPEG";
    else
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label, "not a PNG or JPEG file (unknown magic bytes)");
    if (len > INT_MAX)
        return image_fail(err, err_len, WGNN_ERR_LIMIT, "image", label, "%zu bytes is too large", len);

    uint32_t dw32 = 0, dh32 = 0;
    if (declared_size(p, len, kind[0] == 'P', &dw32, &dh32) && dw32 > 0 && dh32 > 0 &&
        (dw32 > WGNN__IMAGE_MAX_SIDE || dh32 > WGNN__IMAGE_MAX_SIDE ||
         (uint64_t)dw32 * dh32 > WGNN__IMAGE_MAX_PIXELS))
        return image_fail(err, err_len, WGNN_ERR_LIMIT, "image", label,
                          "declared size %u x %u passes the limit (%d on a side, %llu pixels)", (unsigned)dw32,
                          (unsigned)dh32, WGNN__IMAGE_MAX_SIDE, (unsigned long long)WGNN__IMAGE_MAX_PIXELS);
    /* Every 8 x 8 block of a JPEG costs at least one bit (its DC code), but
     * stb decodes a file cut short as if zeros followed: a 700-byte file
     * declaring 8000 x 8000 took a minute to decode (fuzzer slow unit). */
    if (kind[0] == 'J' && dw32 > 0 && dh32 > 0 && len < ((uint64_t)(dw32 + 7) / 8) * ((dh32 + 7) / 8) / 8)
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label,
                          "JPEG of %zu bytes is too short for its declared %u x %u (truncated?)", len, (unsigned)dw32,
                          (unsigned)dh32);
    const char *bad_png = kind[0] == 'P' ? png_chunks_check(p, len) : NULL;
    if (bad_png)
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label, "bad PNG: %s", bad_png);
    if (kind[0] == 'J' && !jpeg_huffman_ok(p, len))
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label,
                          "bad JPEG huffman tables (more than 256 codes, or a scan using an undefined table)");
    int w = 0, h = 0, comp = 0;
    if (!wgnn__stb_info(p, (int)len, &w, &h, &comp)) {
        const char *why = wgnn__stb_failure_reason();
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label, "bad %s header (%s)", kind,
                          why ? why : "unknown reason");
    }
    wgnn_status s = check_size(w, h, "image", label, err, err_len);
    if (s != WGNN_OK)
        return s;

    int dw = 0, dh = 0;
    /* 16-bit PNGs come back as 8-bit (the high byte, as PIL does for RGB;
     * PIL clamps 16-bit grey instead, which is rare and left as is). */
    unsigned char *rgb = wgnn__stb_load_rgb(p, (int)len, &dw, &dh);
    if (rgb == NULL) {
        const char *why = wgnn__stb_failure_reason();
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label, "cannot decode %s (%s)", kind,
                          why ? why : "unknown reason");
    }
    if (dw != w || dh != h) { /* stbi_info and the decoder disagree: refuse */
        wgnn__stb_free(rgb);
        return image_fail(err, err_len, WGNN_ERR_FORMAT, "image", label, "inconsistent %s header (%d x %d, then %d x %d)",
                          kind, w, h, dw, dh);
    }
    out->w = w;
    out->h = h;
    out->rgb = rgb; /* stb allocates with malloc (no STBI_MALLOC override): free() releases it */
    return WGNN_OK;
}

wgnn_status wgnn__image_load(const char *path, wgnn__image *out, char *err, size_t err_len)
{
    if (out == NULL)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, "image", path, "out is NULL");
    out->w = out->h = 0;
    out->rgb = NULL;
    unsigned char *buf = NULL;
    size_t len = 0;
    wgnn_status s = read_small_file(path, IMAGE_MAX_FILE, "image", &buf, &len, err, err_len);
    if (s != WGNN_OK)
        return s;
    s = wgnn__image_decode(buf, len, path, out, err, err_len);
    free(buf);
    return s;
}

/* ---- resampling, as Pillow ------------------------------------------------ */

static double box_filter(double x)
{
    return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0;
}

static double bilinear_filter(double x)
{
    if (x < 0.0)
        x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

static double hamming_filter(double x)
{
    if (x < 0.0)
        x = -x;
    if (x == 0.0)
        return 1.0;
    if (x >= 1.0)
        return 0.0;
    x = x * IMAGE_PI;
    return sin(x) / x * (0.54f + 0.46f * cos(x)); /* float constants, as Pillow */
}

static double bicubic_filter(double x)
{
    const double a = -0.5;
    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

static double sinc_filter(double x)
{
    if (x == 0.0)
        return 1.0;
    x = x * IMAGE_PI;
    return sin(x) / x;
}

static double lanczos_filter(double x)
{
    if (-3.0 <= x && x < 3.0)
        return sinc_filter(x) * sinc_filter(x / 3);
    return 0.0;
}

typedef struct resample_filter {
    double (*fn)(double);
    double support;
} resample_filter;

static const resample_filter *filter_for(int resample)
{
    static const resample_filter box = {box_filter, 0.5}, bilinear = {bilinear_filter, 1.0},
                                 hamming = {hamming_filter, 1.0}, bicubic = {bicubic_filter, 2.0},
                                 lanczos = {lanczos_filter, 3.0};
    switch (resample) {
    case WGNN__RESAMPLE_BOX: return &box;
    case WGNN__RESAMPLE_BILINEAR: return &bilinear;
    case WGNN__RESAMPLE_HAMMING: return &hamming;
    case WGNN__RESAMPLE_BICUBIC: return &bicubic;
    case WGNN__RESAMPLE_LANCZOS: return &lanczos;
    }
    return NULL;
}

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc for in_size -> out_size
 * (box 0..in_size): per output index, first source index bounds[2i], count
 * bounds[2i+1], and ksize fixed-point weights at kk[i * ksize]. Returns ksize,
 * 0 when out of memory. */
static int precompute_coeffs(int in_size, int out_size, const resample_filter *f, int **bounds_out, int32_t **kk_out)
{
    float in0 = 0.0f, in1 = (float)in_size; /* Pillow's box is float */
    double scale = (double)(in1 - in0) / out_size;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = f->support * filterscale;
    int ksize = (int)ceil(support) * 2 + 1;
    double *k = malloc((size_t)ksize * sizeof *k);
    int32_t *kk = malloc((size_t)out_size * (size_t)ksize * sizeof *kk);
    int *bounds = malloc((size_t)out_size * 2 * sizeof *bounds);
    if (k == NULL || kk == NULL || bounds == NULL) {
        free(k);
        free(kk);
        free(bounds);
        return 0;
    }
    double inv_filterscale = 1.0 / filterscale;
    for (int xx = 0; xx < out_size; xx++) {
        double center = in0 + (xx + 0.5) * scale;
        double ww = 0.0;
        int xmin = (int)(center - support + 0.5);
        if (xmin < 0)
            xmin = 0;
        int xmax = (int)(center + support + 0.5);
        if (xmax > in_size)
            xmax = in_size;
        xmax -= xmin;
        if (xmax > ksize) /* cannot happen (support bounds it); keeps the writes in range */
            xmax = ksize;
        int x;
        for (x = 0; x < xmax; x++) {
            double w = f->fn((x + xmin - center + 0.5) * inv_filterscale);
            k[x] = w;
            ww += w;
        }
        if (ww != 0.0)
            for (x = 0; x < xmax; x++)
                k[x] /= ww;
        for (; x < ksize; x++)
            k[x] = 0;
        for (x = 0; x < ksize; x++)
            kk[(size_t)xx * ksize + x] = k[x] < 0 ? (int32_t)(-0.5 + k[x] * (1 << PRECISION_BITS))
                                                  : (int32_t)(0.5 + k[x] * (1 << PRECISION_BITS));
        bounds[xx * 2 + 0] = xmin;
        bounds[xx * 2 + 1] = xmax < 0 ? 0 : xmax;
    }
    free(k);
    *bounds_out = bounds;
    *kk_out = kk;
    return ksize;
}

/* Pillow's clip8: the sum carries 1 << (PRECISION_BITS - 1) for rounding. */
static unsigned char clip8(int64_t v)
{
    if (v < 0)
        return 0;
    v >>= PRECISION_BITS;
    return v > 255 ? 255 : (unsigned char)v;
}

static wgnn_status resize_nearest(const wgnn__image *src, int w, int h, unsigned char *dst)
{
    int *xin = malloc((size_t)w * sizeof *xin);
    if (xin == NULL)
        return WGNN_ERR_OUT_OF_MEMORY;
    /* ImagingScaleAffine: a[0] = (double)(box[2] - box[0]) / xsize, start at
     * a[0] * 0.5, step a[0]; COORD truncates (-1 below 0); pixels whose source
     * falls outside stay 0 (fill). */
    double ax = (double)((float)src->w - 0.0f) / w, ay = (double)((float)src->h - 0.0f) / h;
    double xo = 0.0 + ax * 0.5, yo = 0.0 + ay * 0.5;
    for (int x = 0; x < w; x++) {
        int xi = xo < 0.0 ? -1 : (int)xo;
        xin[x] = (xi >= 0 && xi < src->w) ? xi : -1;
        xo += ax;
    }
    for (int y = 0; y < h; y++) {
        int yi = yo < 0.0 ? -1 : (int)yo;
        unsigned char *out = dst + (size_t)y * w * 3;
        if (yi < 0 || yi >= src->h) {
            memset(out, 0, (size_t)w * 3);
        } else {
            const unsigned char *in = src->rgb + (size_t)yi * src->w * 3;
            for (int x = 0; x < w; x++) {
                if (xin[x] < 0)
                    memset(out + x * 3, 0, 3);
                else
                    memcpy(out + x * 3, in + (size_t)xin[x] * 3, 3);
            }
        }
        yo += ay;
    }
    free(xin);
    return WGNN_OK;
}

/* ImagingResampleInner on 8-bit RGB: horizontal pass over the rows the
 * vertical pass reads, then the vertical pass; each skipped when its size is
 * unchanged. */
static wgnn_status resize_filtered(const wgnn__image *src, int w, int h, const resample_filter *f, unsigned char *dst)
{
    wgnn_status s = WGNN_ERR_OUT_OF_MEMORY;
    int *bv = NULL, *bh = NULL;
    int32_t *kv = NULL, *kh = NULL;
    unsigned char *tmp = NULL;
    int need_h = w != src->w, need_v = h != src->h;
    int ksv = precompute_coeffs(src->h, h, f, &bv, &kv);
    if (!ksv)
        goto cleanup;
    int y_first = bv[0], y_last = bv[h * 2 - 2] + bv[h * 2 - 1];

    const unsigned char *in = src->rgb;
    int in_w = src->w;
    if (need_h) {
        int ksh = precompute_coeffs(src->w, w, f, &bh, &kh);
        if (!ksh)
            goto cleanup;
        for (int i = 0; i < h; i++)
            bv[i * 2] -= y_first;
        int rows = y_last - y_first;
        tmp = malloc((size_t)w * (size_t)(rows > 0 ? rows : 1) * 3);
        if (tmp == NULL)
            goto cleanup;
        for (int yy = 0; yy < rows; yy++) {
            const unsigned char *line = src->rgb + (size_t)(yy + y_first) * src->w * 3;
            unsigned char *o = tmp + (size_t)yy * w * 3;
            for (int xx = 0; xx < w; xx++) {
                int xmin = bh[xx * 2], xmax = bh[xx * 2 + 1];
                const int32_t *k = kh + (size_t)xx * ksh;
                int64_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
                for (int x = 0; x < xmax; x++) {
                    const unsigned char *px = line + (size_t)(x + xmin) * 3;
                    s0 += px[0] * (int64_t)k[x];
                    s1 += px[1] * (int64_t)k[x];
                    s2 += px[2] * (int64_t)k[x];
                }
                o[xx * 3 + 0] = clip8(s0);
                o[xx * 3 + 1] = clip8(s1);
                o[xx * 3 + 2] = clip8(s2);
            }
        }
        in = tmp;
        in_w = w;
        if (!need_v) {
            memcpy(dst, tmp, (size_t)w * h * 3); /* rows == h when the height is unchanged */
            s = WGNN_OK;
            goto cleanup;
        }
    }
    if (need_v) {
        for (int yy = 0; yy < h; yy++) {
            int ymin = bv[yy * 2], ymax = bv[yy * 2 + 1];
            const int32_t *k = kv + (size_t)yy * ksv;
            unsigned char *o = dst + (size_t)yy * in_w * 3;
            for (int xx = 0; xx < in_w * 3; xx++) {
                int64_t acc = 1 << (PRECISION_BITS - 1);
                for (int y = 0; y < ymax; y++)
                    acc += in[(size_t)(y + ymin) * in_w * 3 + xx] * (int64_t)k[y];
                o[xx] = clip8(acc);
            }
        }
    } else {
        memcpy(dst, src->rgb, (size_t)w * h * 3);
    }
    s = WGNN_OK;
cleanup:
    free(tmp);
    free(bh);
    free(kh);
    free(bv);
    free(kv);
    return s;
}

wgnn_status wgnn__image_resize(const wgnn__image *src, int w, int h, int resample, wgnn__image *out, char *err,
                               size_t err_len)
{
    if (out == NULL || src == NULL || src->rgb == NULL)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, "image resize", NULL, "NULL image");
    out->w = out->h = 0;
    out->rgb = NULL;
    wgnn_status s = check_size(src->w, src->h, "image resize", "input", err, err_len);
    if (s == WGNN_OK)
        s = check_size(w, h, "image resize", "output", err, err_len);
    if (s != WGNN_OK)
        return s == WGNN_ERR_FORMAT ? WGNN_ERR_INVALID_ARGUMENT : s;
    const resample_filter *f = NULL;
    if (resample != WGNN__RESAMPLE_NEAREST && (f = filter_for(resample)) == NULL)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, "image resize", NULL,
                          "unknown resample filter %d (0 nearest, 1 lanczos, 2 bilinear, 3 bicubic, 4 box, 5 hamming)",
                          resample);
    unsigned char *dst = malloc((size_t)w * (size_t)h * 3);
    if (dst == NULL)
        return image_fail(err, err_len, WGNN_ERR_OUT_OF_MEMORY, "image resize", NULL, "out of memory for %d x %d", w, h);
    if (w == src->w && h == src->h)
        memcpy(dst, src->rgb, (size_t)w * h * 3); /* Pillow copies */
    else
        s = f ? resize_filtered(src, w, h, f, dst) : resize_nearest(src, w, h, dst);
    if (s != WGNN_OK) {
        free(dst);
        return image_fail(err, err_len, s, "image resize", NULL, "out of memory resizing %d x %d to %d x %d", src->w,
                          src->h, w, h);
    }
    out->w = w;
    out->h = h;
    out->rgb = dst;
    return WGNN_OK;
}

/* ---- preprocessor_config.json --------------------------------------------- */

#define CFG "preprocessor config"

static wgnn_status cfg_bool(const cJSON *root, const char *key, int *out, const char *path, char *err, size_t err_len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (v == NULL || cJSON_IsNull(v))
        return WGNN_OK;
    if (!cJSON_IsBool(v))
        return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path, "\"%s\" must be true or false", key);
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return WGNN_OK;
}

/* An integer in [lo, hi] from a JSON number. */
static wgnn_status cfg_int(const cJSON *v, const char *key, int lo, int hi, int *out, const char *path, char *err,
                           size_t err_len)
{
    if (!cJSON_IsNumber(v))
        return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path, "\"%s\" must be a number", key);
    double d = v->valuedouble;
    if (!(d >= lo && d <= hi) || d != floor(d))
        return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path, "\"%s\" is %g, must be an integer in [%d, %d]", key,
                          d, lo, hi);
    *out = (int)d;
    return WGNN_OK;
}

/* image_mean / image_std: three numbers or one (for all channels). */
static wgnn_status cfg_triple(const cJSON *root, const char *key, int nonzero, double out[3], const char *path,
                              char *err, size_t err_len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (v == NULL || cJSON_IsNull(v))
        return WGNN_OK;
    double t[3];
    if (cJSON_IsNumber(v)) {
        t[0] = t[1] = t[2] = v->valuedouble;
    } else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 3) {
        for (int i = 0; i < 3; i++) {
            const cJSON *e = cJSON_GetArrayItem(v, i);
            if (!cJSON_IsNumber(e))
                return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path, "\"%s\"[%d] must be a number", key, i);
            t[i] = e->valuedouble;
        }
    } else {
        return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path, "\"%s\" must be 3 numbers (one per RGB channel) or one",
                          key);
    }
    for (int i = 0; i < 3; i++) {
        if (!isfinite(t[i]) || fabs(t[i]) > FLT_MAX || (nonzero && fabs(t[i]) < FLT_MIN))
            return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path, "\"%s\"[%d] is %g, must be a finite float32%s",
                              key, i, t[i], nonzero ? " and not zero or subnormal" : "");
        out[i] = t[i];
    }
    return WGNN_OK;
}

static wgnn_status cfg_parse(const cJSON *root, wgnn__preproc *pp, const char *path, char *err, size_t err_len)
{
    wgnn_status s;
    if (!cJSON_IsObject(root))
        return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path, "must be a JSON object");
    if ((s = cfg_bool(root, "do_resize", &pp->do_resize, path, err, err_len)) != WGNN_OK ||
        (s = cfg_bool(root, "do_rescale", &pp->do_rescale, path, err, err_len)) != WGNN_OK ||
        (s = cfg_bool(root, "do_normalize", &pp->do_normalize, path, err, err_len)) != WGNN_OK)
        return s;
    int convert_rgb = 1, center_crop = 0, pad = 0;
    if ((s = cfg_bool(root, "do_convert_rgb", &convert_rgb, path, err, err_len)) != WGNN_OK ||
        (s = cfg_bool(root, "do_center_crop", &center_crop, path, err, err_len)) != WGNN_OK ||
        (s = cfg_bool(root, "do_pad", &pad, path, err, err_len)) != WGNN_OK)
        return s;
    /* Images are always decoded to RGB, so do_convert_rgb false changes
     * nothing for RGB input; crops and pads would change the output. */
    if (center_crop)
        return image_fail(err, err_len, WGNN_ERR_UNSUPPORTED, CFG, path, "\"do_center_crop\": true is not supported");
    if (pad)
        return image_fail(err, err_len, WGNN_ERR_UNSUPPORTED, CFG, path, "\"do_pad\": true is not supported");

    const cJSON *size = cJSON_GetObjectItemCaseSensitive(root, "size");
    if (size != NULL && !cJSON_IsNull(size)) {
        if (cJSON_IsNumber(size)) { /* old configs: one number, a square */
            if ((s = cfg_int(size, "size", 1, WGNN__IMAGE_MAX_SIDE, &pp->height, path, err, err_len)) != WGNN_OK)
                return s;
            pp->width = pp->height;
            pp->shortest_edge = 0;
        } else if (cJSON_IsObject(size)) {
            const cJSON *hv = cJSON_GetObjectItemCaseSensitive(size, "height");
            const cJSON *wv = cJSON_GetObjectItemCaseSensitive(size, "width");
            const cJSON *se = cJSON_GetObjectItemCaseSensitive(size, "shortest_edge");
            if (hv && wv && !se) {
                if ((s = cfg_int(hv, "size.height", 1, WGNN__IMAGE_MAX_SIDE, &pp->height, path, err, err_len)) !=
                        WGNN_OK ||
                    (s = cfg_int(wv, "size.width", 1, WGNN__IMAGE_MAX_SIDE, &pp->width, path, err, err_len)) != WGNN_OK)
                    return s;
                if ((s = check_size(pp->width, pp->height, CFG, path, err, err_len)) != WGNN_OK) return s;
                pp->shortest_edge = 0;
            } else if (se && !hv && !wv) {
                if (cJSON_GetObjectItemCaseSensitive(size, "longest_edge"))
                    return image_fail(err, err_len, WGNN_ERR_UNSUPPORTED, CFG, path,
                                      "\"size.longest_edge\" is not supported");
                if ((s = cfg_int(se, "size.shortest_edge", 1, WGNN__IMAGE_MAX_SIDE, &pp->shortest_edge, path, err,
                                 err_len)) != WGNN_OK)
                    return s;
                pp->height = pp->width = 0;
            } else {
                return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path,
                                  "\"size\" must have \"height\" and \"width\", or \"shortest_edge\" alone");
            }
        } else {
            return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path,
                              "\"size\" must be an object ({\"height\", \"width\"} or {\"shortest_edge\"})");
        }
    }
    /* the processor's own default filter where the config names none:
     * SiglipImageProcessor's is bicubic, ViTImageProcessor's bilinear */
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(root, "image_processor_type");
    if (cJSON_IsString(ty) && strncmp(ty->valuestring, "Siglip", 6) == 0)
        pp->resample = WGNN__RESAMPLE_BICUBIC;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "resample");
    if (rs != NULL && !cJSON_IsNull(rs) &&
        (s = cfg_int(rs, "resample", 0, 5, &pp->resample, path, err, err_len)) != WGNN_OK)
        return s;
    const cJSON *rf = cJSON_GetObjectItemCaseSensitive(root, "rescale_factor");
    if (rf != NULL && !cJSON_IsNull(rf)) {
        /* 255 times it stays a finite float32 */
        if (!cJSON_IsNumber(rf) || !isfinite(rf->valuedouble) || rf->valuedouble <= 0 ||
            rf->valuedouble > FLT_MAX / 255)
            return image_fail(err, err_len, WGNN_ERR_FORMAT, CFG, path,
                              "\"rescale_factor\" must be a positive number at most FLT_MAX / 255 (1/255 is usual)");
        pp->rescale_factor = rf->valuedouble;
    }
    if ((s = cfg_triple(root, "image_mean", 0, pp->mean, path, err, err_len)) != WGNN_OK ||
        (s = cfg_triple(root, "image_std", 1, pp->std, path, err, err_len)) != WGNN_OK)
        return s;
    return WGNN_OK;
}

static void preproc_defaults(wgnn__preproc *pp)
{
    memset(pp, 0, sizeof *pp);
    pp->do_resize = 1;
    pp->height = pp->width = 224;
    pp->resample = WGNN__RESAMPLE_BILINEAR;
    pp->do_rescale = 1;
    pp->rescale_factor = 1.0 / 255.0;
    pp->do_normalize = 1;
    for (int i = 0; i < 3; i++) {
        pp->mean[i] = 0.5;
        pp->std[i] = 0.5;
    }
}

wgnn_status wgnn__preproc_load(const char *path, wgnn__preproc *out, char *err, size_t err_len)
{
    if (out == NULL)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, CFG, path, "out is NULL");
    preproc_defaults(out);
    unsigned char *buf = NULL;
    size_t len = 0;
    wgnn_status s = read_small_file(path, CONFIG_MAX_FILE, CFG, &buf, &len, err, err_len);
    if (s != WGNN_OK)
        return s;
    /* the reader every JSON file goes through (src/io/json.c): syntax
     * errors by line and column, text after the value, \u0000 in strings
     * and keys standing twice refused; its message starts "CFG: path: " */
    char label[256];
    snprintf(label, sizeof label, "%s: %s", CFG, path);
    wgnn__json j;
    s = wgnn__json_parse((const char *)buf, len, label, &j, err, err_len);
    if (s == WGNN_OK) {
        s = cfg_parse(j.root, out, path, err, err_len);
        wgnn__json_free(&j);
    }
    free(buf);
    if (s != WGNN_OK)
        preproc_defaults(out);
    return s;
}

void wgnn__preproc_out_size(const wgnn__preproc *pp, int w, int h, int *out_w, int *out_h)
{
    if (!pp->do_resize) {
        *out_w = w;
        *out_h = h;
    } else if (pp->shortest_edge > 0) {
        /* transformers' get_resize_output_image_size(default_to_square=False):
         * long side int(short_target * long / short) */
        int sh = w <= h ? w : h, lo = w <= h ? h : w;
        int nl = (int)((double)pp->shortest_edge * lo / (sh > 0 ? sh : 1));
        if (nl < 1)
            nl = 1;
        *out_w = w <= h ? pp->shortest_edge : nl;
        *out_h = w <= h ? nl : pp->shortest_edge;
    } else {
        *out_w = pp->width;
        *out_h = pp->height;
    }
}

wgnn_status wgnn__image_preprocess(const wgnn__image *img, const wgnn__preproc *pp, float *out, int out_w, int out_h,
                                   char *err, size_t err_len)
{
    if (img == NULL || img->rgb == NULL || pp == NULL || out == NULL)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, "image preprocess", NULL, "NULL argument");
    int want_w, want_h;
    wgnn__preproc_out_size(pp, img->w, img->h, &want_w, &want_h);
    if (out_w != want_w || out_h != want_h)
        return image_fail(err, err_len, WGNN_ERR_INVALID_ARGUMENT, "image preprocess", NULL,
                          "output is %d x %d but the config makes %d x %d from a %d x %d image", out_w, out_h, want_w,
                          want_h, img->w, img->h);
    wgnn__image resized = {0, 0, NULL};
    const wgnn__image *src = img;
    if (out_w != img->w || out_h != img->h) {
        wgnn_status s = wgnn__image_resize(img, out_w, out_h, pp->resample, &resized, err, err_len);
        if (s != WGNN_OK)
            return s;
        src = &resized;
    }
    /* transformers: rescale = (image.astype(float64) * factor).astype(float32);
     * normalize = (image - mean) / std with mean, std as float32 arrays. */
    size_t plane = (size_t)out_w * out_h;
    for (int c = 0; c < 3; c++) {
        float mean = (float)pp->mean[c], std = (float)pp->std[c];
        for (size_t i = 0; i < plane; i++) {
            unsigned char v = src->rgb[i * 3 + c];
            float x = pp->do_rescale ? (float)((double)v * pp->rescale_factor) : (float)v;
            if (pp->do_normalize)
                x = (x - mean) / std;
            out[c * plane + i] = x;
        }
    }
    wgnn__image_free(&resized);
    return WGNN_OK;
}
