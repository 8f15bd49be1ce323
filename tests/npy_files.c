/*
 * npy_files.c - .npy files and streams: round trips of every dtype and
 * rank, wgnn's output byte for byte against numpy's, file errors (missing,
 * unreadable, full disks), loading from pipes and devices, load_header, and
 * where saves may and may not write. Run by test_npy's main (tests/test_npy.c).
 */
#include "test_npy.h"

static void roundtrip(const char *dir, wgnn_dtype dtype, int rank, const int64_t *dims)
{
    char path[512], label[160];
    size_t esize = dtype == WGNN_F16 ? 2 : 4;
    uint64_t numel = 1;
    int pos = snprintf(label, sizeof label, "roundtrip dtype %d (", (int)dtype);
    for (int i = 0; i < rank; i++) {
        numel *= (uint64_t)dims[i];
        pos += snprintf(label + pos, sizeof label - (size_t)pos, i ? ",%lld" : "%lld",
                        (long long)dims[i]);
    }
    snprintf(label + pos, sizeof label - (size_t)pos, ")");
    size_t nbytes = (size_t)numel * esize;
    unsigned char *data = malloc(nbytes);
    for (size_t i = 0; i < nbytes; i++)
        data[i] = rnd_byte();
    snprintf(path, sizeof path, "%s/t.npy", dir);

    char err[256];
    wgnn_status st = wgnn_npy_save(path, dtype, rank, dims, data, err, sizeof err);
    CHECK(st == WGNN_OK, "%s: save: %s", label, err);
    wgnn_npy n;
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_OK, "%s: load: %s", label, err);
    if (st == WGNN_OK) {
        int same = n.dtype == dtype && n.rank == rank && n.numel == numel && n.nbytes == nbytes;
        for (int i = 0; same && i < rank; i++)
            same = n.dims[i] == dims[i];
        CHECK(same, "%s: shape differs after load", label);
        CHECK(same && memcmp(n.data, data, nbytes) == 0, "%s: data differs after load", label);
    }
    wgnn_npy_free(&n);

    /* numpy's layout: header (prefix + dict + pad + '\n') a multiple of 64. */
    size_t flen = 0;
    unsigned char *file = read_file(path, &flen);
    CHECK(file != NULL && flen >= nbytes + 64, "%s: file size %zu", label, flen);
    if (file != NULL && flen >= nbytes + 64) {
        size_t hdr = flen - nbytes;
        size_t hlen = (size_t)file[8] | (size_t)file[9] << 8;
        CHECK(hdr % 64 == 0 && file[6] == 1 && file[7] == 0 && hlen + 10 == hdr &&
              file[hdr - 1] == '\n', "%s: header of %zu bytes is not numpy's layout", label, hdr);
        CHECK(memcmp(file + hdr, data, nbytes) == 0, "%s: data bytes in file differ", label);
    }
    free(file);
    CHECK(dir_entries(dir) == 1, "%s: %d files in the temp dir, want 1", label, dir_entries(dir));
    remove(path);
    free(data);
}

void test_roundtrips(const char *dir)
{
    static const int64_t base[WGNN_MAX_RANK] = {3, 1, 2, 5, 1, 2, 1, 3};
    static const wgnn_dtype types[3] = {WGNN_F32, WGNN_I32, WGNN_F16};
    for (int t = 0; t < 3; t++) {
        for (int rank = 0; rank <= WGNN_MAX_RANK; rank++)
            roundtrip(dir, types[t], rank, base);
        static const int64_t odd[][4] = {{7}, {1023}, {13, 17}, {1, 1, 1}, {3, 5, 7},
                                         {1, 97, 1, 3}, {65537}, {2, 1000003}};
        static const int ranks[] = {1, 1, 2, 3, 3, 4, 1, 2};
        for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
            roundtrip(dir, types[t], ranks[i], odd[i]);
    }
}

