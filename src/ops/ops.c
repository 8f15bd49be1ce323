/* ops.c - the op table and the generic entry points over it: argument
 * parsing, wgnn_op_shapes, wgnn_op, wgnn_op_ref. */
#include "op.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static const wgnn__op *const k_ops[] = {
#define OP(name) &wgnn__op_##name,
#include "ops.def"
#undef OP
};
#define N_OPS ((int)(sizeof k_ops / sizeof k_ops[0]))

int wgnn_op_count(void) { return N_OPS; }

const wgnn_op_info *wgnn_op_info_at(int i) { return i >= 0 && i < N_OPS ? &k_ops[i]->info : NULL; }

static const wgnn__op *find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < N_OPS; i++)
        if (strcmp(k_ops[i]->info.name, name) == 0) return k_ops[i];
    return NULL;
}

const wgnn_op_info *wgnn_op_find(const char *name) {
    const wgnn__op *op = find(name);
    return op ? &op->info : NULL;
}

/* ---- helpers for the rows ------------------------------------------------ */

wgnn_status wgnn__node_err(wgnn__node *n, wgnn_status s, const char *fmt, ...) {
    if (n->err && n->err_len) {
        int k = snprintf(n->err, n->err_len, "%s: ", n->op ? n->op->info.name : "op");
        if (k > 0 && (size_t)k < n->err_len) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(n->err + k, n->err_len - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return s;
}

void wgnn__dims_str(const wgnn_desc *d, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < d->rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)d->dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

uint64_t wgnn__desc_numel(const wgnn_desc *d) {
    uint64_t n = 1;
    for (int i = 0; i < d->rank; i++) n *= (uint64_t)d->dims[i];
    return n;
}

bool wgnn__norm_dim(int64_t dim, int rank, int *out) {
    if (dim < -(int64_t)rank || dim >= rank) return false;
    *out = (int)(dim < 0 ? dim + rank : dim);
    return true;
}

/* ---- argument parsing ------------------------------------------------------ */

static wgnn__arg_type arg_type(const char *t) {
    if (strcmp(t, "int") == 0) return WGNN__A_INT;
    if (strcmp(t, "int[]") == 0) return WGNN__A_INTS;
    if (strcmp(t, "float") == 0) return WGNN__A_FLOAT;
    if (strcmp(t, "bool") == 0) return WGNN__A_BOOL;
    if (strcmp(t, "dtype") == 0) return WGNN__A_DTYPE;
    return WGNN__A_CHOICE;
}

static bool parse_i64(const char *s, size_t len, int64_t *out) {
    char buf[32];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || !end || *end || isspace((unsigned char)buf[0])) return false;
    *out = v;
    return true;
}

/* Parses value into a; returns a short reason on failure. */
static const char *parse_value(const wgnn_op_arg_info *spec, const char *value, wgnn__arg *a) {
    memset(a, 0, sizeof *a);
    bool optional = spec->def && spec->def[0] == '\0';
    if (strcmp(value, "none") == 0 || strcmp(value, "None") == 0) {
        if (optional) return NULL;
        if (arg_type(spec->type) != WGNN__A_CHOICE) return "has no \"none\" value (it is not optional)";
    }
    a->set = true;
    switch (arg_type(spec->type)) {
    case WGNN__A_INT:
        if (!parse_i64(value, strlen(value), &a->i[0])) return "is not an integer";
        a->n = 1;
        return NULL;
    case WGNN__A_INTS: {
        const char *p = value;
        if (*p == '\0') return NULL; /* an empty list */
        for (;;) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            if (a->n >= WGNN__MAX_INTS) return "has more than 16 values";
            if (!parse_i64(p, len, &a->i[a->n])) return "is not a comma-separated list of integers";
            a->n++;
            if (!c) return NULL;
            p = c + 1;
        }
    }
    case WGNN__A_FLOAT: {
        char *end = NULL;
        errno = 0;
        double v = strtod(value, &end);
        if (!end || *end || end == value || isspace((unsigned char)value[0]) || (errno == ERANGE && isinf(v)))
            return "is not a number";
        a->f = v;
        return NULL;
    }
    case WGNN__A_BOOL:
        if (strcmp(value, "true") == 0 || strcmp(value, "True") == 0 || strcmp(value, "1") == 0) a->i[0] = 1;
        else if (strcmp(value, "false") == 0 || strcmp(value, "False") == 0 || strcmp(value, "0") == 0) a->i[0] = 0;
        else return "is not true or false";
        return NULL;
    case WGNN__A_DTYPE:
        if (strcmp(value, "float32") == 0 || strcmp(value, "torch.float32") == 0) a->i[0] = WGNN_F32;
        else if (strcmp(value, "float16") == 0 || strcmp(value, "torch.float16") == 0) a->i[0] = WGNN_F16;
        else if (strcmp(value, "int32") == 0 || strcmp(value, "torch.int32") == 0) a->i[0] = WGNN_I32;
        else return "is not a dtype (float32, float16, int32)";
        return NULL;
    case WGNN__A_CHOICE: {
        const char *p = spec->type;
        size_t vl = strlen(value);
        for (int k = 0;; k++) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (len == vl && strncmp(p, value, len) == 0) {
                a->i[0] = k;
                return NULL;
            }
            if (!bar) return "is not one of the choices";
            p = bar + 1;
        }
    }
    }
    return "has an unknown type";
}

