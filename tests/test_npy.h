/* test_npy.h - what tests/test_npy.c (parsing .npy bytes: numpy's files,
 * hand-written and malformed headers, arguments) and tests/npy_files.c
 * (saving and loading through paths, pipes and devices) share: testutil.h's
 * CHECK with one pair of counters, numpy's own files as bytes, and helpers.
 * One executable, test_npy; of wgnn it needs only src/io/npy.c and
 * npy_write.c. */
#ifndef WGNN_TEST_NPY_H
#define WGNN_TEST_NPY_H

#define _POSIX_C_SOURCE 200809L /* mkdtemp, getpid, dirent */
#define _XOPEN_SOURCE 700        /* mknod */

#define TU_SHARED_COUNTERS /* tu_pass, tu_fail: tests/test_npy.c */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h> /* makedev */
#include <sys/wait.h>
#include <unistd.h>

extern char g_dir[]; /* a scratch folder, made by main */

/* Files exactly as numpy 1.24 writes them (tests/test_npy.c has the calls). */
extern const unsigned char np_f4_2x3[152];
extern const unsigned char np_i4_3[140];
extern const unsigned char np_f2_scalar[130];
extern const unsigned char np_f4_2x3_v2[152];
extern const unsigned char np_f4_2x3_v3[152];
extern const unsigned char np_f4_be[136];
extern const unsigned char np_f8[144];
extern const unsigned char np_fortran[152];
extern const unsigned char np_bool[130];

/* Helpers (tests/test_npy.c). */
unsigned char *build(int major, int minor, const char *dict, int pad, long long hlen_field,
                            const void *data, size_t data_len, size_t *out_len);
int npy_is_empty(const wgnn_npy *n);
int pipe_with(const void *buf, size_t len);
void check_file_forms(const char *label, const void *buf, size_t len);
void expect_ok(const char *label, const void *buf, size_t len, wgnn_dtype dtype, int rank,
                      const int64_t *dims, const void *data);
void expect_fail(const char *label, const void *buf, size_t len, wgnn_status status,
                        const char *needle);
void expect_fail_dict(const char *label, const char *dict, size_t data_len,
                             wgnn_status status, const char *needle);
unsigned char *read_file(const char *path, size_t *len);
int write_file(const char *path, const void *data, size_t len);
int file_exists(const char *path);
int dir_entries(const char *dir);
unsigned char rnd_byte(void);

/* The file and stream tests (tests/npy_files.c), each given the scratch folder. */
void test_roundtrips(const char *dir);
void test_save_matches_numpy(const char *dir);
void test_file_errors(const char *dir);
void test_load_streams_and_devices(const char *dir);
void test_load_header(const char *dir);
void test_save_targets(const char *dir);

#endif
