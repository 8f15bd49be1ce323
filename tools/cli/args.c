/* args.c - the option parser and the helpers every command shares: errors
 * and exit codes, strict value parsing, contexts, random data, JSON, and
 * writing .npy outputs with the temporary file removed on a fatal signal. */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- errors ---------------------------------------------------------------- */

/* Prints "wgnn: [cmd: ]message" and the command's usage to stderr. */
int usage_error(const char *cmd, const char *usage, const char *fmt, ...) {
    va_list ap;
    fputs("wgnn: ", stderr);
    if (cmd) fprintf(stderr, "%s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(usage, stderr);
    return CLI_USAGE;
}

/* Writes a runtime failure message into err (ERR_LEN bytes). */
int set_err(char *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

int ctx_err(char *err, const wgnn_context *ctx, wgnn_status s) {
    const char *m = wgnn_context_error(ctx);
    return set_err(err, "%s", m && *m ? m : wgnn_status_str(s));
}

int report(int rc, const char *err) {
    if (rc == CLI_FAIL) fprintf(stderr, "wgnn: %s\n", err);
    return rc;
}

/* ---- strict value parsing -------------------------------------------------- */

bool parse_int(const char *s, long long lo, long long hi, long long *out) {
    if (!*s || isspace((unsigned char)*s)) return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

int parse_id_list(const char *what, const char *list, long long hi, int32_t **ids, int *n, char *err) {
    int cap = 1;
    for (const char *p = list; *p; p++) cap += *p == ',';
    int32_t *v = malloc((size_t)cap * sizeof *v);
    if (!v) return set_err(err, "%s: out of memory", what);
    int k = 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char num[32];
        long long id = 0;
        if (len == 0) {
            free(v);
            return set_err(err, "%s: expected comma-separated ids, got \"%s\"", what, list);
        }
        if (len >= sizeof num) {
            free(v);
            return set_err(err, "%s: \"%.20s...\" is not an id in [0, %lld)", what, p, hi + 1);
        }
        memcpy(num, p, len);
        num[len] = '\0';
        if (!parse_int(num, 0, hi, &id)) {
            free(v);
            return set_err(err, "%s: \"%s\" is not an id in [0, %lld)", what, num, hi + 1);
        }
        v[k++] = (int32_t)id;
        if (!comma) break;
        p = comma + 1;
    }
    *ids = v;
    *n = k;
    return CLI_OK;
}

int id_list_syntax(const char *cmd, const char *usage, const char *opt, const char *list) {
    int32_t *ids = NULL;
    int n = 0;
    char err[ERR_LEN] = "";
    if (parse_id_list(opt, list, INT32_MAX, &ids, &n, err) != CLI_OK) return usage_error(cmd, usage, "%s", err);
    free(ids);
    return CLI_OK;
}

bool parse_num(const char *s, double *out) {
    if (!*s || isspace((unsigned char)*s)) return false;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* "A,B,C" with every dim in [1, INT32_MAX] and lo <= rank <= hi. */
bool parse_shape(const char *s, int lo, int hi, shape *out) {
    shape sh = {0};
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char num[32];
        long long v;
        if (sh.rank == WGNN_MAX_RANK || len == 0 || len >= sizeof num) return false;
        memcpy(num, p, len);
        num[len] = '\0';
        if (!parse_int(num, 1, INT32_MAX, &v)) return false;
        sh.dims[sh.rank++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    if (sh.rank < lo || sh.rank > hi) return false;
    *out = sh;
    return true;
}

static const char *const k_impl_names[] = {"auto", "three-pass", "fused", "channel"};

const char *impl_name(wgnn_sdpa_impl impl) {
    return (unsigned)impl < sizeof k_impl_names / sizeof k_impl_names[0] ? k_impl_names[impl] : "?";
}

bool parse_impl(const char *s, wgnn_sdpa_impl *out) {
    for (size_t i = 0; i < sizeof k_impl_names / sizeof k_impl_names[0]; i++)
        if (strcmp(s, k_impl_names[i]) == 0) {
            *out = (wgnn_sdpa_impl)i;
            return true;
        }
    return false;
}

/* ---- option tables ----------------------------------------------------------- */

static bool store_value(const opt_spec *o, const char *val) {
    switch (o->kind) {
    case OPT_STR: *(const char **)o->dst = val; return true;
    case OPT_INT: return parse_int(val, o->lo, o->hi, o->dst);
    case OPT_NUM: return parse_num(val, o->dst);
    case OPT_SHAPE: return parse_shape(val, (int)o->lo, (int)o->hi, o->dst);
    case OPT_IMPL: return parse_impl(val, o->dst);
    case OPT_LIST: {
        str_list *l = o->dst;
        if (l->n >= o->hi || l->n >= MAX_LIST) return false;
        l->v[l->n++] = val;
        return true;
    }
    case OPT_FLAG: break;
    }
    return false;
}

static const char *value_hint(const opt_spec *o, char *buf, size_t cap) {
    switch (o->kind) {
    case OPT_INT: snprintf(buf, cap, "an integer in [%lld, %lld]", o->lo, o->hi); break;
    case OPT_NUM: snprintf(buf, cap, "a finite number"); break;
    case OPT_SHAPE:
        if (o->lo == o->hi) snprintf(buf, cap, "%lld comma-separated dims >= 1", o->lo);
        else snprintf(buf, cap, "%lld to %lld comma-separated dims >= 1", o->lo, o->hi);
        break;
    case OPT_IMPL: snprintf(buf, cap, "one of auto, three-pass, fused, channel"); break;
    case OPT_LIST: snprintf(buf, cap, "at most %lld of them", o->hi < MAX_LIST ? o->hi : MAX_LIST); break;
    default: snprintf(buf, cap, "a value"); break;
    }
    return buf;
}

parse_result parse_opts(const char *cmd, const char *usage, const opt_spec *specs, size_t n, int argc, char **argv,
                        bool stop_at_word, int *next) {
    bool seen[MAX_OPTS] = {false};
    int i = 0;
    if (n > MAX_OPTS) {
        usage_error(cmd, usage, "internal error: more than %d options", MAX_OPTS);
        return PARSE_ERROR;
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return PARSE_HELP;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (stop_at_word) break;
            usage_error(cmd, usage, "unexpected argument '%s'", a);
            return PARSE_ERROR;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        size_t k = 0;
        while (k < n && !(strlen(specs[k].name) == len && strncmp(specs[k].name, a, len) == 0)) k++;
        if (k == n) {
            usage_error(cmd, usage, "unknown option '%.*s'", (int)len, a);
            return PARSE_ERROR;
        }
        const opt_spec *o = &specs[k];
        /* a value given twice: which one counts would be a guess */
        if (seen[k] && o->kind != OPT_LIST && o->kind != OPT_FLAG) {
            usage_error(cmd, usage, "option %s is given twice (give it once)", o->name);
            return PARSE_ERROR;
        }
        seen[k] = true;
        if (o->kind == OPT_FLAG) {
            if (eq) {
                usage_error(cmd, usage, "option %s takes no value", o->name);
                return PARSE_ERROR;
            }
            *(bool *)o->dst = true;
            continue;
        }
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val) {
            usage_error(cmd, usage, "option %s needs a value", o->name);
            return PARSE_ERROR;
        }
        if (!store_value(o, val)) {
            char hint[96];
            usage_error(cmd, usage, "bad value '%s' for %s: expected %s", val, o->name,
                        value_hint(o, hint, sizeof hint));
            return PARSE_ERROR;
        }
    }
    for (size_t k = 0; k < n; k++)
        if (specs[k].required && !seen[k]) {
            usage_error(cmd, usage, "missing required option %s", specs[k].name);
            return PARSE_ERROR;
        }
    if (next) *next = i;
    return PARSE_OK;
}

/* ---- shared helpers ---------------------------------------------------------- */

int open_context(const global_opts *g, wgnn_context **ctx, char *err) {
    wgnn_context_options o = {0};
    o.adapter = g->adapter;
    o.timeout_ms = (uint32_t)g->timeout_ms;
    o.poll_us = (uint32_t)g->poll_us;
    wgnn_status s = wgnn_context_create(&o, ctx);
    return s == WGNN_OK ? CLI_OK : ctx_err(err, *ctx, s);
}

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void fill_uniform(float *x, uint64_t n, uint64_t *state, double lo, double hi) {
    for (uint64_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(state) >> 11) * 0x1p-53; /* [0, 1) */
        float f = (float)(lo + (hi - lo) * u), top = (float)hi;
        if (f >= top && top > (float)lo) f = nextafterf(top, -INFINITY); /* rounded up to max: below it */
        x[i] = f;
    }
}

/* Element count, failing when it or its float32 bytes would overflow. */
bool shape_numel(int rank, const int64_t *dims, uint64_t *n) {
    uint64_t p = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1 || p > (SIZE_MAX / 4) / (uint64_t)dims[i]) return false;
        p *= (uint64_t)dims[i];
    }
    *n = p;
    return true;
}

