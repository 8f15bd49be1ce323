/* file.c - what the file readers (npy.c, safetensors.c, ...) share. */
#include "io/file.h"

#include <sys/stat.h>

const char *wgnn__file_kind(mode_t m) {
    if (S_ISDIR(m)) return "directory";
    if (S_ISCHR(m)) return "character device";
    if (S_ISBLK(m)) return "block device";
    if (S_ISFIFO(m)) return "FIFO";
    if (S_ISSOCK(m)) return "socket";
    return "file of unknown type";
}
