/* wgnn.c - the command-line program: info, sdpa, rand, bench sdpa, demo.
 *
 * Uses the public API (include/wgnn.h) only. Exit status: 0 success,
 * 1 runtime failure (GPU, file, a check the library made), 2 usage error,
 * 3 a --check comparison with the CPU reference failed.
 */
#include "wgnn.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_CHECK = 3 };

#define ERR_LEN 1024

/* --check tolerance: an element passes when |gpu - ref| <= ATOL + RTOL * |ref|;
 * float16 outputs (rounded to f16 after f32 accumulation) get the looser
 * bound documented in wgnn.h. */
#define CHECK_ATOL 1e-4
#define CHECK_RTOL 1e-3
#define CHECK_ATOL_F16 1e-3
#define CHECK_RTOL_F16 1e-3

/* ---- usage ----------------------------------------------------------------- */

static const char k_usage_main[] =
    "usage: wgnn [--adapter X] [--timeout-ms N] <command> [options]\n"
    "\n"
    "commands:\n"
    "  info     list the adapters, then the chosen one's limits and features\n"
    "  sdpa     scaled dot-product attention on .npy files\n"
    "  rand     write a float32 .npy of uniform random values\n"
    "  bench    time an op on random inputs (bench sdpa)\n"
    "  demo     ViT-B/16 attention through each implementation, checked and timed\n"
    "  help [command]\n"
    "\n"
    "global options (before the command):\n"
    "  --adapter X       adapter index or case-insensitive name substring\n"
    "                    (default: $WGNN_ADAPTER, else the high-performance adapter)\n"
    "  --timeout-ms N    longest wait on the GPU, default 60000\n"
    "\n"
    "`wgnn <command> --help` describes a command.\n"
    "exit status: 0 ok, 1 failure, 2 usage error, 3 --check found a mismatch\n";

static const char k_usage_info[] =
    "usage: wgnn [global options] info\n"
    "  lists every adapter, then creates a context (honouring --adapter) and prints\n"
    "  the chosen adapter, the device's limits and its enabled features\n";

static const char k_usage_sdpa[] =
    "usage: wgnn [global options] sdpa --q Q.npy --k K.npy --v V.npy --out OUT.npy [options]\n"
    "  out = softmax(q . k^T * scale + mask) . v, computed on the GPU\n"
    "  q [..., H, S_q, D], k and v [..., H, S_kv, D], mask [..., H, S_q, S_kv];\n"
    "  float32, D a multiple of 4\n"
    "options:\n"
    "  --q FILE, --k FILE, --v FILE   inputs: .npy files, or pipes such as <(cat q.npy)\n"
    "  --mask FILE       additive float32 mask (-inf masks an entry)\n"
    "  --scale S         default 1/sqrt(D)\n"
    "  --impl NAME       auto (default), three-pass, fused or channel\n"
    "  --out FILE        written only when every step (and --check) succeeded; a regular\n"
    "                    file is replaced whole, a device, FIFO or /dev/stdout written in place\n"
    "  --check           compare with the CPU reference (atol 1e-4, rtol 1e-3); exit 3 on mismatch\n";

static const char k_usage_rand[] =
    "usage: wgnn rand --shape A,B,... --out FILE [options]\n"
    "  writes a float32 .npy of uniform random values in [min, max); FILE may also be\n"
    "  a device, a FIFO or /dev/stdout, written in place\n"
    "options:\n"
    "  --seed N            PRNG (splitmix64) seed, default 0\n"
    "  --min X, --max X    range, default -1 and 1\n"
    "  --mask-rows-inf R   also set rows 0, R, 2R, ... to -inf (a row spans the last dim),\n"
    "                      giving fully-masked rows for `wgnn sdpa --mask`\n";

static const char k_usage_bench[] =
    "usage: wgnn [global options] bench sdpa --shape B,H,S_q,S_kv,D [options]\n"
    "  times sdpa on random inputs; TFLOP/s counts 4*B*H*S_q*S_kv*D flops\n"
    "options:\n"
    "  --mask          add a random additive mask in [-1, 0]\n"
    "  --impl NAME     auto (default), three-pass, fused or channel\n"
    "  --iters N       timed runs, default 20\n"
    "  --warmup N      untimed runs before them, default 3\n"
    "  --json          print one JSON object on one line (with \"error\" on failure)\n"
    "  --check         compare the last output with the CPU reference (O(S^2 D) on the CPU);\n"
    "                  exit 3 on mismatch\n"
    "  --f16           float16 q, k, v and out (fused only; needs shader-f16)\n";

static const char k_usage_demo[] =
    "usage: wgnn [global options] demo [--iters N]\n"
    "  ViT-B/16 attention [B,H,S_q,S_kv,D] = [1,12,197,197,64] on random inputs through\n"
    "  fused, three-pass and auto; each is checked against the CPU reference and timed.\n"
    "  Exit 0 only if every check passes.\n"
    "options:\n"
    "  --iters N   timed runs per implementation, default 10\n";