/* What wgnn writes is byte for byte what numpy writes. */
void test_save_matches_numpy(const char *dir)
{
    static const float f4[6] = {0, 1, 2, 3, 4, 5};
    static const int32_t i4[3] = {-1, 0, 7};
    static const uint16_t f2 = 0x3e00;
    const int64_t d23[2] = {2, 3}, d3[1] = {3};
    static const struct { const char *label; wgnn_dtype dtype; int rank; const int64_t *dims;
                          const void *data; const unsigned char *want; size_t want_len; } cases[] = {
        {"f4 (2, 3)", WGNN_F32, 2, NULL, f4, np_f4_2x3, sizeof np_f4_2x3},
        {"i4 (3,)", WGNN_I32, 1, NULL, i4, np_i4_3, sizeof np_i4_3},
        {"f2 ()", WGNN_F16, 0, NULL, &f2, np_f2_scalar, sizeof np_f2_scalar},
    };
    const int64_t *dims[3] = {d23, d3, NULL};
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/np.npy", dir);
    for (int i = 0; i < 3; i++) {
        wgnn_status st = wgnn_npy_save(path, cases[i].dtype, cases[i].rank, dims[i], cases[i].data,
                                       err, sizeof err);
        CHECK(st == WGNN_OK, "save %s: %s", cases[i].label, err);
        size_t len = 0;
        unsigned char *got = read_file(path, &len);
        CHECK(got != NULL && len == cases[i].want_len && memcmp(got, cases[i].want, len) == 0,
              "save %s: bytes differ from numpy's (%zu vs %zu bytes)", cases[i].label, len,
              cases[i].want_len);
        free(got);
    }
    remove(path);
}

void test_file_errors(const char *dir)
{
    char path[512], err[512];
    const int64_t d2[2] = {2, 3}, dzero[2] = {2, 0}, d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const float f4[6];
    wgnn_npy n;
    int before = dir_entries(dir);

    snprintf(path, sizeof path, "%s/no/such/dir/x.npy", dir);
    wgnn_status st = wgnn_npy_save(path, WGNN_F32, 2, d2, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_IO, "save into missing dir: status %d", (int)st);
    CHECK(strstr(err, "No such file or directory") && strstr(err, "/no/such/dir/x.npy"),
          "save into missing dir: \"%s\"", err);
    CHECK(!file_exists(path), "save into missing dir left a file");

    snprintf(path, sizeof path, "%s/bad.npy", dir);
    st = wgnn_npy_save(path, WGNN_F32, 9, d9, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT && strstr(err, "rank 9"), "save rank 9: %d \"%s\"",
          (int)st, err);
    st = wgnn_npy_save(path, WGNN_F32, -1, d2, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT, "save rank -1: %d", (int)st);
    st = wgnn_npy_save(path, WGNN_F32, 2, dzero, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT && strstr(err, ">= 1"), "save dim 0: %d \"%s\"",
          (int)st, err);
    st = wgnn_npy_save(path, WGNN_F32, 2, d2, NULL, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT, "save NULL data: %d", (int)st);
    st = wgnn_npy_save(path, WGNN_F32, 2, NULL, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT, "save NULL dims: %d", (int)st);
    st = wgnn_npy_save(NULL, WGNN_F32, 2, d2, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT, "save NULL path: %d", (int)st);
    st = wgnn_npy_save(path, (wgnn_dtype)7, 2, d2, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT && strstr(err, "dtype"), "save dtype 7: %d", (int)st);
    const int64_t huge[2] = {INT64_MAX, 2};
    st = wgnn_npy_save(path, WGNN_F32, 2, huge, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_INVALID_ARGUMENT && strstr(err, "too large"), "save huge: %d", (int)st);
    CHECK(!file_exists(path), "failed saves left a file");

    /* The rename fails (the target is a directory): the temp file must go. */
    snprintf(path, sizeof path, "%s/adir", dir);
    mkdir(path, 0700);
    st = wgnn_npy_save(path, WGNN_F32, 2, d2, f4, err, sizeof err);
    CHECK(st == WGNN_ERR_IO && strstr(err, "rename"), "save onto a dir: %d \"%s\"", (int)st, err);
    CHECK(dir_entries(dir) == before + 1, "save onto a dir left a temp file");
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_IO && strstr(err, path), "load a dir: %d \"%s\"", (int)st, err);
    CHECK(npy_is_empty(&n), "load a dir: output not empty");
    rmdir(path);

    /* Save replaces an existing file whole. */
    snprintf(path, sizeof path, "%s/over.npy", dir);
    write_file(path, "old contents that are not npy", 29);
    st = wgnn_npy_save(path, WGNN_F32, 1, d2 + 1, f4, err, sizeof err);
    CHECK(st == WGNN_OK, "save over a file: %s", err);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_OK && n.rank == 1 && n.dims[0] == 3, "load after overwrite: %s", err);
    wgnn_npy_free(&n);
    remove(path);

    snprintf(path, sizeof path, "%s/missing.npy", dir);
    memset(&n, 0xab, sizeof n);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_IO && strstr(err, path) && strstr(err, "No such file"),
          "load missing: %d \"%s\"", (int)st, err);
    CHECK(npy_is_empty(&n), "load missing: output not empty");

    /* Format errors from a file name the file. */
    snprintf(path, sizeof path, "%s/trunc.npy", dir);
    write_file(path, np_f4_2x3, sizeof np_f4_2x3 - 1);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_FORMAT && strstr(err, path) &&
          strstr(err, "truncated: expected 24 data bytes, found 23"), "load truncated: \"%s\"",
          err);
    write_file(path, "", 0);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_FORMAT && strstr(err, "empty"), "load empty: \"%s\"", err);
    write_file(path, np_f4_2x3_v2, sizeof np_f4_2x3_v2);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_OK && n.numel == 6 && ((const float *)n.data)[5] == 5.0f,
          "load numpy v2 file: \"%s\"", err);
    wgnn_npy_free(&n);
    remove(path);
    CHECK(dir_entries(dir) == before, "files left behind in %s", dir);
}

