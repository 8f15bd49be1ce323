/*
 * test_npy.c - the .npy reader on bytes in memory: files exactly as numpy
 * writes them, hand-written headers, malformed or hostile input, arguments
 * and errors; and main, which also runs tests/npy_files.c (saving, and
 * loading through paths, pipes and devices). Shared pieces: test_npy.h.
 *
 * Standalone: needs only src/io/npy.c and npy_write.c. Prints "N passed, M failed".
 */
#include "test_npy.h"

int tu_pass, tu_fail;
char g_dir[] = "/tmp/wgnn_test_npy_XXXXXX"; /* made by main */

/* ---- files exactly as numpy 1.24 writes them (Debian 12's python3-numpy;
 * each comment is the call, with f an io.BytesIO). */

/* np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)) */
const unsigned char np_f4_2x3[152] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20,
    0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40,
    0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40,
};
/* np.save(f, np.array([-1, 0, 7], dtype='<i4')) */
const unsigned char np_i4_3[140] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x69, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x33, 0x2c, 0x29,
    0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
};
/* np.save(f, np.array(1.5, dtype='<f2')) */
const unsigned char np_f2_scalar[130] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x32, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x29, 0x2c, 0x20,
    0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x3e,
};
/* np.lib.format.write_array(f, np.arange(6, dtype='<f4').reshape(2, 3), version=(2, 0)) */
const unsigned char np_f4_2x3_v2[152] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x02, 0x00, 0x74, 0x00, 0x00, 0x00, 0x7b, 0x27, 0x64, 0x65,
    0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f,
    0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61,
    0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32,
    0x2c, 0x20, 0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40,
    0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40,
};
/* np.lib.format.write_array(f, np.arange(6, dtype='<f4').reshape(2, 3), version=(3, 0)) */
const unsigned char np_f4_2x3_v3[152] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x03, 0x00, 0x74, 0x00, 0x00, 0x00, 0x7b, 0x27, 0x64, 0x65,
    0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f,
    0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61,
    0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32,
    0x2c, 0x20, 0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40,
    0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40,
};
/* np.save(f, np.arange(2, dtype='>f4')) */
const unsigned char np_f4_be[136] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3e, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x29,
    0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x3f, 0x80, 0x00, 0x00,
};
/* np.save(f, np.arange(2, dtype='<f8')) */
const unsigned char np_f8[144] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x38, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x29,
    0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,
};
/* np.save(f, np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3))) */
const unsigned char np_fortran[152] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x54, 0x72, 0x75, 0x65,
    0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20, 0x33,
    0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x40,
    0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0xa0, 0x40,
};
/* np.save(f, np.array([True, False])) */
const unsigned char np_bool[130] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x7c, 0x62, 0x31, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x29,
    0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x01, 0x00,
};

/* ---- helpers ------------------------------------------------------------ */

/* A .npy image: prefix for `major`.`minor`, then `dict` padded as numpy pads
 * it (pad = 1) or as given (pad = 0), then data. hlen_field < 0 writes the
 * real header length, else that value. Caller frees. */
unsigned char *build(int major, int minor, const char *dict, int pad, long long hlen_field,
                            const void *data, size_t data_len, size_t *out_len)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t dlen = strlen(dict);
    size_t hlen = dlen;
    if (pad)
        hlen = dlen + 1 + (64 - (prefix + dlen + 1) % 64) % 64;
    size_t total = prefix + hlen + data_len;
    unsigned char *b = malloc(total ? total : 1);
    if (b == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = (unsigned char)minor;
    unsigned long long field = hlen_field < 0 ? (unsigned long long)hlen : (unsigned long long)hlen_field;
    b[8] = (unsigned char)(field & 0xff);
    b[9] = (unsigned char)(field >> 8 & 0xff);
    if (prefix == 12) {
        b[10] = (unsigned char)(field >> 16 & 0xff);
        b[11] = (unsigned char)(field >> 24 & 0xff);
    }
    memcpy(b + prefix, dict, dlen);
    if (pad) {
        memset(b + prefix + dlen, ' ', hlen - dlen - 1);
        b[prefix + hlen - 1] = '\n';
    }
    if (data_len)
        memcpy(b + prefix + hlen, data, data_len);
    *out_len = total;
    return b;
}

