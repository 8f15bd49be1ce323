/* npy_write.c - wgnn_npy_save: a .npy file (format 1.0, 2.0 when the
 * header needs it). Saving a regular file (or a new path) writes
 * "<path>.tmp.<pid>" and renames it over path; any other target (a device,
 * a FIFO, a symlink such as /dev/stdout) is written in place, since a
 * rename would replace it. The reader is npy.c. */
#define _POSIX_C_SOURCE 200809L /* getpid, lstat, O_CLOEXEC */

#include "wgnn.h"
#include "io/file.h"
#include "io/npy_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Builds the full header (magic, version, length, padded dict) into out;
 * returns its length, or 0 when out is too small. */
static size_t npy_build_header(wgnn_dtype dtype, int rank, const int64_t *dims, unsigned char *out,
                               size_t out_len)
{
    char shape[NPY_SHAPE_STR];
    char dict[NPY_SHAPE_STR + 128];
    wgnn__npy_shape_str(dims, rank, shape, sizeof shape);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     wgnn__npy_dtype_descr(dtype), shape);
    if (n < 0 || (size_t)n >= sizeof dict)
        return 0;
    size_t dlen = (size_t)n;
    /* numpy leaves room for the first dim to grow to 21 digits in place. */
    if (rank > 0) {
        char first[24];
        int fl = snprintf(first, sizeof first, "%lld", (long long)dims[0]);
        if (fl > 0 && fl < NPY_GROWTH_DIGITS)
            dlen += (size_t)(NPY_GROWTH_DIGITS - fl);
    }
    size_t prefix = 10;
    size_t pad = NPY_ALIGN - (prefix + dlen + 1) % NPY_ALIGN; /* numpy pads 64 when aligned */
    if (dlen + pad + 1 > 0xffff) {
        prefix = 12;
        pad = NPY_ALIGN - (prefix + dlen + 1) % NPY_ALIGN;
    }
    size_t hlen = dlen + pad + 1;
    size_t total = prefix + hlen;
    if (total > out_len)
        return 0;
    memcpy(out, NPY_MAGIC, NPY_MAGIC_LEN);
    out[6] = prefix == 10 ? 1 : 2;
    out[7] = 0;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8 & 0xff);
    if (prefix == 12) {
        out[10] = (unsigned char)(hlen >> 16 & 0xff);
        out[11] = (unsigned char)(hlen >> 24 & 0xff);
    }
    memcpy(out + prefix, dict, (size_t)n);
    memset(out + prefix + n, ' ', total - 1 - prefix - (size_t)n);
    out[total - 1] = '\n';
    return total;
}

/* ---- writing files ------------------------------------------------------- */

/* Writes all n bytes, retrying short writes and EINTR; *done says how many
 * went out. -1 (errno set) on an error. */
static int npy_write_full(int fd, const void *buf, size_t n, uint64_t *done)
{
    const unsigned char *p = buf;
    size_t off = 0;
    while (off < n) {
        size_t chunk = n - off < NPY_IO_CHUNK ? n - off : NPY_IO_CHUNK;
        ssize_t w = write(fd, p + off, chunk);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO; /* no progress and no reason given */
            *done += off;
            return -1;
        }
        off += (size_t)w;
    }
    *done += off;
    return 0;
}

/* Header, then data, to fd; on failure says how far it got and why. `what`
 * names the file written in the message (NULL: the path the message is
 * about already). */
static wgnn_status npy_write_image(const npy_err *e, int fd, const char *what,
                                   const unsigned char *header, size_t hsize, const void *data,
                                   size_t nbytes)
{
    uint64_t done = 0;
    if (npy_write_full(fd, header, hsize, &done) == 0 &&
        npy_write_full(fd, data, nbytes, &done) == 0)
        return WGNN_OK;
    int saved = errno;
    if (what)
        return wgnn__npy_fail(e, WGNN_ERR_IO, "write to '%s' failed after %llu of %llu bytes: %s",
                        what, (unsigned long long)done, (unsigned long long)(hsize + nbytes),
                        strerror(saved));
    return wgnn__npy_fail(e, WGNN_ERR_IO, "write failed after %llu of %llu bytes: %s",
                    (unsigned long long)done, (unsigned long long)(hsize + nbytes),
                    strerror(saved));
}

/* Writes into what path names now (a device, a FIFO, a symlink's target),
 * without replacing it; a regular file at the end of a symlink is truncated
 * first, as the shell's '>' would. */