float *alloc_floats(uint64_t n, char *err) {
    float *p = n <= SIZE_MAX / sizeof(float) ? malloc((size_t)n * sizeof(float)) : NULL;
    if (!p) set_err(err, "out of host memory allocating %" PRIu64 " floats", n);
    return p;
}

void dims_str(int rank, const int64_t *dims, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used + 1 < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%" PRId64, i ? "," : "[", dims[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (used + 1 < cap) snprintf(buf + used, cap - used, rank ? "]" : "[]");
}

void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

void json_num(double x) {
    if (isfinite(x)) printf("%.6g", x);
    else fputs("null", stdout);
}

wgnn_status tensor_from_host(wgnn_context *ctx, wgnn_dtype dt, int rank, const int64_t *dims, const void *data,
                             uint64_t bytes, wgnn_tensor **out) {
    *out = NULL;
    wgnn_status s = wgnn_tensor_create(ctx, dt, rank, dims, out);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, *out, data, (size_t)bytes);
    if (s != WGNN_OK) {
        wgnn_tensor_destroy(*out);
        *out = NULL;
    }
    return s;
}

/* ---- timing ------------------------------------------------------------------ */

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One timed run. GPU timestamps while *gpu is 1; when the device reports it
 * cannot time (gpu_timed == 0), *gpu drops to 0 and the run is timed on the
 * host around the op and a sync instead. */