int npy_is_empty(const wgnn_npy *n)
{
    wgnn_npy zero;
    memset(&zero, 0, sizeof zero);
    return memcmp(n, &zero, sizeof zero) == 0;
}


/* A pipe holding len bytes of buf, its write end closed; returns the read
 * end, or -1 when buf does not fit the pipe's buffer. */
int pipe_with(const void *buf, size_t len)
{
    int p[2];
    if (len > 60000 || pipe(p) != 0)
        return -1;
    ssize_t w = len ? write(p[1], buf, len) : 0;
    close(p[1]);
    if (w != (ssize_t)len) {
        close(p[0]);
        return -1;
    }
    return p[0];
}

/* What parse says about buf, wgnn_npy_load and wgnn_npy_load_header must say
 * about the same bytes in a file, and wgnn_npy_load about them in a pipe:
 * the same status, the same message after "npy: <path>: ", the same result
 * (load_header: without data). This runs the file readers over every case
 * written for the parser. */
void check_file_forms(const char *label, const void *buf, size_t len)
{
    char path[512], want[512], err[1200], msg[1200];
    wgnn_npy ref, n;
    wgnn_status ref_st = wgnn_npy_parse(buf, len, &ref, want, sizeof want);
    snprintf(path, sizeof path, "%s/form.npy", g_dir);
    if (write_file(path, buf, len) != 0) {
        CHECK(0, "%s: cannot write %s", label, path);
        wgnn_npy_free(&ref);
        return;
    }
    for (int form = 0; form < 3; form++) {
        static const char *const forms[3] = {"load", "load_header", "load from a pipe"};
        char fpath[512];
        snprintf(fpath, sizeof fpath, "%s", path);
        int fd = -1;
        if (form == 2) {
            if ((fd = pipe_with(buf, len)) < 0)
                continue;
            snprintf(fpath, sizeof fpath, "/dev/fd/%d", fd);
        }
        memset(&n, 0xab, sizeof n);
        wgnn_status st = form == 1 ? wgnn_npy_load_header(fpath, &n, err, sizeof err)
                                   : wgnn_npy_load(fpath, &n, err, sizeof err);
        CHECK(st == ref_st, "%s: %s: status %d, parse gave %d (%s | %s)", label, forms[form],
              (int)st, (int)ref_st, err, want);
        if (ref_st != WGNN_OK) {
            snprintf(msg, sizeof msg, "npy: %s: %s", fpath, want + 5);
            CHECK(strcmp(err, msg) == 0, "%s: %s: message \"%s\", want \"%s\"", label,
                  forms[form], err, msg);
            CHECK(npy_is_empty(&n), "%s: %s: output not left empty", label, forms[form]);
        } else if (st == WGNN_OK) {
            int same = n.dtype == ref.dtype && n.rank == ref.rank && n.numel == ref.numel &&
                       n.nbytes == ref.nbytes && memcmp(n.dims, ref.dims, sizeof n.dims) == 0;
            CHECK(same, "%s: %s: result differs from parse's", label, forms[form]);
            if (form == 1)
                CHECK(n.data == NULL, "%s: load_header returned data", label);
            else
                CHECK(same && n.data != NULL &&
                      memcmp(n.data, ref.data, (size_t)ref.nbytes) == 0,
                      "%s: %s: data differs from parse's", label, forms[form]);
        }
        if (st == WGNN_OK)
            wgnn_npy_free(&n);
        if (fd >= 0)
            close(fd);
    }
    remove(path);
    wgnn_npy_free(&ref);
}

/* Parses buf and checks the result has this dtype and shape, and its data
 * equals `data` when that is given. */
