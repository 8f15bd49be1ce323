/* args.h - what the commands share: exit codes, error reporting, the option
 * parser, strict value parsing, contexts, random data, JSON output and the
 * writing of .npy outputs (temporary file removed on a fatal signal). */
#ifndef WGNN_CLI_ARGS_H
#define WGNN_CLI_ARGS_H

#include "wgnn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_CHECK = 3 };

#define ERR_LEN 1024

/* --check tolerance: an element passes when |gpu - ref| <= ATOL + RTOL * |ref|;
 * float16 outputs (rounded to f16 after f32 accumulation) get the looser
 * bound documented in wgnn.h. */
#define CHECK_ATOL 1e-4
#define CHECK_RTOL 1e-3
#define CHECK_ATOL_F16 1e-3
#define CHECK_RTOL_F16 1e-3

#define NSPECS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors ------------------------------------------------------------------ */

/* Prints "wgnn: [cmd: ]message" and the command's usage to stderr; returns CLI_USAGE. */
int usage_error(const char *cmd, const char *usage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Writes a runtime failure message into err (ERR_LEN bytes); returns CLI_FAIL. */
int set_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* set_err with the context's message (or the status's name). */
int ctx_err(char *err, const wgnn_context *ctx, wgnn_status s);
/* Prints err as "wgnn: err" when rc is CLI_FAIL; returns rc. */
int report(int rc, const char *err);

/* ---- strict value parsing ---------------------------------------------------- */

typedef struct shape {
    int rank;
    int64_t dims[WGNN_MAX_RANK];
} shape;

bool parse_int(const char *s, long long lo, long long hi, long long *out);
/* "1,2,3": comma-separated ids in [0, hi] into *ids (malloc'd, free()) and
 * *n; errors (in err, CLI_FAIL) start with what, e.g. "tokenize: --decode". */
int parse_id_list(const char *what, const char *list, long long hi, int32_t **ids, int *n, char *err);
/* The syntax of opt's id list checked before anything loads: CLI_OK, or a
 * usage error (CLI_USAGE) for cmd; the ids' range is the model's to check. */
int id_list_syntax(const char *cmd, const char *usage, const char *opt, const char *list);
bool parse_num(const char *s, double *out);
/* "A,B,C" with every dim in [1, INT32_MAX] and lo <= rank <= hi. */
bool parse_shape(const char *s, int lo, int hi, shape *out);
const char *impl_name(wgnn_sdpa_impl impl);
bool parse_impl(const char *s, wgnn_sdpa_impl *out);

/* ---- option tables ----------------------------------------------------------- */

typedef enum opt_kind {
    OPT_FLAG,  /* bool */
    OPT_STR,   /* const char * */
    OPT_INT,   /* long long in [lo, hi] */
    OPT_NUM,   /* finite double */
    OPT_SHAPE, /* shape with rank in [lo, hi] */
    OPT_IMPL,  /* wgnn_sdpa_impl */
    OPT_LIST   /* str_list: the option may repeat, at most hi times; each value is appended */
} opt_kind;

#define MAX_LIST 16

typedef struct str_list {
    int n;
    const char *v[MAX_LIST];
} str_list;

typedef struct opt_spec {
    const char *name; /* "--out" */
    opt_kind kind;
    void *dst;
    long long lo, hi;
    bool required;
} opt_spec;

#define MAX_OPTS 16 /* per table */

typedef enum parse_result { PARSE_OK, PARSE_HELP, PARSE_ERROR } parse_result;

/* Parses "--name value" / "--name=value" options into the specs' targets.
 * --help or -h prints usage to stdout (PARSE_HELP). With stop_at_word, the
 * first argument not starting with '-' ends the options and its index goes to
 * *next; without, such an argument is an error. Errors print to stderr. */
parse_result parse_opts(const char *cmd, const char *usage, const opt_spec *specs, size_t n, int argc, char **argv,
                        bool stop_at_word, int *next);

/* ---- shared helpers ------------------------------------------------------------ */

typedef struct global_opts {
    const char *adapter;
    long long timeout_ms;
    long long poll_us;
} global_opts;

