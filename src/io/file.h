/* file.h - what the file readers share (internal; src/io/file.c). */
#ifndef WGNN_IO_FILE_H
#define WGNN_IO_FILE_H

#include "wgnn.h"

#include <stddef.h>
#include <sys/types.h>

/* "directory", "character device", "block device", "FIFO", "socket" or
 * "file of unknown type": for messages refusing a path that is not a
 * regular file. */
const char *wgnn__file_kind(mode_t m);

/* Reads the regular file at path, at most max bytes, into a malloc'd
 * buffer (*out, free(); a NUL after its *len bytes). A directory, device,
 * FIFO or socket is refused without being opened (and opened without
 * blocking, should the path change in between); a file that changes size
 * while read is refused. On failure *out is NULL and why gets the reason
 * without a prefix ("No such file or directory", "is a directory, not a
 * regular file", "is 300 bytes, more than the 100 allowed", ...): WGNN_ERR_IO,
 * WGNN_ERR_LIMIT (too big) or WGNN_ERR_OUT_OF_MEMORY. */
wgnn_status wgnn__file_read(const char *path, size_t max, unsigned char **out, size_t *len, char *why, size_t why_len);

#endif /* WGNN_IO_FILE_H */