void expect_ok(const char *label, const void *buf, size_t len, wgnn_dtype dtype, int rank,
                      const int64_t *dims, const void *data)
{
    wgnn_npy n;
    char err[256];
    wgnn_status st = wgnn_npy_parse(buf, len, &n, err, sizeof err);
    CHECK(st == WGNN_OK, "%s: status %d (%s)", label, (int)st, err);
    if (st != WGNN_OK)
        return;
    uint64_t numel = 1;
    for (int i = 0; i < rank; i++)
        numel *= (uint64_t)dims[i];
    size_t esize = dtype == WGNN_F16 ? 2 : 4;
    int same = n.dtype == dtype && n.rank == rank && n.numel == numel && n.nbytes == numel * esize &&
               n.data != NULL && err[0] == '\0';
    for (int i = 0; same && i < rank; i++)
        same = n.dims[i] == dims[i];
    CHECK(same, "%s: got dtype %d rank %d numel %llu nbytes %llu", label, (int)n.dtype, n.rank,
          (unsigned long long)n.numel, (unsigned long long)n.nbytes);
    if (same && data)
        CHECK(memcmp(n.data, data, (size_t)n.nbytes) == 0, "%s: data differs", label);
    wgnn_npy_free(&n);
    CHECK(n.data == NULL, "%s: free left data set", label);
    check_file_forms(label, buf, len);
}

/* Parses buf and checks it fails with `status` and a message containing
 * `needle`, leaving the output empty. */
void expect_fail(const char *label, const void *buf, size_t len, wgnn_status status,
                        const char *needle)
{
    wgnn_npy n;
    char err[256];
    memset(&n, 0xab, sizeof n);
    wgnn_status st = wgnn_npy_parse(buf, len, &n, err, sizeof err);
    CHECK(st == status, "%s: status %d, want %d (%s)", label, (int)st, (int)status, err);
    CHECK(strstr(err, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", label, err, needle);
    CHECK(strncmp(err, "npy: ", 5) == 0, "%s: message \"%s\" lacks the npy: prefix", label, err);
    CHECK(npy_is_empty(&n), "%s: output not left empty", label);
    wgnn_npy_free(&n);
    check_file_forms(label, buf, len);
}

void expect_fail_dict(const char *label, const char *dict, size_t data_len,
                             wgnn_status status, const char *needle)
{
    static const unsigned char zeros[64];
    size_t len;
    unsigned char *b = build(1, 0, dict, 1, -1, zeros, data_len, &len);
    expect_fail(label, b, len, status, needle);
    free(b);
}

unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *b = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            unsigned char *nb = realloc(b, cap);
            if (nb == NULL) {
                free(b);
                fclose(f);
                return NULL;
            }
            b = nb;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *len = n;
    return b;
}

int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int file_exists(const char *path)
{
    struct stat s;
    return stat(path, &s) == 0;
}

/* Entries in dir other than "." and "..". */
int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            count++;
    }
    closedir(d);
    return count;
}

static uint32_t g_rng = 12345u;
unsigned char rnd_byte(void)
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return (unsigned char)(g_rng >> 24);
}

/* ---- cases -------------------------------------------------------------- */

static void test_numpy_files(void)
{
    static const float f4[6] = {0, 1, 2, 3, 4, 5};
    static const int32_t i4[3] = {-1, 0, 7};
    static const uint16_t f2 = 0x3e00; /* 1.5 */
    const int64_t d23[2] = {2, 3}, d3[1] = {3};
    expect_ok("numpy f4 (2, 3)", np_f4_2x3, sizeof np_f4_2x3, WGNN_F32, 2, d23, f4);
    expect_ok("numpy i4 (3,)", np_i4_3, sizeof np_i4_3, WGNN_I32, 1, d3, i4);
    expect_ok("numpy f2 ()", np_f2_scalar, sizeof np_f2_scalar, WGNN_F16, 0, NULL, &f2);
    expect_ok("numpy v2.0", np_f4_2x3_v2, sizeof np_f4_2x3_v2, WGNN_F32, 2, d23, f4);
    expect_ok("numpy v3.0", np_f4_2x3_v3, sizeof np_f4_2x3_v3, WGNN_F32, 2, d23, f4);
    expect_fail("numpy >f4", np_f4_be, sizeof np_f4_be, WGNN_ERR_FORMAT,
                "big-endian dtype '>f4'");
    expect_fail("numpy <f8", np_f8, sizeof np_f8, WGNN_ERR_FORMAT,
                "unsupported dtype '<f8' (wgnn reads <f4, <i4, <f2)");
    expect_fail("numpy fortran", np_fortran, sizeof np_fortran, WGNN_ERR_FORMAT,
                "fortran_order True");
    expect_fail("numpy |b1", np_bool, sizeof np_bool, WGNN_ERR_FORMAT, "unsupported dtype '|b1'");
}

