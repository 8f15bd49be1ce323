/*
 * fuzz_image.c - libFuzzer harness for PNG / JPEG decoding (stb_image behind
 * wgnn__image_decode) and the PIL-exact resize.
 *
 * Built by CMake with -DWGNN_FUZZ=ON (linked with wgnn_fuzzlib); run by
 * `make fuzz`. fuzz/corpus_image is the seed corpus (tiny PNGs and JPEGs of
 * each colour type, baseline and progressive JPEG: copies of
 * tests/data/images/dec_*, which tests/data/images/make_images.py writes).
 *
 * Any input must give WGNN_OK with an image inside the limits, or an error
 * with an "image: " message and an empty result; never a crash, a leak or
 * an out-of-bounds access. A decoded image is resized with every filter to a
 * small size derived from the input, and back up by one pixel, which runs
 * both the downscale and the upscale paths.
 */
#include "io/image.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wgnn__image img;
    char err[256];
    wgnn_status st = wgnn__image_decode(data, size, "fuzz", &img, err, sizeof err);
    if (st != WGNN_OK) {
        if (img.rgb != NULL || img.w != 0 || img.h != 0 || strncmp(err, "image: fuzz: ", 13) != 0)
            abort();
        return 0;
    }
    if (img.rgb == NULL || img.w < 1 || img.h < 1 || img.w > WGNN__IMAGE_MAX_SIDE || img.h > WGNN__IMAGE_MAX_SIDE)
        abort();
    /* touch every byte: ASan reports a short buffer */
    unsigned sum = 0;
    for (size_t i = 0; i < (size_t)img.w * img.h * 3; i++)
        sum += img.rgb[i];
    int tw = 1 + (int)((size ^ sum) % 7), th = 1 + (int)((size + sum) % 5);
    for (int f = 0; f <= 5; f++) {
        wgnn__image small, big;
        if (wgnn__image_resize(&img, tw, th, f, &small, err, sizeof err) != WGNN_OK)
            abort();
        if (small.w != tw || small.h != th)
            abort();
        if (wgnn__image_resize(&small, tw + 1, th + 2, f, &big, err, sizeof err) != WGNN_OK)
            abort();
        wgnn__image_free(&big);
        wgnn__image_free(&small);
    }
    wgnn__image_free(&img);
    return 0;
}