/* Builds n's arguments from "key=value" strings and the defaults. */
static wgnn_status parse_args(wgnn__node *n, const char *const *args, int n_args) {
    const wgnn_op_info *info = &n->op->info;
    bool given[WGNN__MAX_ARGS] = {0};
    if (n_args < 0 || (n_args > 0 && !args))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "args must hold n_args strings");
    for (int i = 0; i < n_args; i++) {
        const char *kv = args[i];
        const char *eq = kv ? strchr(kv, '=') : NULL;
        if (!eq)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "argument \"%s\" is not of the form key=value",
                                  kv ? kv : "(null)");
        size_t kl = (size_t)(eq - kv);
        int j = 0;
        while (j < info->n_args && !(strlen(info->args[j].name) == kl && strncmp(info->args[j].name, kv, kl) == 0))
            j++;
        if (j == info->n_args) {
            char known[256] = "";
            size_t m = 0;
            for (int q = 0; q < info->n_args && m < sizeof known; q++)
                m += (size_t)snprintf(known + m, sizeof known - m, "%s%s", q ? ", " : "", info->args[q].name);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "unknown argument \"%.*s\" (%s%s)", (int)kl, kv,
                                  info->n_args ? "it takes: " : "it takes no arguments", known);
        }
        if (given[j])
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "argument %s given twice", info->args[j].name);
        given[j] = true;
        const char *why = parse_value(&info->args[j], eq + 1, &n->arg[j]);
        if (why)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "%s=%s: the value %s (%s expected)",
                                  info->args[j].name, eq + 1, why, info->args[j].type);
    }
    for (int j = 0; j < info->n_args; j++) {
        if (given[j]) continue;
        const char *def = info->args[j].def;
        if (!def)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "argument %s (%s) is required",
                                  info->args[j].name, info->args[j].type);
        if (def[0] == '\0') {
            memset(&n->arg[j], 0, sizeof n->arg[j]);
            continue;
        }
        const char *why = parse_value(&info->args[j], def, &n->arg[j]);
        if (why) return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "default of %s %s", info->args[j].name, why);
    }
    return WGNN_OK;
}

static bool desc_ok(const wgnn_desc *d) {
    if (wgnn_dtype_size(d->dtype) == 0 || d->rank < 0 || d->rank > WGNN_MAX_RANK) return false;
    for (int i = 0; i < d->rank; i++)
        if (d->dims[i] < 1) return false;
    return true;
}