static void test_handwritten_headers(void)
{
    static const float f4[6] = {1, 2, 3, 4, 5, 6};
    const int64_t d23[2] = {2, 3}, d4[1] = {4}, d8[8] = {1, 1, 1, 1, 1, 1, 1, 2};
    static const struct { const char *label, *dict; int major; wgnn_dtype dtype; int rank;
                          const int64_t *dims; } ok[] = {
        {"no trailing comma", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 1,
         WGNN_F32, 2, NULL},
        {"trailing comma in shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,), }",
         1, WGNN_F32, 2, NULL},
        {"no spaces", "{'descr':'<f4','fortran_order':False,'shape':(2,3)}", 1, WGNN_F32, 2, NULL},
        {"lots of whitespace",
         "  {\n 'fortran_order' : False ,\t'shape' :\n( 2 ,\r\n 3 ) ,'descr':'<f4' ,\n}\n\n", 1,
         WGNN_F32, 2, NULL},
        {"double quotes", "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}", 1,
         WGNN_F32, 2, NULL},
        {"python 2 longs", "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", 1,
         WGNN_F32, 2, NULL},
        {"v2 hand-written", "{'shape': (2, 3), 'descr': '<f4', 'fortran_order': False}", 2,
         WGNN_F32, 2, NULL},
        {"v3 hand-written", "{'shape': (2, 3), 'descr': '<f4', 'fortran_order': False}", 3,
         WGNN_F32, 2, NULL},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        for (int pad = 0; pad <= 1; pad++) {
            size_t len;
            unsigned char *b = build(ok[i].major, 0, ok[i].dict, pad, -1, f4, sizeof f4, &len);
            char label[128];
            snprintf(label, sizeof label, "%s%s", ok[i].label, pad ? " (padded)" : "");
            expect_ok(label, b, len, ok[i].dtype, ok[i].rank, d23, f4);
            free(b);
        }
    }

    /* Every order of the three keys. */
    static const char *entries[3] = {"'descr': '<i4'", "'fortran_order': False", "'shape': (4,)"};
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int p = 0; p < 6; p++) {
        char dict[160];
        snprintf(dict, sizeof dict, "{%s, %s, %s, }", entries[perms[p][0]], entries[perms[p][1]],
                 entries[perms[p][2]]);
        size_t len;
        unsigned char *b = build(1, 0, dict, 1, -1, f4, 16, &len);
        char label[64];
        snprintf(label, sizeof label, "key order %d%d%d", perms[p][0], perms[p][1], perms[p][2]);
        expect_ok(label, b, len, WGNN_I32, 1, d4, f4);
        free(b);
    }

    size_t len;
    unsigned char *b = build(1, 0, "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 1, "
                             "1, 1, 1, 1, 2), }", 1, -1, f4, 4, &len);
    expect_ok("rank 8", b, len, WGNN_F16, 8, d8, f4);
    free(b);
    b = build(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': ( ), }", 1, -1, f4, 4, &len);
    const int64_t none[1] = {0};
    expect_ok("scalar ( )", b, len, WGNN_F32, 0, none, f4);
    free(b);
}

