/* file.c - what the file readers (npy.c, safetensors.c, ...) share. */
#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *wgnn__file_kind(mode_t m) {
    if (S_ISDIR(m)) return "directory";
    if (S_ISCHR(m)) return "character device";
    if (S_ISBLK(m)) return "block device";
    if (S_ISFIFO(m)) return "FIFO";
    if (S_ISSOCK(m)) return "socket";
    return "file of unknown type";
}

wgnn_status wgnn__file_read(const char *path, size_t max, unsigned char **out, size_t *len, char *why, size_t why_len) {
    *out = NULL;
    *len = 0;
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, why_len, "%s", strerror(errno));
        return WGNN_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "is a %s, not a regular file", wgnn__file_kind(st.st_mode));
        return WGNN_ERR_IO;
    }
    if ((uint64_t)st.st_size > max) {
        snprintf(why, why_len, "is %lld bytes, more than the %zu allowed", (long long)st.st_size, max);
        return WGNN_ERR_LIMIT;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, why_len, "%s", strerror(errno));
        return WGNN_ERR_IO;
    }
    wgnn_status s = WGNN_OK;
    unsigned char *buf = NULL;
    size_t have = 0;
    /* the path may have been replaced since stat: check what was opened */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
        snprintf(why, why_len, "changed while being opened");
        s = WGNN_ERR_IO;
        goto cleanup;
    }
    size_t cap = (size_t)st.st_size + 1; /* one byte more shows growth since fstat */
    if ((buf = malloc(cap)) == NULL) {
        snprintf(why, why_len, "out of memory for %zu bytes", cap);
        s = WGNN_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    while (have < cap) {
        ssize_t r = read(fd, buf + have, cap - have);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, why_len, "read failed: %s", strerror(errno));
            s = WGNN_ERR_IO;
            goto cleanup;
        }
        if (r == 0) break;
        have += (size_t)r;
    }
    if (have != cap - 1) {
        snprintf(why, why_len, "changed size while being read");
        s = WGNN_ERR_IO;
    }
cleanup:
    close(fd);
    if (s != WGNN_OK) {
        free(buf);
        return s;
    }
    buf[have] = '\0';
    *out = buf;
    *len = have;
    return WGNN_OK;
}