/* Prints "wgnn: [cmd: ]message" and the command's usage to stderr. */
static int usage_error(const char *cmd, const char *usage, const char *fmt, ...) {
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
static int set_err(char *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

static int ctx_err(char *err, const wgnn_context *ctx, wgnn_status s) {
    const char *m = wgnn_context_error(ctx);
    return set_err(err, "%s", m && *m ? m : wgnn_status_str(s));
}

static int report(int rc, const char *err) {
    if (rc == CLI_FAIL) fprintf(stderr, "wgnn: %s\n", err);
    return rc;
}

/* ---- strict value parsing -------------------------------------------------- */

static bool parse_int(const char *s, long long lo, long long hi, long long *out) {
    if (!*s || isspace((unsigned char)*s)) return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static bool parse_num(const char *s, double *out) {
    if (!*s || isspace((unsigned char)*s)) return false;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

typedef struct shape {
    int rank;
    int64_t dims[WGNN_MAX_RANK];
} shape;

/* "A,B,C" with every dim in [1, INT32_MAX] and lo <= rank <= hi. */
static bool parse_shape(const char *s, int lo, int hi, shape *out) {
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

static const char *impl_name(wgnn_sdpa_impl impl) {
    return (unsigned)impl < sizeof k_impl_names / sizeof k_impl_names[0] ? k_impl_names[impl] : "?";
}

static bool parse_impl(const char *s, wgnn_sdpa_impl *out) {
    for (size_t i = 0; i < sizeof k_impl_names / sizeof k_impl_names[0]; i++)
        if (strcmp(s, k_impl_names[i]) == 0) {
            *out = (wgnn_sdpa_impl)i;
            return true;
        }
    return false;
}

/* ---- option tables ----------------------------------------------------------- */

typedef enum opt_kind {
    OPT_FLAG,  /* bool */
    OPT_STR,   /* const char * */
    OPT_INT,   /* long long in [lo, hi] */
    OPT_NUM,   /* finite double */
    OPT_SHAPE, /* shape with rank in [lo, hi] */
    OPT_IMPL   /* wgnn_sdpa_impl */
} opt_kind;

typedef struct opt_spec {
    const char *name; /* "--out" */
    opt_kind kind;
    void *dst;
    long long lo, hi;
    bool required;
} opt_spec;

#define MAX_OPTS 16 /* per table */

typedef enum parse_result { PARSE_OK, PARSE_HELP, PARSE_ERROR } parse_result;

static bool store_value(const opt_spec *o, const char *val) {
    switch (o->kind) {
    case OPT_STR: *(const char **)o->dst = val; return true;
    case OPT_INT: return parse_int(val, o->lo, o->hi, o->dst);
    case OPT_NUM: return parse_num(val, o->dst);
    case OPT_SHAPE: return parse_shape(val, (int)o->lo, (int)o->hi, o->dst);
    case OPT_IMPL: return parse_impl(val, o->dst);
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
    default: snprintf(buf, cap, "a value"); break;
    }
    return buf;
}

/* Parses "--name value" / "--name=value" options into the specs' targets.
 * --help or -h prints usage to stdout (PARSE_HELP). With stop_at_word, the
 * first argument not starting with '-' ends the options and its index goes to
 * *next; without, such an argument is an error. Errors print to stderr. */
static parse_result parse_opts(const char *cmd, const char *usage, const opt_spec *specs, size_t n, int argc,
                               char **argv, bool stop_at_word, int *next) {
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

#define NSPECS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- shared helpers ---------------------------------------------------------- */

typedef struct global_opts {
    const char *adapter;
    long long timeout_ms;
} global_opts;

static int open_context(const global_opts *g, wgnn_context **ctx, char *err) {
    wgnn_context_options o = {0};
    o.adapter = g->adapter;
    o.timeout_ms = (uint32_t)g->timeout_ms;
    wgnn_status s = wgnn_context_create(&o, ctx);
    return s == WGNN_OK ? CLI_OK : ctx_err(err, *ctx, s);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fill_uniform(float *x, uint64_t n, uint64_t *state, double lo, double hi) {
    for (uint64_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(state) >> 11) * 0x1p-53; /* [0, 1) */
        x[i] = (float)(lo + (hi - lo) * u);
    }
}

/* Element count, failing when it or its float32 bytes would overflow. */
static bool shape_numel(int rank, const int64_t *dims, uint64_t *n) {
    uint64_t p = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1 || p > (SIZE_MAX / 4) / (uint64_t)dims[i]) return false;
        p *= (uint64_t)dims[i];
    }
    *n = p;
    return true;
}

static float *alloc_floats(uint64_t n, char *err) {
    float *p = n <= SIZE_MAX / sizeof(float) ? malloc((size_t)n * sizeof(float)) : NULL;
    if (!p) set_err(err, "out of host memory allocating %" PRIu64 " floats", n);
    return p;
}

static void dims_str(int rank, const int64_t *dims, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used + 1 < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%" PRId64, i ? "," : "[", dims[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (used + 1 < cap) snprintf(buf + used, cap - used, rank ? "]" : "[]");
}

static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void json_num(double x) {
    if (isfinite(x)) printf("%.6g", x);
    else fputs("null", stdout);
}

/* ---- writing outputs ------------------------------------------------------------ */

/* wgnn_npy_save writes a regular file as "<path>.tmp.<pid>" and renames it
 * (include/wgnn.h). If SIGINT, SIGTERM, SIGHUP or SIGQUIT ends the program
 * in between, the handler removes that file, then dies of the signal as it
 * would have. The name is built before the save, so the handler only calls
 * unlink. The handler may run on any thread (Dawn has its own): the path is
 * published through an atomic flag. */
static char g_tmp_path[4096];
static atomic_int g_tmp_armed;

static void on_fatal_signal(int sig) {
    if (atomic_load(&g_tmp_armed)) unlink(g_tmp_path);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked until the handler returns, then the default action */
}

static void install_signal_handlers(void) {
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

/* wgnn_npy_save, with its temporary file registered for the signal handler. */
static wgnn_status save_npy(const char *path, wgnn_dtype dt, int rank, const int64_t *dims, const void *data,
                            char *err, size_t err_len) {
    int n = snprintf(g_tmp_path, sizeof g_tmp_path, "%s.tmp.%ld", path, (long)getpid());
    atomic_store(&g_tmp_armed, n > 0 && (size_t)n < sizeof g_tmp_path);
    wgnn_status s = wgnn_npy_save(path, dt, rank, dims, data, err, err_len);
    atomic_store(&g_tmp_armed, 0);
    return s;
}

/* Where progress lines go: stderr when --out is this program's stdout
 * (--out /dev/stdout), so that they do not mix with the .npy bytes. */
static FILE *info_stream(const char *out_path) {
    struct stat o, so;
    if (stat(out_path, &o) == 0 && fstat(STDOUT_FILENO, &so) == 0 && o.st_dev == so.st_dev && o.st_ino == so.st_ino)
        return stderr;
    return stdout;
}

/* ---- attention problems -------------------------------------------------------- */

/* Host arrays of one attention problem (mask may be NULL). */
typedef struct host_attn {
    const float *q, *k, *v, *mask;
} host_attn;

/* Device side: the tensors and the options sdpa runs with. */
typedef struct attn {
    wgnn_tensor *q, *k, *v, *mask, *out;
    wgnn_sdpa_options opts;
} attn;

static void attn_release(attn *a) {
    wgnn_tensor_destroy(a->out);
    wgnn_tensor_destroy(a->mask);
    wgnn_tensor_destroy(a->v);
    wgnn_tensor_destroy(a->k);
    wgnn_tensor_destroy(a->q);
    memset(a, 0, sizeof *a);
}

static wgnn_status tensor_from_host(wgnn_context *ctx, wgnn_dtype dt, int rank, const int64_t *dims,
                                    const void *data, uint64_t bytes, wgnn_tensor **out) {
    *out = NULL;
    wgnn_status s = wgnn_tensor_create(ctx, dt, rank, dims, out);
    if (s == WGNN_OK) s = wgnn_tensor_upload(ctx, *out, data, (size_t)bytes);
    if (s != WGNN_OK) {
        wgnn_tensor_destroy(*out);
        *out = NULL;
    }
    return s;
}

typedef struct check_result {
    double max_abs, max_rel;
    uint64_t n_bad;
    bool pass;
    double atol, rtol;
} check_result;

/* max that keeps a NaN once one is seen */
static double nan_max(double m, double x) {
    return isnan(m) || isnan(x) ? NAN : x > m ? x : m;
}

/* Compares the GPU output of a with wgnn_ref_sdpa on the host inputs h. */
static int check_against_ref(const attn *a, const host_attn *h, const float *gpu, check_result *r, char *err) {
    int rank = wgnn_tensor_rank(a->q);
    const int64_t *qd = wgnn_tensor_dims(a->q), *kd = wgnn_tensor_dims(a->k);
    uint64_t batch = 1, n = wgnn_tensor_numel(a->q);
    for (int i = 0; i < rank - 2; i++) batch *= (uint64_t)qd[i];
    uint64_t d = (uint64_t)qd[rank - 1];
    double scale = a->opts.has_scale ? (double)a->opts.scale : 1.0 / sqrt((double)d);
    float *ref = alloc_floats(n, err);
    if (!ref) return CLI_FAIL;
    /* The reference leaves out untouched when it cannot allocate: NaN fails then. */
    for (uint64_t i = 0; i < n; i++) ref[i] = NAN;
    wgnn_ref_sdpa(h->q, h->k, h->v, h->mask, batch, (uint64_t)qd[rank - 2], (uint64_t)kd[rank - 2], d, scale, ref);
    *r = (check_result){0, 0, 0, true, CHECK_ATOL, CHECK_RTOL};
    if (wgnn_tensor_dtype(a->out) == WGNN_F16) {
        r->atol = CHECK_ATOL_F16;
        r->rtol = CHECK_RTOL_F16;
    }
    for (uint64_t i = 0; i < n; i++) {
        double g = gpu[i], f = ref[i];
        double diff = g == f ? 0.0 : fabs(g - f); /* equal infinities match */
        double rel = diff / (fabs(f) + 1e-3);
        if (!(diff <= r->atol + r->rtol * fabs(f))) r->n_bad++;
        r->max_abs = nan_max(r->max_abs, diff);
        r->max_rel = nan_max(r->max_rel, rel);
    }
    r->pass = r->n_bad == 0;
    free(ref);
    return CLI_OK;
}

static void print_check(FILE *f, const check_result *r) {
    fprintf(f, "max_abs_err=%.3g max_rel_err=%.3g\n", r->max_abs, r->max_rel);
    if (r->pass) fprintf(f, "check: PASS\n");
    else fprintf(f, "check: FAIL (atol %g, rtol %g): %" PRIu64 " element(s) off\n", r->atol, r->rtol, r->n_bad);
}

/* Downloads a's output into a fresh float32 host array (float16 outputs are
 * widened, exactly). */
static int download_out(wgnn_context *ctx, const attn *a, float **out, char *err) {
    uint64_t n = wgnn_tensor_numel(a->out);
    *out = alloc_floats(n, err);
    if (!*out) return CLI_FAIL;
    wgnn_status s;
    if (wgnn_tensor_dtype(a->out) == WGNN_F16) {
        uint16_t *h = malloc((size_t)n * sizeof *h);
        if (!h) return set_err(err, "out of host memory");
        s = wgnn_tensor_download(ctx, a->out, h, (size_t)n * sizeof *h);
        if (s == WGNN_OK) wgnn_f16_to_f32(h, *out, (size_t)n);
        free(h);
    } else {
        s = wgnn_tensor_download(ctx, a->out, *out, (size_t)n * sizeof(float));
    }
    return s == WGNN_OK ? CLI_OK : ctx_err(err, ctx, s);
}

/* Uploads n floats as a tensor of dtype dt (float16: rounded, and the host
 * copy rounded the same way so a reference sees what the GPU sees). */
static int upload_as(wgnn_context *ctx, wgnn_dtype dt, int rank, const int64_t *dims, float *data, uint64_t n,
                     wgnn_tensor **out, char *err) {
    wgnn_status s;
    if (dt != WGNN_F16) {
        s = tensor_from_host(ctx, WGNN_F32, rank, dims, data, n * sizeof(float), out);
    } else {
        uint16_t *h = malloc((size_t)n * sizeof *h);
        if (!h) return set_err(err, "out of host memory");
        wgnn_f32_to_f16(data, h, (size_t)n);
        wgnn_f16_to_f32(h, data, (size_t)n);
        s = tensor_from_host(ctx, WGNN_F16, rank, dims, h, n * sizeof *h, out);
        free(h);
    }
    return s == WGNN_OK ? CLI_OK : ctx_err(err, ctx, s);
}

/* Random q, k, v in [-1, 1) (and a mask in [-1, 0) when with_mask) for
 * [B, H, S_q, S_kv, D], on the host (into store[4], caller frees) and on the
 * device. */
static int random_problem(wgnn_context *ctx, const int64_t s5[5], bool with_mask, wgnn_sdpa_impl impl, wgnn_dtype dt,
                          float *store[4], host_attn *h, attn *a, char *err) {
    int64_t dims[4][4] = {{s5[0], s5[1], s5[2], s5[4]},  /* q */
                          {s5[0], s5[1], s5[3], s5[4]},  /* k */
                          {s5[0], s5[1], s5[3], s5[4]},  /* v */
                          {s5[0], s5[1], s5[2], s5[3]}}; /* mask */
    wgnn_tensor **t[4] = {&a->q, &a->k, &a->v, &a->mask};
    uint64_t seed = 0x5eed;
    int n_in = with_mask ? 4 : 3;
    for (int i = 0; i < n_in; i++) {
        uint64_t n;
        char ds[96];
        if (!shape_numel(4, dims[i], &n)) {
            dims_str(4, dims[i], ds, sizeof ds);
            return set_err(err, "bench: a tensor of shape %s has too many elements", ds);
        }
        if (!(store[i] = alloc_floats(n, err))) return CLI_FAIL;
        fill_uniform(store[i], n, &seed, -1.0, i == 3 ? 0.0 : 1.0);
        int rc = upload_as(ctx, i == 3 ? WGNN_F32 : dt, 4, dims[i], store[i], n, t[i], err);
        if (rc != CLI_OK) return rc;
    }
    wgnn_status s = wgnn_tensor_create(ctx, dt, 4, dims[0], &a->out);
    if (s != WGNN_OK) return ctx_err(err, ctx, s);
    *h = (host_attn){store[0], store[1], store[2], with_mask ? store[3] : NULL};
    a->opts.mask = a->mask;
    a->opts.impl = impl;
    return CLI_OK;
}

/* One timed run. GPU timestamps while *gpu is 1; when the device reports it
 * cannot time (gpu_timed == 0), *gpu drops to 0 and the run is timed on the
 * host around the op and a sync instead. */
static wgnn_status time_once(wgnn_context *ctx, const attn *a, int *gpu, double *ms) {
    wgnn_status s;
    if (*gpu) {
        int timed = 0;
        s = wgnn_timing_begin(ctx);
        if (s == WGNN_OK) s = wgnn_sdpa(ctx, a->q, a->k, a->v, &a->opts, a->out);
        if (s == WGNN_OK) s = wgnn_timing_end(ctx, ms, &timed);
        if (s != WGNN_OK || timed) return s;
        *gpu = 0;
    }
    double t0 = now_ms();
    s = wgnn_sdpa(ctx, a->q, a->k, a->v, &a->opts, a->out);
    if (s == WGNN_OK) s = wgnn_context_sync(ctx);
    *ms = now_ms() - t0;
    return s;
}

typedef struct timing {
    double median, min, max;
    const char *timer; /* "gpu-timestamp" or "wall" */
} timing;

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* warmup untimed runs, then iters timed ones (iters >= 1). */
static int time_sdpa(wgnn_context *ctx, const attn *a, int warmup, int iters, timing *t, char *err) {
    int rc = CLI_OK, gpu = 1;
    wgnn_status s = WGNN_OK;
    double *ms = malloc((size_t)iters * sizeof *ms);
    if (!ms) return set_err(err, "out of host memory");
    for (int i = 0; i < warmup && s == WGNN_OK; i++) {
        s = wgnn_sdpa(ctx, a->q, a->k, a->v, &a->opts, a->out);
        if (s == WGNN_OK) s = wgnn_context_sync(ctx);
    }
    for (int i = 0; i < iters && s == WGNN_OK; i++) s = time_once(ctx, a, &gpu, &ms[i]);
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

static double sdpa_tflops(const int64_t s5[5], double ms) {
    double flops = 4.0 * (double)s5[0] * (double)s5[1] * (double)s5[2] * (double)s5[3] * (double)s5[4];
    return ms > 0 ? flops / (ms / 1e3) / 1e12 : 0.0;
}

/* ---- info ------------------------------------------------------------------------ */

static void print_adapter(size_t idx, const wgnn_adapter_info *a) {
    printf("  [%zu] %s\n", idx, a->name);
    printf("      backend %s, type %s, vendor 0x%04x (%s), device 0x%04x\n", a->backend, a->type, a->vendor_id,
           a->vendor[0] ? a->vendor : "?", a->device_id);
    printf("      driver: %s\n", a->description[0] ? a->description : "?");
    printf("      subgroup sizes: %u..%u\n", a->subgroup_min_size, a->subgroup_max_size);
    printf("      features offered:%s%s%s%s\n", a->has_shader_f16 ? " shader-f16" : "",
           a->has_subgroups ? " subgroups" : "", a->has_timestamp_query ? " timestamp-query" : "",
           a->has_shader_f16 || a->has_subgroups || a->has_timestamp_query ? "" : " (none)");
}

/* "N bytes (X GiB)", in the largest unit that keeps X >= 1 */
static void print_bytes(const char *name, uint64_t b) {
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double x = (double)b / 1024.0;
    size_t u = 0;
    while (x >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        x /= 1024.0;
        u++;
    }
    printf("  %-40s %" PRIu64 " bytes (%.2f %s)\n", name, b, x, units[u]);
}

static int cmd_info(const global_opts *g, int argc, char **argv) {
    char err[ERR_LEN] = "";
    wgnn_adapter_info fixed[16], *infos = fixed;
    size_t count = 0;
    wgnn_context *ctx = NULL;
    int rc = CLI_OK;
    parse_result pr = parse_opts("info", k_usage_info, NULL, 0, argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;

    wgnn_status s = wgnn_adapters_list(fixed, NSPECS(fixed), &count, err, sizeof err);
    if (s == WGNN_OK && count > NSPECS(fixed)) {
        infos = malloc(count * sizeof *infos);
        if (!infos) {
            infos = fixed;
            count = NSPECS(fixed);
        } else {
            size_t again = 0;
            s = wgnn_adapters_list(infos, count, &again, err, sizeof err);
            if (again < count) count = again;
        }
    }
    if (s != WGNN_OK) {
        fprintf(stderr, "wgnn: listing adapters: %s\n", err[0] ? err : wgnn_status_str(s));
        rc = CLI_FAIL;
    } else {
        printf("Adapters (%zu):\n", count);
        for (size_t i = 0; i < count; i++) print_adapter(i, &infos[i]);
    }

    if (open_context(g, &ctx, err) != CLI_OK) {
        rc = report(CLI_FAIL, err);
        goto cleanup;
    }
    wgnn_adapter_info ai;
    wgnn_limits l;
    wgnn_context_adapter(ctx, &ai);
    wgnn_context_limits(ctx, &l);
    printf("\nAdapter in use: %s (%s, %s)\n", ai.name, ai.backend, ai.type);
    printf("Device limits:\n");
    print_bytes("max_buffer_size", l.max_buffer_size);
    print_bytes("max_storage_buffer_binding_size", l.max_storage_buffer_binding_size);
    print_bytes("max_uniform_buffer_binding_size", l.max_uniform_buffer_binding_size);
    printf("  %-40s %u\n", "max_storage_buffers_per_shader_stage", l.max_storage_buffers_per_shader_stage);
    print_bytes("max_compute_workgroup_storage_size", l.max_compute_workgroup_storage_size);
    printf("  %-40s %u\n", "max_compute_invocations_per_workgroup", l.max_compute_invocations_per_workgroup);
    printf("  %-40s %u x %u x %u\n", "max_compute_workgroup_size (x, y, z)", l.max_compute_workgroup_size_x,
           l.max_compute_workgroup_size_y, l.max_compute_workgroup_size_z);
    printf("  %-40s %u\n", "max_compute_workgroups_per_dimension", l.max_compute_workgroups_per_dimension);
    printf("  %-40s %u bytes\n", "min_storage_buffer_offset_alignment", l.min_storage_buffer_offset_alignment);
    printf("  %-40s %u bytes\n", "min_uniform_buffer_offset_alignment", l.min_uniform_buffer_offset_alignment);
    printf("Enabled features: shader-f16 %s, subgroups %s, timestamp-query %s\n",
           wgnn_context_has_f16(ctx) ? "yes" : "no", wgnn_context_has_subgroups(ctx) ? "yes" : "no",
           wgnn_context_has_timestamps(ctx) ? "yes" : "no");
cleanup:
    wgnn_context_destroy(ctx);
    if (infos != fixed) free(infos);
    return rc;
}

/* ---- sdpa ------------------------------------------------------------------------ */

/* Reads the data of an input whose header alone was read (a pipe was read
 * whole already), making sure the file still has that header. */
static int load_data(const char *path, const char *name, wgnn_npy *npy, char *err) {
    if (npy->data) return CLI_OK;
    wgnn_npy full;
    if (wgnn_npy_load(path, &full, err, ERR_LEN) != WGNN_OK) return CLI_FAIL;
    if (full.dtype != npy->dtype || full.rank != npy->rank || memcmp(full.dims, npy->dims, sizeof full.dims) != 0) {
        wgnn_npy_free(&full);
        return set_err(err, "sdpa: %s (%s) changed while it was being read; run again", name, path);
    }
    *npy = full;
    return CLI_OK;
}

static int cmd_sdpa(const global_opts *g, int argc, char **argv) {
    const char *path[4] = {NULL, NULL, NULL, NULL}, *out_path = NULL; /* q, k, v, mask */
    double scale = NAN;
    wgnn_sdpa_impl impl = WGNN_SDPA_AUTO;
    bool check = false;
    const opt_spec specs[] = {
        {"--q", OPT_STR, &path[0], 0, 0, true},          {"--k", OPT_STR, &path[1], 0, 0, true},
        {"--v", OPT_STR, &path[2], 0, 0, true},          {"--mask", OPT_STR, &path[3], 0, 0, false},
        {"--scale", OPT_NUM, &scale, 0, 0, false},       {"--impl", OPT_IMPL, &impl, 0, 0, false},
        {"--out", OPT_STR, &out_path, 0, 0, true},       {"--check", OPT_FLAG, &check, 0, 0, false},
    };
    parse_result pr = parse_opts("sdpa", k_usage_sdpa, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;

    static const char *const names[4] = {"q", "k", "v", "mask"};
    char err[ERR_LEN] = "";
    FILE *info = info_stream(out_path);
    wgnn_npy npy[4];
    wgnn_context *ctx = NULL;
    attn a = {0};
    float *gpu = NULL, *wide[3] = {NULL, NULL, NULL};
    uint16_t *half_out = NULL;
    int rc = CLI_OK, n_in = path[3] ? 4 : 3;
    memset(npy, 0, sizeof npy);

    /* Headers first: the library checks the shapes on tensors that hold no
     * data yet, so a wrong-shaped 4 GiB input is refused before it is read.
     * A pipe's header cannot be read ahead of its data: a pipe is read whole
     * here, once. */
    for (int i = 0; i < n_in; i++) {
        wgnn_status s = wgnn_npy_load_header(path[i], &npy[i], err, sizeof err);
        if (s == WGNN_ERR_UNSUPPORTED) s = wgnn_npy_load(path[i], &npy[i], err, sizeof err);
        if (s != WGNN_OK) {
            rc = CLI_FAIL;
            goto cleanup;
        }
        if (npy[i].rank == 0) {
            rc = set_err(err, "sdpa: %s (%s) is a scalar: %s must have rank >= 3", names[i], path[i], names[i]);
            goto cleanup;
        }
    }
    if ((rc = open_context(g, &ctx, err)) != CLI_OK) goto cleanup;
    wgnn_tensor **t[4] = {&a.q, &a.k, &a.v, &a.mask};
    for (int i = 0; i < n_in; i++) {
        wgnn_status s = wgnn_tensor_create(ctx, npy[i].dtype, npy[i].rank, npy[i].dims, t[i]);
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
    }
    a.opts.mask = a.mask;
    a.opts.impl = impl;
    a.opts.has_scale = !isnan(scale);
    a.opts.scale = a.opts.has_scale ? (float)scale : 0.0f;

    uint64_t scratch = 0;
    wgnn_sdpa_impl routed = impl;
    wgnn_status s = wgnn_sdpa_scratch_bytes(ctx, a.q, a.k, a.v, &a.opts, &scratch, &routed);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, npy[0].dtype, npy[0].rank, npy[0].dims, &a.out);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    for (int i = 0; i < n_in; i++) {
        if ((rc = load_data(path[i], names[i], &npy[i], err)) != CLI_OK) goto cleanup;
        s = wgnn_tensor_upload(ctx, *t[i], npy[i].data, (size_t)npy[i].nbytes);
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        if (!check) wgnn_npy_free(&npy[i]); /* only --check needs the host copy */
    }
    s = wgnn_sdpa(ctx, a.q, a.k, a.v, &a.opts, a.out);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    if ((rc = download_out(ctx, &a, &gpu, err)) != CLI_OK) goto cleanup;
    fprintf(info, "impl: %s%s, scratch %" PRIu64 " bytes\n", impl_name(routed),
            impl == WGNN_SDPA_AUTO ? " (auto)" : "", scratch);
    if (check) {
        /* sdpa succeeded: inputs are float32, or q, k, v float16 (widened
         * here, exactly) with a float32 mask. */
        for (int i = 0; i < 3 && npy[0].dtype == WGNN_F16; i++) {
            if (!(wide[i] = alloc_floats(npy[i].numel, err))) {
                rc = CLI_FAIL;
                goto cleanup;
            }
            wgnn_f16_to_f32(npy[i].data, wide[i], (size_t)npy[i].numel);
        }
        host_attn h = {wide[0] ? wide[0] : npy[0].data, wide[1] ? wide[1] : npy[1].data,
                       wide[2] ? wide[2] : npy[2].data, path[3] ? npy[3].data : NULL};
        check_result r;
        if ((rc = check_against_ref(&a, &h, gpu, &r, err)) != CLI_OK) goto cleanup;
        print_check(info, &r);
        if (!r.pass) {
            fprintf(stderr, "wgnn: sdpa: --check failed; %s not written\n", out_path);
            rc = CLI_CHECK;
            goto cleanup;
        }
    }
    const void *save = gpu;
    if (npy[0].dtype == WGNN_F16) { /* back to the halves the GPU wrote, exactly */
        if (!(half_out = malloc((size_t)npy[0].numel * sizeof *half_out))) {
            rc = set_err(err, "out of host memory");
            goto cleanup;
        }
        wgnn_f32_to_f16(gpu, half_out, (size_t)npy[0].numel);
        save = half_out;
    }
    if (save_npy(out_path, npy[0].dtype, npy[0].rank, npy[0].dims, save, err, sizeof err) != WGNN_OK) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    char ds[160];
    dims_str(npy[0].rank, npy[0].dims, ds, sizeof ds);
    fprintf(info, "wrote %s (%s %s)\n", out_path, wgnn_dtype_name(npy[0].dtype), ds);
cleanup:
    free(half_out);
    for (int i = 0; i < 3; i++) free(wide[i]);
    free(gpu);
    attn_release(&a);
    wgnn_context_destroy(ctx);
    for (int i = 0; i < 4; i++) wgnn_npy_free(&npy[i]);
    return report(rc, err);
}

/* ---- rand ------------------------------------------------------------------------ */

static int cmd_rand(const global_opts *g, int argc, char **argv) {
    (void)g;
    shape sh = {0};
    const char *out_path = NULL;
    long long seed = 0, mask_rows = 0;
    double lo = -1.0, hi = 1.0;
    const opt_spec specs[] = {
        {"--shape", OPT_SHAPE, &sh, 1, WGNN_MAX_RANK, true},
        {"--out", OPT_STR, &out_path, 0, 0, true},
        {"--seed", OPT_INT, &seed, 0, INT64_MAX, false},
        {"--min", OPT_NUM, &lo, 0, 0, false},
        {"--max", OPT_NUM, &hi, 0, 0, false},
        {"--mask-rows-inf", OPT_INT, &mask_rows, 1, INT64_MAX, false},
    };
    parse_result pr = parse_opts("rand", k_usage_rand, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    if (lo > hi) return usage_error("rand", k_usage_rand, "--min %g is above --max %g", lo, hi);

    char err[ERR_LEN] = "";
    uint64_t n = 0, state = (uint64_t)seed;
    float *x = NULL;
    int rc = CLI_OK;
    if (!shape_numel(sh.rank, sh.dims, &n)) {
        rc = set_err(err, "rand: --shape has too many elements");
        goto cleanup;
    }
    if (!(x = alloc_floats(n, err))) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    fill_uniform(x, n, &state, lo, hi);
    if (mask_rows > 0) {
        uint64_t cols = (uint64_t)sh.dims[sh.rank - 1];
        for (uint64_t r = 0; r < n / cols; r += (uint64_t)mask_rows)
            for (uint64_t c = 0; c < cols; c++) x[r * cols + c] = -INFINITY;
    }
    if (save_npy(out_path, WGNN_F32, sh.rank, sh.dims, x, err, sizeof err) != WGNN_OK) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    char ds[160];
    dims_str(sh.rank, sh.dims, ds, sizeof ds);
    fprintf(info_stream(out_path), "wrote %s (float32 %s)\n", out_path, ds);
cleanup:
    free(x);
    return report(rc, err);
}

/* ---- bench sdpa --------------------------------------------------------------------- */

typedef struct bench_args {
    shape sh; /* B, H, S_q, S_kv, D */
    bool mask, json, check, f16;
    wgnn_sdpa_impl impl;
    long long iters, warmup;
} bench_args;

typedef struct bench_result {
    char adapter[256];
    wgnn_sdpa_impl routed;
    uint64_t scratch;
    timing t;
    bool checked;
    check_result chk;
} bench_result;

static int bench_sdpa_run(const global_opts *g, const bench_args *b, bench_result *res, char *err) {
    wgnn_context *ctx = NULL;
    float *store[4] = {NULL, NULL, NULL, NULL}, *gpu = NULL;
    host_attn h;
    attn a = {0};
    int rc = open_context(g, &ctx, err);
    if (rc != CLI_OK) goto cleanup;
    wgnn_adapter_info ai;
    wgnn_context_adapter(ctx, &ai);
    snprintf(res->adapter, sizeof res->adapter, "%s", ai.name);
    if ((rc = random_problem(ctx, b->sh.dims, b->mask, b->impl, b->f16 ? WGNN_F16 : WGNN_F32, store, &h, &a, err)) !=
        CLI_OK)
        goto cleanup;
    wgnn_status s = wgnn_sdpa_scratch_bytes(ctx, a.q, a.k, a.v, &a.opts, &res->scratch, &res->routed);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    if ((rc = time_sdpa(ctx, &a, (int)b->warmup, (int)b->iters, &res->t, err)) != CLI_OK) goto cleanup;
    if (b->check) {
        if ((rc = download_out(ctx, &a, &gpu, err)) != CLI_OK) goto cleanup;
        if ((rc = check_against_ref(&a, &h, gpu, &res->chk, err)) != CLI_OK) goto cleanup;
        res->checked = true;
    }
cleanup:
    free(gpu);
    attn_release(&a);
    for (int i = 3; i >= 0; i--) free(store[i]);
    wgnn_context_destroy(ctx);
    return rc;
}

static void bench_json_head(const bench_args *b) {
    printf("{\"op\":\"sdpa\",\"shape\":[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "],\"mask\":%s",
           b->sh.dims[0], b->sh.dims[1], b->sh.dims[2], b->sh.dims[3], b->sh.dims[4], b->mask ? "true" : "false");
    printf(",\"dtype\":\"%s\"", b->f16 ? "float16" : "float32");
}

static int cmd_bench(const global_opts *g, int argc, char **argv) {
    bench_args b = {.impl = WGNN_SDPA_AUTO, .iters = 20, .warmup = 3};
    if (argc < 1) return usage_error("bench", k_usage_bench, "missing the op to time (sdpa)");
    if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
        fputs(k_usage_bench, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[0], "sdpa") != 0)
        return usage_error("bench", k_usage_bench, "unknown op '%s' (bench times: sdpa)", argv[0]);
    const opt_spec specs[] = {
        {"--shape", OPT_SHAPE, &b.sh, 5, 5, true},       {"--mask", OPT_FLAG, &b.mask, 0, 0, false},
        {"--impl", OPT_IMPL, &b.impl, 0, 0, false},      {"--iters", OPT_INT, &b.iters, 1, 1000000, false},
        {"--warmup", OPT_INT, &b.warmup, 0, 1000000, false}, {"--json", OPT_FLAG, &b.json, 0, 0, false},
        {"--check", OPT_FLAG, &b.check, 0, 0, false},    {"--f16", OPT_FLAG, &b.f16, 0, 0, false},
    };
    parse_result pr = parse_opts("bench sdpa", k_usage_bench, specs, NSPECS(specs), argc - 1, argv + 1, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;

    char err[ERR_LEN] = "";
    bench_result r = {.routed = b.impl};
    int rc = bench_sdpa_run(g, &b, &r, err);
    if (rc != CLI_OK) {
        if (b.json) {
            bench_json_head(&b);
            printf(",\"impl\":\"%s\",\"error\":", impl_name(b.impl));
            json_str(err);
            printf("}\n");
        }
        return report(rc, err);
    }
    double tflops = sdpa_tflops(b.sh.dims, r.t.median);
    if (b.json) {
        bench_json_head(&b);
        printf(",\"impl\":\"%s\",\"impl_requested\":\"%s\",\"iters\":%lld,\"warmup\":%lld,\"median_ms\":",
               impl_name(r.routed), impl_name(b.impl), b.iters, b.warmup);
        json_num(r.t.median);
        printf(",\"min_ms\":");
        json_num(r.t.min);
        printf(",\"max_ms\":");
        json_num(r.t.max);
        printf(",\"tflops\":");
        json_num(tflops);
        printf(",\"scratch_bytes\":%" PRIu64 ",\"timer\":\"%s\",\"adapter\":", r.scratch, r.t.timer);
        json_str(r.adapter);
        if (r.checked) {
            printf(",\"max_abs_err\":");
            json_num(r.chk.max_abs);
            printf(",\"max_rel_err\":");
            json_num(r.chk.max_rel);
            printf(",\"check\":\"%s\"", r.chk.pass ? "PASS" : "FAIL");
        }
        printf("}\n");
    } else {
        char ds[96];
        dims_str(5, b.sh.dims, ds, sizeof ds);
        printf("sdpa %s%s%s impl=%s median %.4f ms (min %.4f, max %.4f, %lld iters) %.4f TFLOP/s scratch %" PRIu64
               " bytes timer=%s adapter=\"%s\"",
               ds, b.mask ? " +mask" : "", b.f16 ? " float16" : "", impl_name(r.routed), r.t.median, r.t.min, r.t.max, b.iters, tflops,
               r.scratch, r.t.timer, r.adapter);
        if (r.checked) printf(" max_abs_err=%.3g check=%s", r.chk.max_abs, r.chk.pass ? "PASS" : "FAIL");
        printf("\n");
    }
    return r.checked && !r.chk.pass ? CLI_CHECK : CLI_OK;
}

/* ---- demo ------------------------------------------------------------------------ */

static int cmd_demo(const global_opts *g, int argc, char **argv) {
    long long iters = 10; /* about 1.5 s in all on lavapipe with 2 cores */
    const opt_spec specs[] = {{"--iters", OPT_INT, &iters, 1, 1000000, false}};
    parse_result pr = parse_opts("demo", k_usage_demo, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;

    static const int64_t vit[5] = {1, 12, 197, 197, 64}; /* ViT-B/16: 196 patches + CLS, 12 heads of 64 */
    static const wgnn_sdpa_impl impls[] = {WGNN_SDPA_FUSED, WGNN_SDPA_THREE_PASS, WGNN_SDPA_AUTO};
    char err[ERR_LEN] = "";
    wgnn_context *ctx = NULL;
    float *store[4] = {NULL, NULL, NULL, NULL}, *gpu = NULL;
    host_attn h;
    attn a = {0};
    bool all_pass = true;
    const char *timer = "";
    int rc = open_context(g, &ctx, err);
    if (rc != CLI_OK) goto cleanup;
    wgnn_adapter_info ai;
    wgnn_context_adapter(ctx, &ai);
    printf("adapter: %s (%s, %s)\n", ai.name, ai.backend, ai.type);
    if ((rc = random_problem(ctx, vit, false, WGNN_SDPA_AUTO, WGNN_F32, store, &h, &a, err)) != CLI_OK) goto cleanup;
    printf("sdpa [B,H,S_q,S_kv,D] = [1,12,197,197,64] (ViT-B/16), random inputs, median of %lld runs\n\n", iters);
    printf("%-20s %12s %10s %12s  %s\n", "impl", "median ms", "TFLOP/s", "max_abs_err", "check");
    for (size_t i = 0; i < NSPECS(impls); i++) {
        wgnn_sdpa_impl routed = impls[i];
        uint64_t scratch = 0;
        timing t;
        check_result r;
        char label[48];
        a.opts.impl = impls[i];
        wgnn_status s = wgnn_sdpa_scratch_bytes(ctx, a.q, a.k, a.v, &a.opts, &scratch, &routed);
        if (s == WGNN_OK) s = wgnn_sdpa(ctx, a.q, a.k, a.v, &a.opts, a.out);
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        free(gpu);
        gpu = NULL;
        if ((rc = download_out(ctx, &a, &gpu, err)) != CLI_OK) goto cleanup;
        if ((rc = check_against_ref(&a, &h, gpu, &r, err)) != CLI_OK) goto cleanup;
        if ((rc = time_sdpa(ctx, &a, 1, (int)iters, &t, err)) != CLI_OK) goto cleanup;
        all_pass = all_pass && r.pass;
        if (impls[i] == WGNN_SDPA_AUTO) snprintf(label, sizeof label, "auto -> %s", impl_name(routed));
        else snprintf(label, sizeof label, "%s", impl_name(routed));
        printf("%-20s %12.3f %10.4f %12.3g  %s\n", label, t.median, sdpa_tflops(vit, t.median), r.max_abs,
               r.pass ? "PASS" : "FAIL");
        timer = t.timer;
    }
    printf("\ntimer: %s; check: |gpu - ref| <= %g + %g * |ref|\n", timer, CHECK_ATOL, CHECK_RTOL);
    printf("%s\n", all_pass ? "all checks passed" : "some checks FAILED");
    rc = all_pass ? CLI_OK : CLI_CHECK;
cleanup:
    free(gpu);
    attn_release(&a);
    for (int i = 3; i >= 0; i--) free(store[i]);
    wgnn_context_destroy(ctx);
    return report(rc, err);
}

/* ---- main ------------------------------------------------------------------------ */

typedef int (*cmd_fn)(const global_opts *g, int argc, char **argv);

static const struct command {
    const char *name;
    const char *usage;
    cmd_fn run;
} k_commands[] = {
    {"info", k_usage_info, cmd_info},    {"sdpa", k_usage_sdpa, cmd_sdpa},    {"rand", k_usage_rand, cmd_rand},
    {"bench", k_usage_bench, cmd_bench}, {"demo", k_usage_demo, cmd_demo},
};

static const struct command *find_command(const char *name) {
    for (size_t i = 0; i < NSPECS(k_commands); i++)
        if (strcmp(k_commands[i].name, name) == 0) return &k_commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    install_signal_handlers();
    global_opts g = {NULL, 0};
    const opt_spec specs[] = {
        {"--adapter", OPT_STR, &g.adapter, 0, 0, false},
        {"--timeout-ms", OPT_INT, &g.timeout_ms, 0, UINT32_MAX, false},
    };
    int next = 0;
    parse_result pr = parse_opts(NULL, k_usage_main, specs, NSPECS(specs), argc - 1, argv + 1, true, &next);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    argc -= 1 + next;
    argv += 1 + next;
    if (argc < 1) return usage_error(NULL, k_usage_main, "missing command");
    if (strcmp(argv[0], "help") == 0) {
        if (argc < 2) {
            fputs(k_usage_main, stdout);
            return CLI_OK;
        }
        const struct command *c = find_command(argv[1]);
        if (!c) return usage_error(NULL, k_usage_main, "unknown command '%s'", argv[1]);
        fputs(c->usage, stdout);
        return CLI_OK;
    }
    const struct command *c = find_command(argv[0]);
    if (!c) return usage_error(NULL, k_usage_main, "unknown command '%s'", argv[0]);
    return c->run(&g, argc - 1, argv + 1);
}