static void test_malformed(void)
{
    const char *good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    static const unsigned char zeros[64];
    size_t len;
    unsigned char *b;

    expect_fail("empty file", "", 0, WGNN_ERR_FORMAT, "empty");
    expect_fail("5-byte file", "\x93NUMP", 5, WGNN_ERR_FORMAT, "too short (5 bytes)");
    expect_fail("magic only", "\x93NUMPY\x01\x00", 8, WGNN_ERR_FORMAT, "too short (8 bytes)");
    expect_fail("v2 short length", "\x93NUMPY\x02\x00\x10\x00\x00", 11, WGNN_ERR_FORMAT,
                "too short (11 bytes)");
    expect_fail("text file", "hello, world\n", 13, WGNN_ERR_FORMAT, "bad magic");

    b = build(1, 0, good, 1, -1, zeros, 24, &len);
    b[5] = 'Z';
    expect_fail("bad magic", b, len, WGNN_ERR_FORMAT, "not a .npy file (bad magic");
    free(b);
    b = build(4, 0, good, 1, -1, zeros, 24, &len);
    expect_fail("version 4", b, len, WGNN_ERR_FORMAT, "unsupported format version 4.0");
    free(b);
    b = build(1, 1, good, 1, -1, zeros, 24, &len);
    expect_fail("version 1.1", b, len, WGNN_ERR_FORMAT, "unsupported format version 1.1");
    free(b);
    b = build(0, 0, good, 1, -1, zeros, 24, &len);
    expect_fail("version 0", b, len, WGNN_ERR_FORMAT, "unsupported format version 0.0");
    free(b);
    b = build(1, 0, good, 0, 60000, NULL, 0, &len);
    expect_fail("header length past end", b, len, WGNN_ERR_FORMAT,
                "header length 60000 runs past the end");
    free(b);
    b = build(2, 0, good, 0, 2 * 1024 * 1024, NULL, 0, &len);
    expect_fail("2 MiB header length", b, len, WGNN_ERR_FORMAT, "header too long");
    free(b);
    b = build(2, 0, good, 0, 0xffffffffLL, NULL, 0, &len);
    expect_fail("4 GiB header length", b, len, WGNN_ERR_FORMAT, "header too long");
    free(b);
    b = build(1, 0, good, 1, -1, zeros, 20, &len);
    expect_fail("truncated data", b, len, WGNN_ERR_FORMAT,
                "truncated: expected 24 data bytes, found 20");
    free(b);
    b = build(1, 0, good, 1, -1, zeros, 0, &len);
    expect_fail("no data", b, len, WGNN_ERR_FORMAT, "truncated: expected 24 data bytes, found 0");
    free(b);
    b = build(1, 0, good, 1, -1, zeros, 28, &len);
    expect_fail("trailing data", b, len, WGNN_ERR_FORMAT, "4 trailing bytes");
    free(b);
    b = build(1, 0, good, 1, 40, zeros, 24, &len);
    expect_fail("header length cuts the dict", b, len, WGNN_ERR_FORMAT, "not closed");
    free(b);

    expect_fail_dict("<f8", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16,
                     WGNN_ERR_FORMAT, "unsupported dtype '<f8' (wgnn reads <f4, <i4, <f2)");
    expect_fail_dict("<i8", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 16,
                     WGNN_ERR_FORMAT, "unsupported dtype '<i8'");
    expect_fail_dict("|u1", "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", 2,
                     WGNN_ERR_FORMAT, "unsupported dtype '|u1'");
    expect_fail_dict("|f4", "{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", 8,
                     WGNN_ERR_FORMAT, "unsupported dtype '|f4'");
    expect_fail_dict("=f4", "{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }", 8,
                     WGNN_ERR_FORMAT, "unsupported dtype '=f4'");
    expect_fail_dict("object", "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16,
                     WGNN_ERR_FORMAT, "unsupported dtype '|O'");
    expect_fail_dict(">f4", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8,
                     WGNN_ERR_FORMAT, "big-endian dtype '>f4'");
    expect_fail_dict(">i4", "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", 8,
                     WGNN_ERR_FORMAT, "big-endian dtype '>i4'");
    expect_fail_dict("structured",
                     "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, "
                     "'shape': (2,), }", 16, WGNN_ERR_FORMAT, "structured");
    expect_fail_dict("descr not a string",
                     "{'descr': 5, 'fortran_order': False, 'shape': (2,), }", 8,
                     WGNN_ERR_FORMAT, "dtype string");
    expect_fail_dict("fortran_order True",
                     "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24,
                     WGNN_ERR_FORMAT, "fortran_order True");
    expect_fail_dict("fortran_order 0",
                     "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", 24,
                     WGNN_ERR_FORMAT, "True or False");
    expect_fail_dict("rank 9",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, "
                     "2), }", 8, WGNN_ERR_FORMAT, "rank 9 exceeds the maximum of 8");
    expect_fail_dict("rank 40",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, "
                     "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
                     "1, 1, 1, 1, 1, 1, 1), }", 4, WGNN_ERR_FORMAT, "rank 40 exceeds");
    expect_fail_dict("negative dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
                     24, WGNN_ERR_FORMAT, "negative dimension");
    expect_fail_dict("zero dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0), }", 0,
                     WGNN_ERR_FORMAT,
                     "has a zero-sized dimension; wgnn tensors need every dim >= 1");
    expect_fail_dict("numel overflow",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
                     16, WGNN_ERR_FORMAT, "element count overflows 64 bits");
    expect_fail_dict("bytes overflow",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }",
                     16, WGNN_ERR_FORMAT, "byte count overflows 64 bits");
    expect_fail_dict("huge but no overflow",
                     "{'descr': '<f2', 'fortran_order': False, 'shape': (4611686018427387904,), }",
                     16, WGNN_ERR_FORMAT, "truncated: expected 9223372036854775808 data bytes");
    expect_fail_dict("dim past int64",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                     16, WGNN_ERR_FORMAT, "too large");
    expect_fail_dict("dim INT64_MAX",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807,), }",
                     16, WGNN_ERR_FORMAT, "byte count overflows");
    expect_fail_dict("unterminated dict",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", 24,
                     WGNN_ERR_FORMAT, "not closed");
    expect_fail_dict("unterminated tuple",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 24,
                     WGNN_ERR_FORMAT, "header ends where");
    expect_fail_dict("unbalanced quotes", "{'descr': '<f4, 'fortran_order': False}", 24,
                     WGNN_ERR_FORMAT, "unsupported dtype '<f4, '");
    expect_fail_dict("string runs to the end", "{'descr", 24, WGNN_ERR_FORMAT,
                     "unterminated string");
    expect_fail_dict("escape in string",
                     "{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (2, 3), }", 24,
                     WGNN_ERR_FORMAT, "escape");
    expect_fail_dict("missing shape", "{'descr': '<f4', 'fortran_order': False, }", 4,
                     WGNN_ERR_FORMAT, "missing the 'shape' key");
    expect_fail_dict("missing descr", "{'fortran_order': False, 'shape': (1,), }", 4,
                     WGNN_ERR_FORMAT, "missing the 'descr' key");
    expect_fail_dict("missing fortran_order", "{'descr': '<f4', 'shape': (1,), }", 4,
                     WGNN_ERR_FORMAT, "missing the 'fortran_order' key");
    expect_fail_dict("empty dict", "{}", 4, WGNN_ERR_FORMAT, "missing the 'descr' key");
    expect_fail_dict("garbage in shape",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 24,
                     WGNN_ERR_FORMAT, "expected a dimension in 'shape'");
    expect_fail_dict("garbage after dim",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 24,
                     WGNN_ERR_FORMAT, "expected ',' or ')' in 'shape'");
    expect_fail_dict("double comma",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3), }", 24,
                     WGNN_ERR_FORMAT, "dimension in 'shape'");
    expect_fail_dict("shape not a tuple",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", 12,
                     WGNN_ERR_FORMAT, "not a tuple");
    expect_fail_dict("shape a list",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", 24,
                     WGNN_ERR_FORMAT, "tuple");
    expect_fail_dict("shape a float",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,), }", 8,
                     WGNN_ERR_FORMAT, "',' or ')'");
    expect_fail_dict("unknown key",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'foo': 1}", 8,
                     WGNN_ERR_FORMAT, "unexpected key 'foo'");
    expect_fail_dict("duplicate key",
                     "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8,
                     WGNN_ERR_FORMAT, "duplicate key 'descr'");
    expect_fail_dict("no colon", "{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", 8,
                     WGNN_ERR_FORMAT, "':'");
    expect_fail_dict("no comma", "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", 8,
                     WGNN_ERR_FORMAT, "',' or '}'");
    expect_fail_dict("unquoted key", "{descr: '<f4', 'fortran_order': False, 'shape': (2,)}", 8,
                     WGNN_ERR_FORMAT, "quoted key");
    expect_fail_dict("no dict", "'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8,
                     WGNN_ERR_FORMAT, "'{'");
    expect_fail_dict("text after dict",
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 8,
                     WGNN_ERR_FORMAT, "only padding");
    static const char nul_dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\0 ";
    {
        /* A NUL inside the header, which strlen-based code would stop at. */
        size_t dlen = sizeof nul_dict - 1, total = 10 + dlen + 8;
        unsigned char *nb = calloc(1, total);
        if (nb == NULL)
            exit(2);
        memcpy(nb, "\x93NUMPY\x01\x00", 8);
        nb[8] = (unsigned char)dlen;
        memcpy(nb + 10, nul_dict, dlen);
        expect_fail("NUL in header", nb, total, WGNN_ERR_FORMAT, "only padding");
        free(nb);
    }
}