/* ---- inputs that are not regular files; header-only reads ----------------- */

static long max_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

void test_load_streams_and_devices(const char *dir)
{
    char path[512], err[512];
    wgnn_npy n;
    wgnn_status st;

    /* A pipe (bash's <(cat x.npy)) is read as a stream. */
    int fd = pipe_with(np_f4_2x3, sizeof np_f4_2x3);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_OK && n.numel == 6 && ((const float *)n.data)[5] == 5.0f,
          "load from a pipe: %d \"%s\"", (int)st, err);
    wgnn_npy_free(&n);
    close(fd);

    /* load_header leaves a pipe alone: the data is still there for load. */
    fd = pipe_with(np_f4_2x3, sizeof np_f4_2x3);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    st = wgnn_npy_load_header(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_UNSUPPORTED && strstr(err, path) && strstr(err, "wgnn_npy_load") &&
          npy_is_empty(&n), "load_header of a pipe: %d \"%s\"", (int)st, err);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_OK && n.numel == 6, "load after load_header of a pipe: %d \"%s\"", (int)st,
          err);
    wgnn_npy_free(&n);
    close(fd);

    /* A device is refused by what it is, not as "file is empty". */
    st = wgnn_npy_load("/dev/zero", &n, err, sizeof err);
    CHECK(st == WGNN_ERR_IO && strstr(err, "/dev/zero") && strstr(err, "not a regular file") &&
          strstr(err, "character device") && npy_is_empty(&n), "load /dev/zero: %d \"%s\"",
          (int)st, err);
    st = wgnn_npy_load_header("/dev/zero", &n, err, sizeof err);
    CHECK(st == WGNN_ERR_IO && strstr(err, "character device"), "load_header /dev/zero: \"%s\"",
          err);
    st = wgnn_npy_load(dir, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_IO && strstr(err, "is a directory"), "load a dir: \"%s\"", err);

    /* An endless stream behind a valid header: the declared 16 bytes are
     * read, then the reader stops counting trailing bytes and fails. */
    snprintf(path, sizeof path, "%s/endless", dir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s: %s", path, strerror(errno));
    pid_t child = fork();
    if (child == 0) {
        static unsigned char junk[65536];
        size_t len;
        unsigned char *b = build(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
                                 1, -1, junk, 16, &len);
        signal(SIGPIPE, SIG_IGN);
        int w = open(path, O_WRONLY);
        if (w < 0 || write(w, b, len) != (ssize_t)len)
            _exit(1);
        while (write(w, junk, sizeof junk) > 0) {
        }
        _exit(0); /* the reader went away */
    }
    long rss0 = max_rss_kib();
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_FORMAT && strstr(err, "trailing bytes after the 16 data bytes") &&
          npy_is_empty(&n), "endless FIFO: %d \"%s\"", (int)st, err);
    CHECK(max_rss_kib() - rss0 < 16 * 1024, "endless FIFO grew the RSS by %ld KiB",
          max_rss_kib() - rss0);
    if (child > 0)
        waitpid(child, NULL, 0);
    remove(path);
}