/* Finds the op, parses the args and checks the shapes into n. */
static wgnn_status prepare(const char *name, const wgnn_desc *in, int n_in, const char *const *args, int n_args,
                           wgnn__node *n, char *err, size_t err_len) {
    memset(n, 0, sizeof *n);
    n->err = err;
    n->err_len = err_len;
    if (err && err_len) err[0] = '\0';
    if (!name) {
        if (err && err_len) snprintf(err, err_len, "the op name is NULL (`wgnn op --list` lists the ops)");
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    n->op = find(name);
    if (!n->op) {
        if (err && err_len)
            snprintf(err, err_len, "unknown op \"%s\" (`wgnn op --list` lists the ops)", name);
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    const wgnn_op_info *info = &n->op->info;
    if (n_in < info->min_inputs || n_in > info->max_inputs) {
        if (info->min_inputs == info->max_inputs)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "takes %d input%s (%s), %d given", info->min_inputs,
                                  info->min_inputs == 1 ? "" : "s", info->inputs, n_in);
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "takes %d to %d inputs (%s), %d given", info->min_inputs,
                              info->max_inputs, info->inputs, n_in);
    }
    if (n_in > 0 && !in) return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "inputs must not be NULL");
    for (int i = 0; i < n_in; i++) {
        if (!desc_ok(&in[i]))
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "input %d has an unknown dtype, a rank outside 0..%d or a dim < 1", i,
                                  WGNN_MAX_RANK);
        /* as outputs below: the shape checks then add and multiply dims
         * without overflow */
        uint64_t numel = 1;
        for (int d = 0; d < in[i].rank; d++)
            if (!wgnn__mul_u64(numel, (uint64_t)in[i].dims[d], &numel) || numel > (1ull << 50))
                return wgnn__node_err(n, WGNN_ERR_LIMIT, "input %d has more than 2^50 elements", i);
        n->in[i] = in[i];
    }
    n->n_in = n_in;
    wgnn_status s = parse_args(n, args, n_args);
    if (s != WGNN_OK) return s;
    s = n->op->check(n);
    if (s != WGNN_OK) return s;
    for (int i = 0; i < n->n_out; i++) {
        uint64_t numel = 1;
        for (int d = 0; d < n->out[i].rank; d++)
            if (!wgnn__mul_u64(numel, (uint64_t)n->out[i].dims[d], &numel) || numel > (1ull << 50))
                return wgnn__node_err(n, WGNN_ERR_LIMIT, "output %d has more than 2^50 elements", i);
    }
    return WGNN_OK;
}

wgnn_status wgnn__op_prepare(const char *op, const wgnn_desc *in, int n_in, const char *const *args, int n_args,
                             wgnn__node *node, const wgnn__op **row, char *err, size_t err_len) {
    wgnn_status s = prepare(op, in, n_in, args, n_args, node, err, err_len);
    if (row) *row = s == WGNN_OK ? node->op : NULL;
    return s;
}

wgnn_status wgnn_op_shapes(const char *op, const wgnn_desc *in, int n_in, const char *const *args, int n_args,
                           wgnn_desc *out, int out_cap, int *n_out, char *err, size_t err_len) {
    wgnn__node n;
    wgnn_status s = prepare(op, in, n_in, args, n_args, &n, err, err_len);
    if (s != WGNN_OK) return s;
    if (n_out) *n_out = n.n_out;
    if (n.n_out > 0 && !out)
        return wgnn__node_err(&n, WGNN_ERR_INVALID_ARGUMENT, "out is NULL; it must hold the op's %d output descs",
                              n.n_out);
    if (n.n_out > out_cap)
        return wgnn__node_err(&n, WGNN_ERR_INVALID_ARGUMENT, "has %d outputs; out_cap is %d", n.n_out, out_cap);
    for (int i = 0; i < n.n_out; i++) out[i] = n.out[i];
    return WGNN_OK;
}

