/*
 * image_stb.c - stb_image's implementation (Debian's libstb-dev), compiled
 * alone so that its own warnings stay out of the library's -Werror build
 * (CMakeLists.txt relaxes warnings for this file only).
 *
 * PNG and JPEG only; no stdio (src/io/image.c reads the file itself, with a
 * size cap); STBI_MAX_DIMENSIONS makes stb refuse a side past
 * WGNN__IMAGE_MAX_SIDE even if a caller skipped the stbi_info check.
 */
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS 16384 /* WGNN__IMAGE_MAX_SIDE; checked in image.c */
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