static wgnn_status time_once(wgnn_context *ctx, run_fn run, void *user, int *gpu, double *ms) {
    wgnn_status s;
    if (*gpu) {
        int timed = 0;
        s = wgnn_timing_begin(ctx);
        if (s == WGNN_OK) s = run(ctx, user);
        if (s == WGNN_OK) s = wgnn_timing_end(ctx, ms, &timed);
        if (s != WGNN_OK || timed) return s;
        *gpu = 0;
    }
    double t0 = now_ms();
    s = run(ctx, user);
    if (s == WGNN_OK) s = wgnn_context_sync(ctx);
    *ms = now_ms() - t0;
    return s;
}

int time_runs(wgnn_context *ctx, run_fn run, void *user, int warmup, int iters, timing *t, char *err) {
    int rc = CLI_OK, gpu = 1;
    wgnn_status s = WGNN_OK;
    double *ms = malloc((size_t)iters * sizeof *ms);
    if (!ms) return set_err(err, "out of host memory");
    for (int i = 0; i < warmup && s == WGNN_OK; i++) {
        s = run(ctx, user);
        if (s == WGNN_OK) s = wgnn_context_sync(ctx);
    }
    for (int i = 0; i < iters && s == WGNN_OK; i++) s = time_once(ctx, run, user, &gpu, &ms[i]);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    qsort(ms, (size_t)iters, sizeof *ms, cmp_double);
    t->min = ms[0];
    t->max = ms[iters - 1];
    t->median = iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]);
    t->timer = gpu ? "gpu-timestamp" : "wall";
cleanup:
    free(ms);
    return rc;
}

/* ---- reading inputs ------------------------------------------------------------ */

int load_header(const char *path, wgnn_npy *npy, char *err) {
    wgnn_status s = wgnn_npy_load_header(path, npy, err, ERR_LEN);
    /* A pipe's header cannot be read ahead of its data: read it whole, once. */
    if (s == WGNN_ERR_UNSUPPORTED) s = wgnn_npy_load(path, npy, err, ERR_LEN);
    return s == WGNN_OK ? CLI_OK : CLI_FAIL;
}

int load_data(const char *cmd, const char *path, const char *name, wgnn_npy *npy, char *err) {
    if (npy->data) return CLI_OK;
    wgnn_npy full;
    if (wgnn_npy_load(path, &full, err, ERR_LEN) != WGNN_OK) return CLI_FAIL;
    if (full.dtype != npy->dtype || full.rank != npy->rank || memcmp(full.dims, npy->dims, sizeof full.dims) != 0) {
        wgnn_npy_free(&full);
        return set_err(err, "%s: %s (%s) changed while it was being read; run again", cmd, name, path);
    }
    *npy = full;
    return CLI_OK;
}