static void test_args_and_errors(void)
{
    wgnn_npy n;
    char err[64];
    CHECK(wgnn_npy_parse(NULL, 10, &n, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT,
          "parse(NULL buf)");
    CHECK(wgnn_npy_parse(np_f4_2x3, sizeof np_f4_2x3, NULL, err, sizeof err) ==
          WGNN_ERR_INVALID_ARGUMENT, "parse(NULL out)");
    CHECK(wgnn_npy_load(NULL, &n, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT, "load(NULL)");
    CHECK(wgnn_npy_parse(np_f8, sizeof np_f8, &n, NULL, 0) == WGNN_ERR_FORMAT, "err NULL");
    CHECK(wgnn_npy_parse(np_f8, sizeof np_f8, &n, NULL, 100) == WGNN_ERR_FORMAT,
          "err NULL, err_len 100");
    memset(err, 'X', sizeof err);
    CHECK(wgnn_npy_parse(np_f8, sizeof np_f8, &n, err, 0) == WGNN_ERR_FORMAT, "err_len 0");
    CHECK(err[0] == 'X', "err_len 0 wrote into err");
    CHECK(wgnn_npy_parse(np_f8, sizeof np_f8, &n, err, 1) == WGNN_ERR_FORMAT && err[0] == '\0' &&
          err[1] == 'X', "err_len 1");
    CHECK(wgnn_npy_parse(np_f8, sizeof np_f8, &n, err, 8) == WGNN_ERR_FORMAT &&
          strcmp(err, "npy: un") == 0 && err[8] == 'X', "err_len 8: \"%.8s\"", err);

    wgnn_npy_free(NULL);
    memset(&n, 0, sizeof n);
    wgnn_npy_free(&n);
    CHECK(wgnn_npy_parse(np_f4_2x3, sizeof np_f4_2x3, &n, err, sizeof err) == WGNN_OK, "parse");
    wgnn_npy_free(&n);
    wgnn_npy_free(&n); /* data is NULL now: a no-op */
    CHECK(n.data == NULL, "free leaves data NULL");
}

int main(void)
{
    char *dir = g_dir;
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    test_numpy_files();
    test_handwritten_headers();
    test_malformed();
    test_args_and_errors();
    test_roundtrips(dir);
    test_save_matches_numpy(dir);
    test_file_errors(dir);
    test_load_streams_and_devices(dir);
    test_load_header(dir);
    test_save_targets(dir);
    rmdir(dir);
    return tu_finish();
}

