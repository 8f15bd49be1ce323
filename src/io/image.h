/* image.h - PNG and JPEG input through stb_image (Debian's libstb-dev), and
 * Hugging Face image-processor preprocessing (internal; src/io/image.c).
 *
 * Decoding refuses (WGNN_ERR_FORMAT, naming the file) anything stb_image
 * rejects, formats other than PNG and JPEG, images past
 * WGNN__IMAGE_MAX_SIDE on a side or WGNN__IMAGE_MAX_PIXELS in all, and
 * truncated files; it never crashes on hostile input (fuzzed; src/io/image.c
 * walks PNG chunks and JPEG markers first, to keep Debian 12's stb_image
 * away from inputs it mishandles).
 *
 * Exactness: PNG decodes as Pillow's convert("RGB") does (16-bit: the high
 * byte; Pillow clamps 16-bit grey instead). stb's JPEG decoder is not
 * libjpeg's: within a few levels of Pillow's decode, not equal. The resize
 * is bit-exact with Pillow (9.4 to 12.3) for all six filters, and the
 * preprocessing with transformers' PIL path (ViTImageProcessorPil etc.);
 * transformers 5's default processors resize with torchvision instead,
 * which differs by one level in a few percent of pixels. */
#ifndef WGNN_IO_IMAGE_H
#define WGNN_IO_IMAGE_H

#include "internal.h"

#define WGNN__IMAGE_MAX_SIDE 16384
#define WGNN__IMAGE_MAX_PIXELS (64ull * 1024 * 1024)

/* 8-bit RGB, row-major, h * w * 3 bytes. Grey becomes RGB; alpha is
 * dropped (as PIL's convert("RGB") does). */
typedef struct wgnn__image {
    int w, h;
    unsigned char *rgb;
} wgnn__image;

wgnn_status wgnn__image_load(const char *path, wgnn__image *out, char *err, size_t err_len);
wgnn_status wgnn__image_decode(const void *buf, size_t len, const char *label, wgnn__image *out, char *err,
                               size_t err_len);
void wgnn__image_free(wgnn__image *img);

/* PIL's resample filters, numbered as PIL and preprocessor_config.json do. */
enum { WGNN__RESAMPLE_NEAREST = 0, WGNN__RESAMPLE_LANCZOS = 1, WGNN__RESAMPLE_BILINEAR = 2,
       WGNN__RESAMPLE_BICUBIC = 3, WGNN__RESAMPLE_BOX = 4, WGNN__RESAMPLE_HAMMING = 5 };

/* What a preprocessor_config.json of ViTImageProcessor / SiglipImageProcessor
 * (and processors with the same keys: size {height, width} or
 * {shortest_edge}, resample, do_resize, do_rescale, rescale_factor,
 * do_normalize, image_mean, image_std, do_convert_rgb) asks for. Defaults
 * as Hugging Face's ViTImageProcessor. */
typedef struct wgnn__preproc {
    int do_resize;
    int height, width;      /* target size when do_resize */
    int shortest_edge;      /* > 0: resize so the short side is this (aspect kept), height/width 0 */
    int resample;           /* WGNN__RESAMPLE_* */
    int do_rescale;
    double rescale_factor;
    int do_normalize;
    double mean[3], std[3];
} wgnn__preproc;

wgnn_status wgnn__preproc_load(const char *path, wgnn__preproc *out, char *err, size_t err_len);
/* Output size for an input image of w x h. */
void wgnn__preproc_out_size(const wgnn__preproc *pp, int w, int h, int *out_w, int *out_h);
/* Resizes as PIL's Image.resize does on 8-bit RGB (bit-exact: PIL's
 * fixed-point two-pass resampling with its filter supports; the image is
 * rounded to uint8 after resizing, as HF does), then rescales and
 * normalizes in float32 as HF does, writing planar [3, out_h, out_w]. */
wgnn_status wgnn__image_preprocess(const wgnn__image *img, const wgnn__preproc *pp, float *out, int out_w, int out_h,
                                   char *err, size_t err_len);
/* PIL-exact resize of 8-bit RGB alone (tests). */
wgnn_status wgnn__image_resize(const wgnn__image *src, int w, int h, int resample, wgnn__image *out, char *err,
                               size_t err_len);

/* stb_image, kept static in src/io/image_stb.c (no stbi_* symbol leaves the
 * library): the header's size, an 8-bit RGB decode (free with
 * wgnn__stb_free), and the reason for the last failure. */
int wgnn__stb_info(const unsigned char *p, int len, int *w, int *h, int *comp);
unsigned char *wgnn__stb_load_rgb(const unsigned char *p, int len, int *w, int *h);
const char *wgnn__stb_failure_reason(void);
void wgnn__stb_free(unsigned char *rgb);

#endif /* WGNN_IO_IMAGE_H */
