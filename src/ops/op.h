/* op.h - the op table: one row (wgnn__op) per op, shared by wgnn_op, the
 * CPU references, the CLI (`wgnn op`), the tests and the benchmarks.
 *
 * Adding an op: a row in its family's file (src/ops/<family>.c), a line
 * OP(name) in src/ops/ops.def, its kernel (shaders/<kernel>.wgsl, or a
 * variant of a shared one), its reference (src/ref/<family>_ref.c) and a case
 * in tests/test_ops.c. Nothing else: the CLI and the tests walk the table. */
#ifndef WGNN_OP_H
#define WGNN_OP_H

#include "internal.h"

#define WGNN__MAX_IN 16
#define WGNN__MAX_OUT 16
#define WGNN__MAX_ARGS 8
#define WGNN__MAX_INTS 16

typedef enum wgnn__arg_type {
    WGNN__A_INT,    /* "int" */
    WGNN__A_INTS,   /* "int[]": comma-separated */
    WGNN__A_FLOAT,  /* "float" (also inf, -inf) */
    WGNN__A_BOOL,   /* "bool": true / false */
    WGNN__A_DTYPE,  /* "dtype": float32, float16, int32 */
    WGNN__A_CHOICE  /* "a|b|c": one of the words; i[0] is its index */
} wgnn__arg_type;

/* A parsed argument. set is false for an optional argument given no value
 * (its default is "" or it was given as "none"). */
typedef struct wgnn__arg {
    bool set;
    int n;                     /* INTS: count */
    int64_t i[WGNN__MAX_INTS]; /* INT, BOOL, DTYPE, CHOICE: i[0]; INTS: i[0..n) */
    double f;                  /* FLOAT */
} wgnn__arg;

/* What check, plan and ref see: shapes, parsed arguments, and where check
 * and ref write a message. */
typedef struct wgnn__node {
    const struct wgnn__op *op;
    int n_in, n_out;
    wgnn_desc in[WGNN__MAX_IN];
    wgnn_desc out[WGNN__MAX_OUT];
    wgnn__arg arg[WGNN__MAX_ARGS]; /* in the order of op->info.args */
    char *err;
    size_t err_len;
} wgnn__node;

typedef struct wgnn__op {
    wgnn_op_info info;
    /* Shapes and dtypes only, no GPU: validates n->in and the arguments and
     * fills n->out and n->n_out. */
    wgnn_status (*check)(wgnn__node *n);
    /* Dispatches for tensors of the checked shapes (device limits are
     * checked here, with the message in ctx). */
    wgnn_status (*plan)(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                        wgnn_tensor *const *out, wgnn__plan *p);
    /* CPU reference with double accumulation; in/out laid out as n->in/out. */
    wgnn_status (*ref)(wgnn__node *n, const void *const *in, void *const *out);
    /* Outputs that may also be inputs (in place, aten's trailing-underscore
     * form): WGNN__INPLACE(j, i) | ... lets output j be input i; 0 (false):
     * none; true is WGNN__INPLACE(0, 0). plan and ref always see such an
     * output over its input (one tensor twice) and write only what
     * changes: where the caller gave another output, wgnn__op_plan and the
     * reference's caller copy the input into it first. Other pairs are
     * refused. */
    uint32_t inplace;
} wgnn__op;

#define WGNN__INPLACE(j, i) ((uint32_t)((i) + 1) << (5 * (j)))

/* The input that output j of row may be written over in place, or -1. */
static inline int wgnn__op_inplace_input(const wgnn__op *row, int j) {
    return row && j >= 0 && j < 6 ? (int)((row->inplace >> (5 * j)) & 31u) - 1 : -1;
}

/* n's row's plan, for wgnn_op and graph builds: an output the row works on
 * in place (inplace) that is not its input's tensor gets a copy of the
 * input first, and the row then runs in place on it. */
wgnn_status wgnn__op_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                          wgnn_tensor *const *out, wgnn__plan *p);

/* Row passes other rows' plans share (linear's prologue into scratch):
 * y[r] = x[r] / sqrt(mean(x[r]^2) + eps) (* w, [n], when w is not NULL)
 * over rows of n values (src/ops/norm.c); y[r] = silu(x[r][:n]) * x[r][n:] over rows of 2n
 * values (src/ops/glu.c). */
wgnn_status wgnn__plan_rms_rows(wgnn_context *ctx, wgnn__plan *p, wgnn__binding x, wgnn__binding y, uint64_t rows,
                                uint64_t n, float eps, WGPUBuffer w);
/* dst[0..words) = src[0..words), 32-bit words (src/ops/shape.c). */
wgnn_status wgnn__plan_copy_words(wgnn_context *ctx, wgnn__plan *p, WGPUBuffer src, WGPUBuffer dst, uint64_t words);
wgnn_status wgnn__plan_swiglu_rows(wgnn_context *ctx, wgnn__plan *p, wgnn__binding x, wgnn__binding y,
                                   uint64_t rows, uint64_t n);

/* wgnn_op without the thread guard (for typed entry points that hold it). */
wgnn_status wgnn__op_run(wgnn_context *ctx, const char *op, const wgnn_tensor *const *in, int n_in,
                         const char *const *args, int n_args, wgnn_tensor *const *out, int n_out);
/* What wgnn_op_shapes does, into node: finds op, checks n_in, parses args
 * and runs the row's check (n->out, n->n_out filled). *row (may be NULL) gets
 * the row on success. node->err points at err afterwards (the caller may
 * reset it). For callers that keep the node, e.g. the graph. */
wgnn_status wgnn__op_prepare(const char *op, const wgnn_desc *in, int n_in, const char *const *args, int n_args,
                             wgnn__node *node, const struct wgnn__op **row, char *err, size_t err_len);
/* Writes the node's message (prefixed by the op's name) and returns s. */
wgnn_status wgnn__node_err(wgnn__node *n, wgnn_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "[2,3,5]" */
void wgnn__dims_str(const wgnn_desc *d, char *buf, size_t cap);
uint64_t wgnn__desc_numel(const wgnn_desc *d);
/* Resolves a possibly negative dim against rank (Python style); false when
 * outside [-rank, rank). */
bool wgnn__norm_dim(int64_t dim, int rank, int *out);

#define OP(name) extern const wgnn__op wgnn__op_##name;
#include "ops.def"
#undef OP

#endif /* WGNN_OP_H */