/* ---- writing outputs ------------------------------------------------------------ */

/* wgnn_npy_save writes a regular file as "<path>.tmp.<pid>" and renames it
 * (include/wgnn.h), and save_all stages whole outputs under temporary names.
 * If SIGINT, SIGTERM, SIGHUP or SIGQUIT ends the program meanwhile, the
 * handler removes those files, then dies of the signal as it would have.
 * The names are built beforehand, so the handler only calls unlink. The
 * handler may run on any thread (Dawn has its own): each name is published
 * through an atomic flag. Only the main thread arms and disarms slots. */
#define MAX_TEMPS (MAX_LIST + 1)
static char g_tmp_path[MAX_TEMPS][4096];
static atomic_int g_tmp_armed[MAX_TEMPS];

static void on_fatal_signal(int sig) {
    for (int i = 0; i < MAX_TEMPS; i++)
        if (atomic_load(&g_tmp_armed[i])) unlink(g_tmp_path[i]);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked until the handler returns, then the default action */
}

void install_signal_handlers(void) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&sa.sa_mask, sigs[i]);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* a signal ignored on entry stays ignored (nohup, background jobs) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
    /* Past a file size limit (ulimit -f), fail the write with EFBIG, which
     * is reported, rather than die of SIGXFSZ. */
    signal(SIGXFSZ, SIG_IGN);
}

/* A free slot holding "<path><suffix>" (not yet armed), or -1 when none is
 * free or the name does not fit. */
static int temp_slot(const char *path, const char *suffix) {
    for (int i = 0; i < MAX_TEMPS; i++) {
        if (atomic_load(&g_tmp_armed[i])) continue;
        int n = snprintf(g_tmp_path[i], sizeof g_tmp_path[i], "%s%s", path, suffix);
        return n > 0 && (size_t)n < sizeof g_tmp_path[i] ? i : -1;
    }
    return -1;
}

static void temp_disarm(int slot) {
    if (slot >= 0) atomic_store(&g_tmp_armed[slot], 0);
}

wgnn_status save_npy(const char *path, wgnn_dtype dt, int rank, const int64_t *dims, const void *data, char *err,
                     size_t err_len) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".tmp.%ld", (long)getpid());
    int slot = temp_slot(path, suffix);
    if (slot >= 0) atomic_store(&g_tmp_armed[slot], 1);
    wgnn_status s = wgnn_npy_save(path, dt, rank, dims, data, err, err_len);
    temp_disarm(slot);
    return s;
}

int check_fits_device(wgnn_context *ctx, const char *what, wgnn_dtype dt, int rank, const int64_t *dims, char *err) {
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1 || n > UINT64_MAX / 8u / (uint64_t)dims[i]) return set_err(err, "%s: too many elements", what);
        n *= (uint64_t)dims[i];
    }
    wgnn_limits L;
    wgnn_context_limits(ctx, &L);
    uint64_t bytes = n * wgnn_dtype_size(dt);
    if (bytes > L.max_buffer_size) {
        char ds[160];
        dims_str(rank, dims, ds, sizeof ds);
        return set_err(err, "%s %s %s takes %" PRIu64 " bytes, past the device's maxBufferSize %" PRIu64, what,
                       wgnn_dtype_name(dt), ds, bytes, L.max_buffer_size);
    }
    return CLI_OK;
}

/* Whether a and b name one file: both there and the same inode (through any
 * spelling or link), or both not there yet with the same last component in
 * the same folder. */
static bool same_file_at(const char *a, const char *b);
/* A dangling link names the file a write through it would create. */
static const char *link_target(const char *p, char *buf, size_t cap) {
    struct stat st;
    char t[4096];
    ssize_t n;
    if (stat(p, &st) == 0 || lstat(p, &st) != 0 || !S_ISLNK(st.st_mode) || (n = readlink(p, t, sizeof t - 1)) <= 0)
        return p;
    t[n] = '\0';
    const char *slash = strrchr(p, '/');
    int k = t[0] == '/' || !slash ? snprintf(buf, cap, "%s", t)
                                   : snprintf(buf, cap, "%.*s%s", (int)(slash - p) + 1, p, t);
    return k > 0 && (size_t)k < cap ? buf : p;
}

static bool same_file(const char *a, const char *b) {
    char ba[4096], bb[4096];
    return same_file_at(link_target(a, ba, sizeof ba), link_target(b, bb, sizeof bb));
}