/* A file of `total` bytes (sparse: no disk, no page cache) whose header says
 * float32 `shape`. Returns the header size, 0 on failure. */
static size_t write_sparse(const char *path, const char *shape, unsigned long long data_bytes)
{
    char dict[160];
    size_t len;
    snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
    unsigned char *b = build(1, 0, dict, 1, -1, NULL, 0, &len);
    int ok = write_file(path, b, len) == 0 && truncate(path, (off_t)(len + data_bytes)) == 0;
    free(b);
    return ok ? len : 0;
}

void test_load_header(const char *dir)
{
    char path[512], err[512];
    wgnn_npy n;
    wgnn_status st;

    CHECK(wgnn_npy_load_header(NULL, &n, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT &&
          strstr(err, "path is NULL"), "load_header(NULL path): \"%s\"", err);
    CHECK(wgnn_npy_load_header("x.npy", NULL, err, sizeof err) == WGNN_ERR_INVALID_ARGUMENT,
          "load_header(NULL out)");
    snprintf(path, sizeof path, "%s/missing.npy", dir);
    st = wgnn_npy_load_header(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_IO && strstr(err, "No such file") && npy_is_empty(&n),
          "load_header missing: \"%s\"", err);

    /* 1 GiB declared and present (sparse): the header is all that is read. */
    snprintf(path, sizeof path, "%s/big.npy", dir);
    long rss0 = max_rss_kib();
    size_t hsize = write_sparse(path, "(1, 1, 16384, 16384)", 1ull << 30);
    CHECK(hsize > 0, "cannot make %s", path);
    st = wgnn_npy_load_header(path, &n, err, sizeof err);
    CHECK(st == WGNN_OK && n.data == NULL && n.rank == 4 && n.dims[2] == 16384 &&
          n.dims[3] == 16384 && n.numel == 1ull << 28 && n.nbytes == 1ull << 30,
          "load_header of a 1 GiB file: %d \"%s\"", (int)st, err);
    wgnn_npy_free(&n);

    /* One byte short, one byte over: refused from the sizes alone, by
     * load_header and by load, before a 1 GiB buffer is ever filled. */
    CHECK(truncate(path, (off_t)(hsize + (1ull << 30) - 1)) == 0, "truncate");
    st = wgnn_npy_load_header(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_FORMAT && strstr(err, "truncated: expected 1073741824 data bytes, found "
          "1073741823"), "load_header of a short file: \"%s\"", err);
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_FORMAT && strstr(err, "truncated") && npy_is_empty(&n),
          "load of a short file: \"%s\"", err);
    CHECK(truncate(path, (off_t)(hsize + (1ull << 30) + 1)) == 0, "truncate");
    st = wgnn_npy_load(path, &n, err, sizeof err);
    CHECK(st == WGNN_ERR_FORMAT && strstr(err, "1 trailing bytes"), "load of a long file: \"%s\"",
          err);
    CHECK(max_rss_kib() - rss0 < 64 * 1024, "checking a 1 GiB file grew the RSS by %ld KiB",
          max_rss_kib() - rss0);
    remove(path);
}

/* ---- outputs that are not regular files --------------------------------------- */

static int is_kind(const char *path, mode_t kind)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && (sb.st_mode & S_IFMT) == kind;
}

