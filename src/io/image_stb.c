/*
 * image_stb.c - stb_image's implementation (Debian's libstb-dev), compiled
 * alone so that its own warnings stay out of the library's -Werror build
 * (CMakeLists.txt relaxes warnings for this file only).
 *
 * PNG and JPEG only; no stdio (src/io/image.c reads the file itself, with a
 * size cap). STBI_MAX_DIMENSIONS is left at stb's own default (2^24) on
 * purpose: past it stbi_info fails with the unhelpful "unknown image type",
 * while below it image.c gets the declared size from stbi_info and refuses
 * anything past WGNN__IMAGE_MAX_SIDE / _PIXELS with a message saying so,
 * before stbi_load is called.
 *
 * STB_IMAGE_STATIC keeps every stbi_* symbol inside this file, so that an
 * application linking its own stb_image gets no clash and neither build
 * takes the other's: image.c calls the four wgnn__stb_* functions below.
 */
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS (1 << 24)
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include "io/image.h"

int wgnn__stb_info(const unsigned char *p, int len, int *w, int *h, int *comp) {
    return stbi_info_from_memory(p, len, w, h, comp);
}

unsigned char *wgnn__stb_load_rgb(const unsigned char *p, int len, int *w, int *h) {
    int comp = 0;
    return stbi_load_from_memory(p, len, w, h, &comp, 3);
}

const char *wgnn__stb_failure_reason(void) { return stbi_failure_reason(); }

void wgnn__stb_free(unsigned char *rgb) { stbi_image_free(rgb); }