static wgnn_status npy_save_in_place(const npy_err *e, const char *path,
                                     const unsigned char *header, size_t hsize, const void *data,
                                     size_t nbytes)
{
    /* No O_TRUNC: on a device it means nothing good. A FIFO blocks here
     * until a reader opens it. */
    int fd = wgnn__npy_open_retry(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0)
        return wgnn__npy_fail(e, WGNN_ERR_IO, "cannot open for writing: %s", strerror(errno));
    struct stat sb;
    wgnn_status st = WGNN_OK;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && ftruncate(fd, 0) != 0)
        st = wgnn__npy_fail(e, WGNN_ERR_IO, "cannot truncate before writing: %s", strerror(errno));
    if (st == WGNN_OK)
        st = npy_write_image(e, fd, NULL, header, hsize, data, nbytes);
    /* close reports write errors a device or a network file system deferred. */
    if (close(fd) != 0 && st == WGNN_OK)
        st = wgnn__npy_fail(e, WGNN_ERR_IO, "write failed on close: %s", strerror(errno));
    return st;
}

/* Writes "<path>.tmp.<pid>" and renames it over path, so that path holds
 * either its old contents or the whole new file. */
static wgnn_status npy_save_atomic(const npy_err *e, const char *path,
                                   const unsigned char *header, size_t hsize, const void *data,
                                   size_t nbytes)
{
    wgnn_status st = WGNN_OK;
    int fd = -1, created = 0;
    size_t tmp_len = strlen(path) + 32;
    char *tmp = malloc(tmp_len);
    if (tmp == NULL)
        return wgnn__npy_fail(e, WGNN_ERR_OUT_OF_MEMORY, "out of memory");
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    /* O_EXCL: never write through whatever already has this name (a symlink
     * someone planted, a FIFO). A file by this name can only be left by a
     * killed process that had our pid: remove it and try once more. */
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY;
    fd = wgnn__npy_open_retry(tmp, flags, 0666);
    if (fd < 0 && errno == EEXIST) {
        if (unlink(tmp) == 0)
            fd = wgnn__npy_open_retry(tmp, flags, 0666);
        else
            errno = EEXIST;
    }
    if (fd < 0) {
        st = wgnn__npy_fail(e, WGNN_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
        goto cleanup;
    }
    created = 1;
    st = npy_write_image(e, fd, tmp, header, hsize, data, nbytes);
    int rc = close(fd);
    fd = -1;
    if (rc != 0 && st == WGNN_OK)
        st = wgnn__npy_fail(e, WGNN_ERR_IO, "write to '%s' failed on close: %s", tmp, strerror(errno));
    if (st != WGNN_OK)
        goto cleanup;
    if (rename(tmp, path) != 0) {
        st = wgnn__npy_fail(e, WGNN_ERR_IO, "cannot rename '%s' onto it: %s", tmp, strerror(errno));
        goto cleanup;
    }
    created = 0;

cleanup:
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
    free(tmp);
    return st;
}

wgnn_status wgnn_npy_save(const char *path, wgnn_dtype dtype, int rank, const int64_t *dims,
                          const void *data, char *err, size_t err_len)
{
    npy_err e = {err, err_len, NULL};
    unsigned char header[1024];

    if (err && err_len)
        err[0] = '\0';
    if (path == NULL || (rank > 0 && dims == NULL) || data == NULL)
        return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "save: %s is NULL",
                        path == NULL ? "path" : data == NULL ? "data" : "dims");
    e.path = path;
    size_t esize = wgnn__npy_dtype_size(dtype);
    if (esize == 0)
        return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "save: unknown dtype %d", (int)dtype);
    if (rank < 0 || rank > WGNN_MAX_RANK)
        return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "save: rank %d is outside 0..%d", rank,
                        WGNN_MAX_RANK);
    uint64_t nbytes = esize;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1)
            return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "save: dims[%d] = %lld; every dim "
                            "must be >= 1", i, (long long)dims[i]);
        if ((uint64_t)dims[i] > UINT64_MAX / nbytes || (uint64_t)dims[i] * nbytes > SIZE_MAX)
            return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "save: shape is too large (byte "
                            "count overflows)");
        nbytes *= (uint64_t)dims[i];
    }
    size_t hsize = npy_build_header(dtype, rank, dims, header, sizeof header);
    if (hsize == 0)
        return wgnn__npy_fail(&e, WGNN_ERR_INVALID_ARGUMENT, "save: header does not fit");

    /* A rename would replace anything but a regular file (a device node, a
     * FIFO, a symlink such as /dev/stdout) with one: write those in place.
     * A directory goes the atomic way, where the rename refuses it. */
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
        return npy_save_in_place(&e, path, header, hsize, data, (size_t)nbytes);
    return npy_save_atomic(&e, path, header, hsize, data, (size_t)nbytes);
}