static bool same_desc(const wgnn_desc *a, const wgnn_desc *b) {
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static wgnn_status check_outputs(wgnn__node *n, const wgnn_desc *got, int n_out) {
    if (n_out != n->n_out)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "gives %d outputs, %d given", n->n_out, n_out);
    for (int i = 0; i < n_out; i++) {
        if (same_desc(&got[i], &n->out[i])) continue;
        char want[160], have[160];
        wgnn__dims_str(&n->out[i], want, sizeof want);
        wgnn__dims_str(&got[i], have, sizeof have);
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "output %d is %s %s; it must be %s %s", i,
                              wgnn_dtype_name(got[i].dtype), have, wgnn_dtype_name(n->out[i].dtype), want);
    }
    return WGNN_OK;
}

wgnn_status wgnn__op_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                          wgnn_tensor *const *out, wgnn__plan *p) {
    const wgnn_tensor *tin[WGNN__MAX_IN];
    for (int i = 0; i < n->n_in; i++) tin[i] = in[i];
    for (int j = 0; j < n->n_out; j++) {
        int i = wgnn__op_inplace_input(n->op, j);
        if (i < 0 || i >= n->n_in || out[j]->buf == in[i]->buf) continue;
        wgnn_status s = wgnn__plan_copy_words(ctx, p, in[i]->buf, out[j]->buf, (out[j]->nbytes + 3u) / 4u);
        if (s != WGNN_OK) return s;
        tin[i] = out[j];
    }
    return n->op->plan(ctx, n, tin, out, p);
}

static void tensor_desc(const wgnn_tensor *t, wgnn_desc *d) {
    memset(d, 0, sizeof *d);
    d->dtype = t->dtype;
    d->rank = t->rank;
    memcpy(d->dims, t->dims, (size_t)t->rank * sizeof t->dims[0]);
}

wgnn_status wgnn__op_run(wgnn_context *ctx, const char *op, const wgnn_tensor *const *in, int n_in,
                          const char *const *args, int n_args, wgnn_tensor *const *out, int n_out) {
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    if ((n_in > 0 && !in) || n_in < 0 || n_in > WGNN__MAX_IN || n_out < 0 || n_out > WGNN__MAX_OUT ||
        (n_out > 0 && !out))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: in/out arrays and counts are inconsistent",
                         op ? op : "op");
    wgnn_desc din[WGNN__MAX_IN], dout[WGNN__MAX_OUT];
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: input %d is NULL", op ? op : "op", i);
        if (in[i]->ctx != ctx)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: input %d belongs to another context", op ? op : "op", i);
        tensor_desc(in[i], &din[i]);
    }
    for (int i = 0; i < n_out; i++) {
        if (!out[i]) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: output %d is NULL", op ? op : "op", i);
        if (out[i]->ctx != ctx)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: output %d belongs to another context", op ? op : "op",
                             i);
        const wgnn__op *row = op ? find(op) : NULL;
        for (int j = 0; j < n_in; j++) {
            if (wgnn__op_inplace_input(row, i) == j && out[i] == in[j]) continue; /* in place: the row allows it */
            if (out[i]->buf == in[j]->buf) /* one tensor, or two sharing a buffer */
                return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: output %d is also input %d; use another tensor",
                                 op ? op : "op", i, j);
        }
        for (int j = 0; j < i; j++)
            if (out[i] == out[j])
                return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: outputs %d and %d are one tensor", op ? op : "op",
                                 j, i);
        tensor_desc(out[i], &dout[i]);
    }
    wgnn__node n;
    s = prepare(op, din, n_in, args, n_args, &n, ctx->err, sizeof ctx->err);
    if (s == WGNN_OK) s = check_outputs(&n, dout, n_out);
    if (s != WGNN_OK) return s;
    wgnn__plan p = {0};
    p.label = n.op->info.name;
    s = wgnn__op_plan(ctx, &n, in, out, &p);
    if (s == WGNN_OK) s = wgnn__plan_encode(ctx, &p);
    wgnn__plan_free(&p);
    return s;
}

