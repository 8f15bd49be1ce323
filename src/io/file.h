/* file.h - what the file readers share (internal; src/io/file.c). */
#ifndef WGNN_IO_FILE_H
#define WGNN_IO_FILE_H

#include <sys/types.h>

/* "directory", "character device", "block device", "FIFO", "socket" or
 * "file of unknown type": for messages refusing a path that is not a
 * regular file. */
const char *wgnn__file_kind(mode_t m);

#endif /* WGNN_IO_FILE_H */