int open_context(const global_opts *g, wgnn_context **ctx, char *err);
double now_ms(void);
uint64_t splitmix64(uint64_t *state);
/* n uniform values in [lo, hi) */
void fill_uniform(float *x, uint64_t n, uint64_t *state, double lo, double hi);
/* Element count, failing when it or its float32 bytes would overflow. */
bool shape_numel(int rank, const int64_t *dims, uint64_t *n);
float *alloc_floats(uint64_t n, char *err);
/* "[2,3,5]", "[]" for a scalar */
void dims_str(int rank, const int64_t *dims, char *buf, size_t cap);
/* A JSON string (quoted, escaped) or number (null when not finite) on stdout. */
void json_str(const char *s);
void json_num(double x);
/* A tensor of the given shape holding bytes of data (NULL on failure). */
wgnn_status tensor_from_host(wgnn_context *ctx, wgnn_dtype dt, int rank, const int64_t *dims, const void *data,
                             uint64_t bytes, wgnn_tensor **out);

/* ---- timing ------------------------------------------------------------------- */

typedef struct timing {
    double median, min, max;
    const char *timer; /* "gpu-timestamp" or "wall" */
} timing;

/* Records the work to time (one op, say); user is passed through. */
typedef wgnn_status (*run_fn)(wgnn_context *ctx, void *user);

/* warmup untimed runs, then iters (>= 1) timed ones: GPU timestamps around
 * each (wgnn_timing_begin / end), or host wall time around the run and a
 * sync when the device cannot time (t->timer says which). */
int time_runs(wgnn_context *ctx, run_fn run, void *user, int warmup, int iters, timing *t, char *err);

/* ---- profiles ------------------------------------------------------------------ */

/* After a profiled run of g: its nodes by GPU time (the 40 longest), then
 * the time per op name, under the heading title. *sum gets the nodes' GPU
 * time summed, *total the span from the first start to the last end (ns).
 * When the profile cannot be read, prints why and returns its status. */
wgnn_status print_profile(FILE *info, wgnn_context *ctx, wgnn_graph *g, const char *title, uint64_t *sum,
                          uint64_t *total);

/* ---- reading inputs ---------------------------------------------------------- */

/* Reads only the header of the .npy at path (a pipe, whose header cannot be
 * read ahead of its data, is read whole here, once). */
int load_header(const char *path, wgnn_npy *npy, char *err);
/* Reads the data of an input whose header alone was read (no-op when the
 * data is there), making sure the file still has that header; messages
 * start with "cmd: " and name the input. */
int load_data(const char *cmd, const char *path, const char *name, wgnn_npy *npy, char *err);

/* ---- writing outputs ------------------------------------------------------------ */

/* Removes a temporary output file on SIGINT, SIGTERM, SIGHUP, SIGQUIT. */
void install_signal_handlers(void);
/* wgnn_npy_save, with its temporary file registered for the signal handler. */
wgnn_status save_npy(const char *path, wgnn_dtype dt, int rank, const int64_t *dims, const void *data, char *err,
                     size_t err_len);
typedef struct out_file {
    const char *path;
    wgnn_dtype dtype;
    int rank;
    const int64_t *dims;
    const void *data;
} out_file;

/* Writes all n (<= MAX_LIST) outputs or, when any write fails, none:
 * regular files are staged under temporary names and renamed at the end;
 * devices, FIFOs and links (/dev/stdout) are written in place, which cannot
 * be undone, after every staged file was written. */
int save_all(const out_file *o, int n, char *err);
/* Whether a tensor of dtype and shape fits one buffer of ctx's device: else
 * CLI_FAIL with a message naming what (e.g. "bench: input 0"), checked
 * before its host copy is allocated. */
int check_fits_device(wgnn_context *ctx, const char *what, wgnn_dtype dt, int rank, const int64_t *dims, char *err);
/* Checks output paths before any work: none empty, none a directory, no
 * two naming one file (the same string, or the same file reached by other
 * spellings or links). opts[i] names path i's option ("--out"); NULL paths
 * are skipped. Returns CLI_OK, or usage_error's CLI_USAGE for cmd. */
int check_outputs(const char *cmd, const char *usage, const char *const *paths, const char *const *opts, int n);
/* Where progress lines go: stderr when --out is this program's stdout
 * (--out /dev/stdout), so that they do not mix with the .npy bytes. */
FILE *info_stream(const char *out_path);

#endif /* WGNN_CLI_ARGS_H */