static bool same_file_at(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return true;
    struct stat sa, sb;
    bool ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
    if (ha || hb) return ha && hb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    if (strcmp(na ? na + 1 : a, nb ? nb + 1 : b) != 0) return false;
    char da[4096], db[4096];
    snprintf(da, sizeof da, "%.*s", na ? (int)(na - a) + 1 : 1, na ? a : ".");
    snprintf(db, sizeof db, "%.*s", nb ? (int)(nb - b) + 1 : 1, nb ? b : ".");
    return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int check_outputs(const char *cmd, const char *usage, const char *const *paths, const char *const *opts, int n) {
    for (int i = 0; i < n; i++) {
        if (!paths[i]) continue;
        struct stat st;
        if (paths[i][0] == '\0') return usage_error(cmd, usage, "%s: the path is empty", opts[i]);
        if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
            return usage_error(cmd, usage, "%s %s is a directory", opts[i], paths[i]);
        for (int j = 0; j < i; j++)
            if (paths[j] && same_file(paths[i], paths[j]))
                return usage_error(cmd, usage, "%s %s and %s %s name the same file", opts[j], paths[j], opts[i],
                                   paths[i]);
    }
    return CLI_OK;
}

/* Regular files (and names not there yet) are staged: written whole under a
 * fresh "<path>.tmp.XXXXXX" (mkstemp: never a name someone else planted),
 * and renamed over their paths only once every output is written. Anything
 * else (a device, a FIFO, a symbolic link such as /dev/stdout) is written in
 * place, as wgnn_npy_save does, after every staged file was written. */
int save_all(const out_file *o, int n, char *err) {
    int slot[MAX_LIST], rc = CLI_OK;
    bool staged[MAX_LIST];
    if (n > MAX_LIST) return set_err(err, "more than %d outputs", MAX_LIST);
    for (int i = 0; i < n; i++) {
        slot[i] = -1;
        struct stat st;
        if (lstat(o[i].path, &st) == 0 && S_ISDIR(st.st_mode))
            return set_err(err, "--out %s is a directory; nothing written", o[i].path);
        staged[i] = lstat(o[i].path, &st) != 0 || S_ISREG(st.st_mode);
        for (int j = 0; j < i; j++)
            if (same_file(o[i].path, o[j].path)) return set_err(err, "%s and %s name the same file", o[j].path, o[i].path);
    }
    for (int i = 0; i < n && rc == CLI_OK; i++) {
        if (!staged[i]) continue;
        if ((slot[i] = temp_slot(o[i].path, ".tmp.XXXXXX")) < 0) {
            rc = set_err(err, "%s: the path is too long", o[i].path);
            break;
        }
        atomic_store(&g_tmp_armed[slot[i]], 1); /* before the file exists: no window */
        int fd = mkstemp(g_tmp_path[slot[i]]);
        if (fd < 0) {
            temp_disarm(slot[i]);
            slot[i] = -1;
            rc = set_err(err, "cannot create a temporary file beside %s: %s", o[i].path, strerror(errno));
            break;
        }
        close(fd);
        if (save_npy(g_tmp_path[slot[i]], o[i].dtype, o[i].rank, o[i].dims, o[i].data, err, ERR_LEN) != WGNN_OK)
            rc = CLI_FAIL;
    }
    for (int i = 0; i < n && rc == CLI_OK; i++)
        if (!staged[i] && save_npy(o[i].path, o[i].dtype, o[i].rank, o[i].dims, o[i].data, err, ERR_LEN) != WGNN_OK)
            rc = CLI_FAIL;
    for (int i = 0; i < n; i++) {
        if (slot[i] < 0) continue;
        if (rc == CLI_OK && rename(g_tmp_path[slot[i]], o[i].path) != 0)
            rc = set_err(err, "cannot rename %s onto %s: %s", g_tmp_path[slot[i]], o[i].path, strerror(errno));
        if (rc != CLI_OK) unlink(g_tmp_path[slot[i]]);
        temp_disarm(slot[i]);
    }
    return rc;
}

/* Where progress lines go: stderr when --out is this program's stdout
 * (--out /dev/stdout), so that they do not mix with the .npy bytes. */
FILE *info_stream(const char *out_path) {
    struct stat o, so;
    if (stat(out_path, &o) == 0 && fstat(STDOUT_FILENO, &so) == 0 && o.st_dev == so.st_dev && o.st_ino == so.st_ino)
        return stderr;
    return stdout;
}