void test_save_targets(const char *dir)
{
    char path[512], other[512], err[512];
    static const float f4[6] = {0, 1, 2, 3, 4, 5};
    const int64_t d23[2] = {2, 3};
    unsigned char got[sizeof np_f4_2x3 + 16];
    wgnn_status st;
    int before = dir_entries(dir);

    /* Device nodes (copies of /dev/full and /dev/null; needs root). */
    snprintf(path, sizeof path, "%s/full", dir);
    if (mknod(path, S_IFCHR | 0600, makedev(1, 7)) != 0) {
        printf("skip: device node tests (mknod: %s; they need root)\n", strerror(errno));
    } else {
        st = wgnn_npy_save(path, WGNN_F32, 2, d23, f4, err, sizeof err);
        CHECK(st == WGNN_ERR_IO && strstr(err, path) && strstr(err, "No space left on device") &&
              !strchr(err, '\n'), "save onto /dev/full: %d \"%s\"", (int)st, err);
        CHECK(is_kind(path, S_IFCHR), "save onto /dev/full replaced the device node");
        remove(path);
        snprintf(path, sizeof path, "%s/null", dir);
        if (mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0) {
            st = wgnn_npy_save(path, WGNN_F32, 2, d23, f4, err, sizeof err);
            CHECK(st == WGNN_OK, "save onto /dev/null: \"%s\"", err);
            CHECK(is_kind(path, S_IFCHR), "save onto /dev/null replaced the device node");
            remove(path);
        }
    }
    CHECK(dir_entries(dir) == before, "saves onto devices left files behind");

    /* A pipe through /dev/fd/N, as /dev/stdout is when piped. */
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    snprintf(path, sizeof path, "/dev/fd/%d", p[1]);
    st = wgnn_npy_save(path, WGNN_F32, 2, d23, f4, err, sizeof err);
    CHECK(st == WGNN_OK, "save into a pipe: \"%s\"", err);
    close(p[1]);
    ssize_t n = read(p[0], got, sizeof got);
    CHECK(n == (ssize_t)sizeof np_f4_2x3 && memcmp(got, np_f4_2x3, sizeof np_f4_2x3) == 0,
          "save into a pipe: %zd bytes, not numpy's %zu", n, sizeof np_f4_2x3);
    close(p[0]);

    /* A FIFO with a reader: written in place, still a FIFO. */
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
    int r = open(path, O_RDONLY | O_NONBLOCK);
    st = wgnn_npy_save(path, WGNN_F32, 2, d23, f4, err, sizeof err);
    CHECK(st == WGNN_OK, "save into a FIFO: \"%s\"", err);
    n = r >= 0 ? read(r, got, sizeof got) : -1;
    CHECK(n == (ssize_t)sizeof np_f4_2x3 && memcmp(got, np_f4_2x3, sizeof np_f4_2x3) == 0,
          "save into a FIFO: read %zd bytes", n);
    CHECK(is_kind(path, S_IFIFO), "save into a FIFO replaced it");
    if (r >= 0)
        close(r);
    remove(path);

    /* A symlink is written through; the link stays a link. */
    snprintf(path, sizeof path, "%s/link.npy", dir);
    snprintf(other, sizeof other, "%s/target.npy", dir);
    unsigned char old_contents[200];
    memset(old_contents, 'x', sizeof old_contents); /* longer than the new file */
    write_file(other, old_contents, sizeof old_contents);
    CHECK(symlink("target.npy", path) == 0, "symlink: %s", strerror(errno));
    st = wgnn_npy_save(path, WGNN_F32, 2, d23, f4, err, sizeof err);
    CHECK(st == WGNN_OK, "save through a symlink: \"%s\"", err);
    size_t len = 0;
    unsigned char *file = read_file(other, &len);
    CHECK(is_kind(path, S_IFLNK) && file && len == sizeof np_f4_2x3 &&
          memcmp(file, np_f4_2x3, len) == 0, "save through a symlink: link or target wrong");
    free(file);
    remove(path);
    remove(other);

    /* Whatever has the temporary name already (here a symlink planted to
     * make the save overwrite another file) is replaced, never written
     * through. */
    snprintf(path, sizeof path, "%s/out.npy", dir);
    snprintf(other, sizeof other, "%s/out.npy.tmp.%ld", dir, (long)getpid());
    write_file(path, "victim", 6);
    CHECK(symlink("victim", other) == 0, "symlink: %s", strerror(errno));
    snprintf(other, sizeof other, "%s/victim", dir);
    write_file(other, "precious", 8);
    st = wgnn_npy_save(path, WGNN_F32, 2, d23, f4, err, sizeof err);
    CHECK(st == WGNN_OK, "save over a stale temporary: \"%s\"", err);
    file = read_file(other, &len);
    CHECK(file && len == 8 && memcmp(file, "precious", 8) == 0,
          "save wrote through a symlink at the temporary name");
    free(file);
    CHECK(is_kind(path, S_IFREG), "save over a stale temporary: result is not a regular file");
    remove(path);
    remove(other);
    CHECK(dir_entries(dir) == before, "save targets: files left behind in %s", dir);
}