wgnn_status wgnn_op(wgnn_context *ctx, const char *op, const wgnn_tensor *const *in, int n_in,
                    const char *const *args, int n_args, wgnn_tensor *const *out, int n_out) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(ctx, wgnn__op_run(ctx, op, in, n_in, args, n_args, out, n_out));
}

wgnn_status wgnn_op_ref(const char *op, const wgnn_host_tensor *in, int n_in, const char *const *args, int n_args,
                        wgnn_host_tensor *out, int n_out, char *err, size_t err_len) {
    if ((n_in > 0 && !in) || n_in < 0 || n_in > WGNN__MAX_IN || n_out < 0 || n_out > WGNN__MAX_OUT ||
        (n_out > 0 && !out)) {
        if (err && err_len) snprintf(err, err_len, "%s: in/out arrays and counts are inconsistent", op ? op : "op");
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    wgnn_desc din[WGNN__MAX_IN], dout[WGNN__MAX_OUT];
    const void *pin[WGNN__MAX_IN];
    void *pout[WGNN__MAX_OUT];
    for (int i = 0; i < n_in; i++) {
        din[i] = in[i].desc;
        pin[i] = in[i].data;
    }
    for (int i = 0; i < n_out; i++) {
        dout[i] = out[i].desc;
        pout[i] = out[i].data;
    }
    wgnn__node n;
    wgnn_status s = prepare(op, din, n_in, args, n_args, &n, err, err_len);
    if (s == WGNN_OK) s = check_outputs(&n, dout, n_out);
    if (s != WGNN_OK) return s;
    for (int i = 0; i < n_in; i++)
        if (!pin[i]) return wgnn__node_err(&n, WGNN_ERR_INVALID_ARGUMENT, "input %d has no data", i);
    for (int i = 0; i < n_out; i++)
        if (!pout[i]) return wgnn__node_err(&n, WGNN_ERR_INVALID_ARGUMENT, "output %d has no data", i);
    /* as wgnn_op: an output's bytes may not overlap an input's or another
     * output's, except an in-place row's output over its own input */
    for (int i = 0; i < n_out; i++) {
        uintptr_t o0 = (uintptr_t)pout[i], o1 = o0 + wgnn__desc_numel(&dout[i]) * wgnn_dtype_size(dout[i].dtype);
        for (int j = 0; j < n_in + i; j++) {
            bool is_in = j < n_in;
            const wgnn_desc *d = is_in ? &din[j] : &dout[j - n_in];
            uintptr_t a0 = (uintptr_t)(is_in ? pin[j] : pout[j - n_in]), a1 = a0 + wgnn__desc_numel(d) * wgnn_dtype_size(d->dtype);
            if (is_in && wgnn__op_inplace_input(n.op, i) == j && a0 == o0) continue; /* in place: the row allows it */
            if (o0 < a1 && a0 < o1)
                return wgnn__node_err(&n, WGNN_ERR_INVALID_ARGUMENT, "output %d's data overlaps %s %d's; use another "
                                      "buffer", i, is_in ? "input" : "output", is_in ? j : j - n_in);
        }
    }
    /* as wgnn__op_plan: an in-place output that is another buffer gets its
     * input's data first, and the reference runs in place on it */
    for (int j = 0; j < n_out; j++) {
        int i = wgnn__op_inplace_input(n.op, j);
        if (i < 0 || i >= n_in || pout[j] == pin[i]) continue;
        memmove(pout[j], pin[i], (size_t)wgnn__desc_numel(&n.in[i]) * wgnn_dtype_size(n.in[i].dtype));
        pin[i] = pout[j];
    }
    return n.op->ref(&n, pin, pout);
}
