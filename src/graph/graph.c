/* graph.c - build once, run many: values and nodes over the op table,
 * liveness-planned buffers, bind groups and uniform blocks made once, one
 * command buffer and one submit per run (see docs/GRAPH.md).
 *
 * This file: values, nodes, the build and destroy; graph_run.c: inputs,
 * runs, outputs, stats and profiles; graph_impl.h: the types both share.
 *
 * Layering: uses src/ops/ (rows: check and plan) and src/gpu/ (buffers,
 * error scopes, readback); nothing below knows about graphs. */
#include "graph/graph_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dupstr(const char *s) {
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- values ----------------------------------------------------------------- */

/* Appends a value; *out its id. */
static wgnn_status add_value(wgnn_graph *g, vkind kind, const wgnn_desc *d, const char *name, int *out) {
    if (g->n_v == g->cap_v) {
        int nc = g->cap_v ? g->cap_v * 2 : 16;
        gvalue *nv = realloc(g->v, (size_t)nc * sizeof *nv);
        if (!nv) return wgnn__err(g->ctx, WGNN_ERR_OUT_OF_MEMORY, "graph: out of host memory");
        g->v = nv;
        g->cap_v = nc;
    }
    gvalue *v = &g->v[g->n_v];
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->desc = *d;
    v->nbytes = wgnn__desc_numel(d) * wgnn_dtype_size(d->dtype);
    v->node = -1;
    v->base = -1;
    v->last_use = -1;
    v->pool = -1;
    v->name = dupstr(name);
    if (!v->name) return wgnn__err(g->ctx, WGNN_ERR_OUT_OF_MEMORY, "graph: out of host memory");
    *out = g->n_v++;
    return WGNN_OK;
}

static int root_of(const wgnn_graph *g, int v) { return g->v[v].kind == V_VIEW ? g->v[v].base : v; }

/* A tensor struct for a graph-made buffer; the struct holds one reference to buf. */
static wgnn_status make_tensor(wgnn_graph *g, const wgnn_desc *d, WGPUBuffer buf, wgnn_tensor **out) {
    wgnn_tensor *t = calloc(1, sizeof *t);
    if (!t) return wgnn__err(g->ctx, WGNN_ERR_OUT_OF_MEMORY, "graph: out of host memory");
    t->ctx = g->ctx;
    t->owner = g;
    t->buf = buf;
    t->dtype = d->dtype;
    t->rank = d->rank;
    memcpy(t->dims, d->dims, sizeof t->dims);
    t->numel = wgnn__desc_numel(d);
    t->nbytes = t->numel * wgnn_dtype_size(d->dtype);
    t->buf_size = (t->nbytes + 3u) & ~(uint64_t)3u;
    *out = t;
    return WGNN_OK;
}

static wgnn_status new_buffer(wgnn_graph *g, uint64_t bytes, const char *what, WGPUBuffer *out) {
    return wgnn__buffer_create(g->ctx, bytes, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst,
                               what, out);
}

wgnn_status wgnn_graph_create(wgnn_context *ctx, wgnn_graph **out) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    if (!out) return wgnn__leave(ctx, wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_create: out must not be NULL"));
    *out = NULL;
    s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return wgnn__leave(ctx, s);
    wgnn_graph *g = calloc(1, sizeof *g);
    if (!g) return wgnn__leave(ctx, wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_create: out of host memory"));
    g->ctx = ctx;
    *out = g;
    return wgnn__leave(ctx, WGNN_OK);
}

static wgnn_status graph_input(wgnn_graph *g, const char *name, wgnn_dtype dtype, int rank, const int64_t *dims,
                               wgnn_value *out) {
    wgnn_context *ctx = g->ctx;
    wgnn_status s = check_open(g, "graph_input");
    if (s != WGNN_OK) return s;
    if (!out) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_input: out must not be NULL");
    if (wgnn_dtype_size(dtype) == 0)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_input %s: unknown dtype %d", name ? name : "",
                         (int)dtype);
    if (rank < 0 || rank > WGNN_MAX_RANK || (rank > 0 && !dims))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_input %s: rank %d outside 0..%d or dims NULL",
                         name ? name : "", rank, WGNN_MAX_RANK);
    wgnn_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.rank = rank;
    uint64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_input %s: dim %d is %lld; every dim must be >= 1",
                             name ? name : "", i, (long long)dims[i]);
        if (!wgnn__mul_u64(numel, (uint64_t)dims[i], &numel) || numel > (1ull << 50))
            return wgnn__err(ctx, WGNN_ERR_LIMIT, "graph_input %s: more than 2^50 elements", name ? name : "");
        d.dims[i] = dims[i];
    }
    int id;
    s = add_value(g, V_INPUT, &d, name, &id);
    if (s != WGNN_OK) return s;
    gvalue *v = &g->v[id];
    if (v->nbytes > ctx->limits.maxBufferSize) {
        g->n_v--;
        free(v->name);
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "graph_input %s: %llu bytes pass the device's maxBufferSize (%llu)",
                         name ? name : "", (unsigned long long)v->nbytes,
                         (unsigned long long)ctx->limits.maxBufferSize);
    }
    WGPUBuffer b = NULL;
    s = new_buffer(g, v->nbytes, "graph input", &b);
    if (s == WGNN_OK) {
        s = make_tensor(g, &d, b, &v->t);
        if (s != WGNN_OK) wgpuBufferRelease(b);
    }
    if (s != WGNN_OK) {
        free(v->name);
        g->n_v--;
        return s;
    }
    *out = id;
    return WGNN_OK;
}

wgnn_status wgnn_graph_input(wgnn_graph *g, const char *name, wgnn_dtype dtype, int rank, const int64_t *dims,
                             wgnn_value *out) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_input(g, name, dtype, rank, dims, out));
}

static wgnn_status graph_constant(wgnn_graph *g, wgnn_tensor *t, int take, wgnn_value *out) {
    wgnn_status s = check_open(g, "graph_constant");
    if (s != WGNN_OK) return s;
    if (!t || !out) return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_constant: t and out must not be NULL");
    if (t->ctx != g->ctx)
        return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_constant: the tensor belongs to another context than the graph");
    /* a tensor may back several constants (read only: a tied embedding);
     * nodes that write one of them are checked in graph_op */
    if (t->owner == g)
        return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_constant: the tensor is this graph's already (one of its values' tensors, or a "
                         "constant it took): use the value it has");
    for (int i = 0; take && i < g->n_v; i++)
        if (g->v[i].t == t)
            return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT,
                             "graph_constant: the tensor is already value %d of this graph; it cannot also be "
                             "taken (take = 1) by it", i);
    if (take && t->owner)
        return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_constant: the tensor belongs to another graph (wgnn_graph_tensor's, or taken by it), "
                         "which destroys it: pass take = 0 and keep that graph alive as long as this one");
    wgnn_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t->dtype;
    d.rank = t->rank;
    memcpy(d.dims, t->dims, (size_t)t->rank * sizeof t->dims[0]);
    int id;
    s = add_value(g, V_CONST, &d, "constant", &id);
    if (s != WGNN_OK) return s;
    g->v[id].t = t;
    g->v[id].take = take != 0;
    if (take) t->owner = g;
    *out = id;
    return WGNN_OK;
}

wgnn_status wgnn_graph_constant(wgnn_graph *g, wgnn_tensor *t, int take, wgnn_value *out) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_constant(g, t, take, out));
}

static void free_node_strings(gnode *nd) {
    for (int i = 0; i < nd->n_args; i++) free(nd->args[i]);
    free(nd->args);
    free(nd->label);
    nd->args = NULL;
    nd->label = NULL;
}

/* dst[i] < 0 (or i >= n_dst): output i is a new value; else it is written
 * into dst[i] (wgnn_graph_op_into, wgnn_graph_op_into_n). one_out: the op
 * must have one output (wgnn_graph_op_into). */
static wgnn_status graph_op(wgnn_graph *g, const char *op, const wgnn_value *in, int n_in, const char *const *args,
                            int n_args, wgnn_value *out, int out_cap, int *n_out, const wgnn_value *dst, int n_dst,
                            bool one_out) {
    wgnn_context *ctx = g->ctx;
    wgnn_status s = check_open(g, "graph_op");
    if (s != WGNN_OK) return s;
    int idx = g->n_nodes;
    if (!op) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d: op (the op's name) is NULL", idx);
    const char *name = op;
    if (n_in < 0 || n_in > WGNN__MAX_IN || (n_in > 0 && !in))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): in must hold n_in (0..%d) values", idx,
                         name, WGNN__MAX_IN);
    if (n_args < 0 || (n_args > 0 && !args))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): args must hold n_args strings", idx, name);
    for (int i = 0; i < n_args; i++)
        if (!args[i])
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): args[%d] is NULL", idx, name, i);
    if (n_dst < 0 || n_dst > WGNN__MAX_OUT || (n_dst > 0 && !dst))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): dst must hold n_dst (0..%d) values", idx,
                         name, WGNN__MAX_OUT);
    wgnn_desc din[WGNN__MAX_IN];
    for (int i = 0; i < n_in; i++) {
        if (in[i] < 0 || in[i] >= g->n_v)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                             "graph node %d (%s): input %d is value %d, not a value of this graph (0..%d)", idx, name, i,
                             (int)in[i], g->n_v - 1);
        din[i] = g->v[in[i]].desc;
    }
    gnode nd;
    memset(&nd, 0, sizeof nd);
    char err[WGNN__ERR_LEN];
    const wgnn__op *row = NULL;
    s = wgnn__op_prepare(op, din, n_in, args, n_args, &nd.n, &row, err, sizeof err);
    if (s != WGNN_OK) return wgnn__err(ctx, s, "graph node %d: %s", idx, err);
    nd.n.err = NULL;
    nd.n.err_len = 0;
    if (one_out && nd.n.n_out != 1)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph node %d (%s): the op has %d outputs; op_into takes one (wgnn_graph_op_into_n: several)",
                         idx, name, nd.n.n_out);
    if (n_dst > nd.n.n_out)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): %d dst values for the op's %d outputs", idx,
                         name, n_dst, nd.n.n_out);
    for (int j = 0; j < n_dst; j++) {
        wgnn_value dj = dst[j];
        if (dj < 0) continue;
        if (dj >= g->n_v)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): dst is value %d, not a value of this graph (0..%d)",
                             idx, name, (int)dj, g->n_v - 1);
        const gvalue *dv = &g->v[dj];
        if (dv->kind != V_CONST && dv->kind != V_INPUT)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                             "graph node %d (%s): dst (value %d) must be an input or a constant: only those keep "
                             "their data between runs",
                             idx, name, (int)dj);
        /* dst is an input or a constant: it has its tensor now, and two
         * values over one buffer are one dst */
        const wgnn_tensor *dt = dv->t;
        for (int k = 0; k < j; k++)
            if (dst[k] >= 0 && g->v[dst[k]].t->buf == dt->buf)
                return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): outputs %d and %d have one dst",
                                 idx, name, k, j);
        const wgnn_desc *o = &nd.n.out[j];
        bool same = o->dtype == dv->desc.dtype && o->rank == dv->desc.rank;
        for (int i = 0; same && i < o->rank; i++) same = o->dims[i] == dv->desc.dims[i];
        if (!same) {
            char os[160], ds[160];
            wgnn__dims_str(o, os, sizeof os);
            wgnn__dims_str(&dv->desc, ds, sizeof ds);
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): output %d is %s %s but dst is %s %s",
                             idx, name, j, wgnn_dtype_name(o->dtype), os, wgnn_dtype_name(dv->desc.dtype), ds);
        }
        /* an input may read dst only as the row's in-place input of this
         * output; any value over dst's buffer (a view of it, a constant of
         * the same tensor) counts as dst */
        int own = wgnn__op_inplace_input(row, j);
        for (int i = 0; i < n_in; i++) {
            const wgnn_tensor *it = g->v[root_of(g, in[i])].t; /* NULL: an op's output, no buffer yet */
            if (!it || it->buf != dt->buf || (i == own && in[i] == dj)) continue;
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                             "graph node %d (%s): input %d reads dst (value %d), which the node writes%s", idx, name,
                             i, (int)dj,
                             own >= 0 ? " (only the output's in-place input, itself, may be dst)"
                                      : "; this op does not work in place");
        }
    }
    if (n_out) *n_out = nd.n.n_out;
    if (nd.n.n_out > 0 && !out)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): out is NULL; it must hold the op's %d "
                         "output values", idx, name, nd.n.n_out);
    if (nd.n.n_out > out_cap)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph node %d (%s): the op has %d outputs; out_cap is %d",
                         idx, name, nd.n.n_out, out_cap);
    if (g->n_nodes == g->cap_nodes) {
        int nc = g->cap_nodes ? g->cap_nodes * 2 : 16;
        gnode *nn = realloc(g->nodes, (size_t)nc * sizeof *nn);
        if (!nn) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph: out of host memory");
        g->nodes = nn;
        g->cap_nodes = nc;
    }
    nd.args = n_args ? calloc((size_t)n_args, sizeof *nd.args) : NULL;
    nd.label = dupstr("");
    bool ok = nd.label && (n_args == 0 || nd.args);
    nd.n_args = nd.args ? n_args : 0;
    for (int i = 0; ok && i < n_args; i++) ok = (nd.args[i] = dupstr(args[i])) != NULL;
    if (!ok) {
        free_node_strings(&nd);
        return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph: out of host memory");
    }
    for (int i = 0; i < n_in; i++) nd.in[i] = in[i];
    int first = g->n_v;
    for (int i = 0; i < nd.n.n_out; i++) {
        if (i < n_dst && dst[i] >= 0) {
            nd.out[i] = dst[i];
            continue;
        }
        int id;
        s = add_value(g, V_OP, &nd.n.out[i], nd.n.op->info.name, &id);
        if (s != WGNN_OK) {
            while (g->n_v > first) free(g->v[--g->n_v].name);
            free_node_strings(&nd);
            return s;
        }
        g->v[id].node = idx;
        nd.out[i] = id;
    }
    g->nodes[g->n_nodes++] = nd;
    for (int i = 0; out && i < nd.n.n_out; i++) out[i] = nd.out[i];
    return WGNN_OK;
}

wgnn_status wgnn_graph_op(wgnn_graph *g, const char *op, const wgnn_value *in, int n_in, const char *const *args,
                          int n_args, wgnn_value *out, int out_cap, int *n_out) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_op(g, op, in, n_in, args, n_args, out, out_cap, n_out, NULL, 0, false));
}

wgnn_status wgnn_graph_op_into(wgnn_graph *g, const char *op, const wgnn_value *in, int n_in, const char *const *args,
                               int n_args, wgnn_value dst) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    wgnn_value dummy;
    if (dst < 0)
        s = wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_op_into: dst is value %d, not a value of this graph",
                      (int)dst);
    if (s == WGNN_OK) s = graph_op(g, op, in, n_in, args, n_args, &dummy, 1, NULL, &dst, 1, true);
    return wgnn__leave(g->ctx, s);
}

wgnn_status wgnn_graph_op_into_n(wgnn_graph *g, const char *op, const wgnn_value *in, int n_in,
                                 const char *const *args, int n_args, const wgnn_value *dst, int n_dst,
                                 wgnn_value *out, int out_cap, int *n_out) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_op(g, op, in, n_in, args, n_args, out, out_cap, n_out, dst, n_dst, false));
}

static wgnn_status graph_view(wgnn_graph *g, wgnn_value v, int rank, const int64_t *dims, wgnn_value *out) {
    wgnn_context *ctx = g->ctx;
    wgnn_status s = check_open(g, "graph_view");
    if (s == WGNN_OK) s = check_value(g, v, "graph_view");
    if (s != WGNN_OK) return s;
    if (!out || rank < 0 || rank > WGNN_MAX_RANK || (rank > 0 && !dims))
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_view: rank %d outside 0..%d, or dims or out NULL", rank,
                         WGNN_MAX_RANK);
    const gvalue *src = &g->v[v];
    uint64_t want = wgnn__desc_numel(&src->desc), known = 1;
    int infer = -1;
    wgnn_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = src->desc.dtype;
    d.rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == -1 && infer < 0) {
            infer = i;
            continue;
        }
        if (dims[i] < 1)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                             "graph_view of value %d: dim %d is %lld; dims must be >= 1 (one may be -1)", (int)v, i,
                             (long long)dims[i]);
        if (!wgnn__mul_u64(known, (uint64_t)dims[i], &known) || known > want) {
            known = want + 1;
            break;
        }
        d.dims[i] = dims[i];
    }
    if (infer >= 0 && known <= want && want % known == 0) {
        d.dims[infer] = (int64_t)(want / known);
        known = want;
    }
    if (known != want) {
        char have[160], got[160] = "[";
        wgnn__dims_str(&src->desc, have, sizeof have);
        size_t n = 1;
        for (int i = 0; i < rank && n < sizeof got; i++)
            n += (size_t)snprintf(got + n, sizeof got - n, "%s%lld", i ? "," : "", (long long)dims[i]);
        if (n < sizeof got) snprintf(got + n, sizeof got - n, "]");
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_view of value %d: shape %s does not hold its %llu elements (it is %s)", (int)v, got,
                         (unsigned long long)want, have);
    }
    int root = root_of(g, v), id;
    s = add_value(g, V_VIEW, &d, "view", &id);
    if (s != WGNN_OK) return s;
    g->v[id].base = root;
    *out = id;
    return WGNN_OK;
}

wgnn_status wgnn_graph_view(wgnn_graph *g, wgnn_value v, int rank, const int64_t *dims, wgnn_value *out) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_view(g, v, rank, dims, out));
}

static wgnn_status graph_set_label(wgnn_graph *g, wgnn_value v, const char *label) {
    /* before the build only: profiles keep pointers to the labels */
    wgnn_status s = check_open(g, "graph_set_label");
    if (s == WGNN_OK) s = check_value(g, v, "graph_set_label");
    if (s != WGNN_OK) return s;
    int r = root_of(g, v);
    if (g->v[r].kind != V_OP)
        return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_set_label: value %d is an input or a constant; no node produces it", (int)v);
    char *l = dupstr(label);
    if (!l) return wgnn__err(g->ctx, WGNN_ERR_OUT_OF_MEMORY, "graph: out of host memory");
    gnode *nd = &g->nodes[g->v[r].node];
    free(nd->label);
    nd->label = l;
    return WGNN_OK;
}

wgnn_status wgnn_graph_set_label(wgnn_graph *g, wgnn_value v, const char *label) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_set_label(g, v, label));
}

wgnn_status wgnn_graph_output(wgnn_graph *g, wgnn_value v) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    s = check_open(g, "graph_output");
    if (s == WGNN_OK) s = check_value(g, v, "graph_output");
    if (s == WGNN_OK) g->v[v].output = true;
    return wgnn__leave(g->ctx, s);
}

wgnn_status wgnn_graph_desc(const wgnn_graph *g, wgnn_value v, wgnn_desc *out) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    s = check_value(g, v, "graph_desc");
    if (s == WGNN_OK && !out) s = wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_desc: out must not be NULL");
    if (s == WGNN_OK) *out = g->v[v].desc;
    return wgnn__leave(g->ctx, s);
}

/* ---- build ------------------------------------------------------------------- */

/* Rewrites ctx->err as "graph node i (op, label): <message>". */
static wgnn_status node_fail(wgnn_graph *g, int i, wgnn_status s) {
    char msg[WGNN__ERR_LEN];
    memcpy(msg, g->ctx->err, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    const gnode *nd = &g->nodes[i];
    if (nd->label && nd->label[0])
        return wgnn__err(g->ctx, s, "graph node %d (%s \"%s\"): %.900s", i, nd->n.op->info.name, nd->label, msg);
    return wgnn__err(g->ctx, s, "graph node %d (%s): %.900s", i, nd->n.op->info.name, msg);
}

/* Liveness over node order, then op outputs onto pooled buffers: a buffer is
 * free for a value written by node i when every reader of its current value
 * is before i. Best fit among the free ones; else the largest free one grows;
 * else a new one. */
static void plan_pool(wgnn_graph *g) {
    for (int i = 0; i < g->n_v; i++) {
        gvalue *v = &g->v[i];
        v->last_use = v->kind == V_OP ? v->node : -1;
    }
    for (int i = 0; i < g->n_v; i++)
        if (g->v[i].output) {
            gvalue *r = &g->v[root_of(g, i)];
            if (r->kind == V_OP) r->own = true;
        }
    for (int n = 0; n < g->n_nodes; n++)
        for (int k = 0; k < g->nodes[n].n.n_in; k++) {
            gvalue *r = &g->v[root_of(g, g->nodes[n].in[k])];
            if (r->last_use < n) r->last_use = n;
        }
    for (int n = 0; n < g->n_nodes; n++)
        for (int k = 0; k < g->nodes[n].n.n_out; k++) {
            gvalue *v = &g->v[g->nodes[n].out[k]];
            if (v->kind != V_OP || v->own) continue; /* op_into: an input's or constant's buffer */
            uint64_t need = (v->nbytes + 3u) & ~(uint64_t)3u;
            int best = -1, largest = -1;
            for (int b = 0; b < g->n_pool; b++) {
                if (g->pool[b].busy_until >= n) continue;
                if (g->pool[b].size >= need && (best < 0 || g->pool[b].size < g->pool[best].size)) best = b;
                if (largest < 0 || g->pool[b].size > g->pool[largest].size) largest = b;
            }
            if (best < 0 && largest >= 0) {
                best = largest;
                g->pool[best].size = need;
            }
            if (best < 0) { /* g->pool has room for every op output (build) */
                best = g->n_pool++;
                g->pool[best].buf = NULL;
                g->pool[best].size = need;
            }
            g->pool[best].busy_until = v->last_use;
            v->pool = best;
        }
}

/* A node's tensors, for clamp_size. */
typedef struct tensor_list {
    const wgnn_tensor *t[WGNN__MAX_IN + WGNN__MAX_OUT];
    int n;
} tensor_list;

/* The size a whole-buffer binding of buf at offset may span (a
 * wgnn__bind_group callback): the tensor's bytes when buf is one of the
 * node's tensors (a pooled buffer may be larger than the value, and kernels
 * take lengths from arrayLength). 0: the rest of the buffer. */
static uint64_t clamp_size(void *user, WGPUBuffer buf, uint64_t offset) {
    const tensor_list *l = user;
    for (int i = 0; i < l->n; i++)
        if (l->t[i] && l->t[i]->buf == buf) return offset < l->t[i]->buf_size ? l->t[i]->buf_size - offset : 0;
    return 0;
}

static wgnn_status build_bind_groups(wgnn_graph *g, wgnn__plan *plans, uint32_t ua) {
    wgnn_context *ctx = g->ctx;
    uint32_t di = 0;
    uint64_t uoff = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        gnode *nd = &g->nodes[i];
        tensor_list tl = {.n = 0};
        for (int k = 0; k < nd->n.n_in; k++) tl.t[tl.n++] = g->v[nd->in[k]].t;
        for (int k = 0; k < nd->n.n_out; k++) tl.t[tl.n++] = g->v[nd->out[k]].t;
        const wgnn__plan *p = &plans[i];
        wgnn_status s = WGNN_OK;
        wgnn__scope_push(ctx); /* one round trip per node, as eager ops do */
        for (uint32_t j = 0; j < p->n; j++, di++) {
            const wgnn__dispatch *d = &p->d[j];
            WGPUBindGroup bg = wgnn__bind_group(ctx, d, g->uni, uoff, g->scratch, p->scratch, clamp_size, &tl);
            uint64_t psize = (d->params_size + 15u) & ~15u; /* the params slots written at build */
            if (d->params_size) uoff += (psize + ua - 1) / ua * ua;
            if (!bg) s = wgnn__err(ctx, WGNN_ERR_GPU, "could not create a bind group for dispatch %u", j);
            g->disp[di].pipe = d->pipe->pipe;
            g->disp[di].bg = bg; /* released by destroy, also after a failure */
            memcpy(g->disp[di].grid, d->grid, sizeof d->grid);
        }
        wgnn_status sp = wgnn__scope_pop(ctx, "creating bind groups");
        if (s == WGNN_OK) s = sp;
        if (s != WGNN_OK) return node_fail(g, i, s);
    }
    return WGNN_OK;
}

static wgnn_status graph_build(wgnn_graph *g) {
    wgnn_context *ctx = g->ctx;
    if (g->failed) return check_open(g, "graph_build");
    if (g->built) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_build: the graph is already built");
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    wgnn__plan *plans = NULL;
    unsigned char *uhost = NULL;
    g->failed = true; /* until the end */

    for (int i = 0; i < g->n_v; i++)
        if (g->v[i].nbytes > ctx->limits.maxBufferSize) {
            s = wgnn__err(ctx, WGNN_ERR_LIMIT, "graph value %d: %llu bytes pass the device's maxBufferSize (%llu)", i,
                          (unsigned long long)g->v[i].nbytes, (unsigned long long)ctx->limits.maxBufferSize);
            if (g->v[i].kind == V_OP) s = node_fail(g, g->v[i].node, s);
            goto cleanup;
        }
    g->pool = calloc((size_t)g->n_v + 1, sizeof *g->pool);
    if (!g->pool) {
        s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_build: out of host memory");
        goto cleanup;
    }
    plan_pool(g);
    for (int b = 0; b < g->n_pool && s == WGNN_OK; b++) s = new_buffer(g, g->pool[b].size, "graph pool", &g->pool[b].buf);
    if (s != WGNN_OK) goto cleanup;

    /* tensor structs: op outputs first (views point at them) */
    for (int i = 0; i < g->n_v; i++) {
        gvalue *v = &g->v[i];
        if (v->kind != V_OP) continue;
        WGPUBuffer b = NULL;
        if (v->own) {
            s = new_buffer(g, v->nbytes, "graph output", &b);
        } else {
            b = g->pool[v->pool].buf;
            wgpuBufferAddRef(b);
        }
        if (s == WGNN_OK) {
            s = make_tensor(g, &v->desc, b, &v->t);
            if (s != WGNN_OK) wgpuBufferRelease(b);
        }
        if (s != WGNN_OK) goto cleanup;
    }
    for (int i = 0; i < g->n_v; i++) {
        gvalue *v = &g->v[i];
        if (v->kind != V_VIEW) continue;
        WGPUBuffer b = g->v[v->base].t->buf;
        wgpuBufferAddRef(b);
        s = make_tensor(g, &v->desc, b, &v->t);
        if (s != WGNN_OK) {
            wgpuBufferRelease(b);
            goto cleanup;
        }
    }

    /* plans: one per node, kept until the bind groups exist */
    plans = calloc((size_t)g->n_nodes + 1, sizeof *plans);
    if (!plans) {
        s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_build: out of host memory");
        goto cleanup;
    }
    uint32_t n_params = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        gnode *nd = &g->nodes[i];
        const wgnn_tensor *tin[WGNN__MAX_IN];
        wgnn_tensor *tout[WGNN__MAX_OUT];
        for (int k = 0; k < nd->n.n_in; k++) tin[k] = g->v[nd->in[k]].t;
        for (int k = 0; k < nd->n.n_out; k++) tout[k] = g->v[nd->out[k]].t;
        plans[i].label = nd->n.op->info.name;
        ctx->err[0] = '\0';
        s = wgnn__op_plan(ctx, &nd->n, tin, tout, &plans[i]);
        if (s != WGNN_OK) {
            s = node_fail(g, i, s);
            goto cleanup;
        }
        for (uint32_t j = 0; j < plans[i].n; j++) {
            const wgnn__dispatch *d = &plans[i].d[j];
            bool bad = !d->pipe;
            for (uint32_t b = 0; b < d->n_b; b++)
                if (!d->b[b].buf && (d->b[b].scratch == 0 || d->b[b].scratch > plans[i].n_scratch)) bad = true;
            if (bad) {
                s = node_fail(g, i, wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                                              "dispatch %u has no pipeline or a binding without a buffer", j));
                goto cleanup;
            }
            if (d->params_size) n_params++;
        }
        for (uint32_t k = 0; k < plans[i].n_scratch; k++) {
            uint64_t sz = plans[i].scratch[k];
            if (sz > ctx->limits.maxBufferSize || sz > ctx->limits.maxStorageBufferBindingSize) {
                s = node_fail(g, i,
                              wgnn__err(ctx, WGNN_ERR_LIMIT,
                                        "a %llu-byte scratch buffer passes the device's maxStorageBufferBindingSize "
                                        "(%llu bytes)",
                                        (unsigned long long)sz,
                                        (unsigned long long)ctx->limits.maxStorageBufferBindingSize));
                goto cleanup;
            }
            sz = sz ? (sz + 3u) & ~(uint64_t)3u : 4u;
            if (sz > g->scratch_size[k]) g->scratch_size[k] = sz;
            if (k + 1 > g->n_scratch) g->n_scratch = k + 1;
        }
        nd->first = g->n_disp;
        nd->count = plans[i].n;
        g->n_disp += plans[i].n;
    }
    /* one scratch set for the graph: nodes run one after another */
    for (uint32_t k = 0; k < g->n_scratch; k++) {
        s = wgnn__buffer_create(ctx, g->scratch_size[k], WGPUBufferUsage_Storage, "graph scratch", &g->scratch[k]);
        if (s != WGNN_OK) goto cleanup;
    }

    /* every params block of the graph in one uniform buffer, written once */
    uint32_t ua = ctx->limits.minUniformBufferOffsetAlignment < 16 ? 16 : ctx->limits.minUniformBufferOffsetAlignment;
    uint64_t slot = (WGNN__PARAMS_MAX + ua - 1) / ua * ua;
    if (n_params) {
        uint64_t used = 0;
        uhost = calloc((size_t)n_params, (size_t)slot);
        if (!uhost) {
            s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_build: out of host memory");
            goto cleanup;
        }
        for (int i = 0; i < g->n_nodes; i++)
            for (uint32_t j = 0; j < plans[i].n; j++) {
                const wgnn__dispatch *d = &plans[i].d[j];
                if (!d->params_size) continue;
                memcpy(uhost + used, d->params, d->params_size);
                uint64_t sz = (d->params_size + 15u) & ~15u;
                used += (sz + ua - 1) / ua * ua;
            }
        g->uni_bytes = used;
        s = wgnn__buffer_create(ctx, used, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst, "graph uniforms",
                                &g->uni);
        if (s != WGNN_OK) goto cleanup;
        wgnn__scope_push(ctx);
        wgpuQueueWriteBuffer(ctx->queue, g->uni, 0, uhost, (size_t)used);
        s = wgnn__scope_pop(ctx, "graph_build: writing the uniform blocks");
        if (s != WGNN_OK) goto cleanup;
    }

    g->disp = calloc((size_t)g->n_disp + 1, sizeof *g->disp);
    if (!g->disp) {
        s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_build: out of host memory");
        goto cleanup;
    }
    s = build_bind_groups(g, plans, ua);
    if (s != WGNN_OK) goto cleanup;

    g->prof = calloc((size_t)g->n_nodes + 1, sizeof *g->prof);
    if (!g->prof) {
        s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_build: out of host memory");
        goto cleanup;
    }
    g->failed = false;
    g->built = true;
cleanup:
    if (plans)
        for (int i = 0; i < g->n_nodes; i++) wgnn__plan_free(&plans[i]);
    free(plans);
    free(uhost);
    return s;
}

wgnn_status wgnn_graph_build(wgnn_graph *g) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_build(g));
}

void wgnn_graph_destroy(wgnn_graph *g) {
    if (!g) return;
    wgnn__graph_drop_pre(g);
    free(g->pre);
    for (uint32_t i = 0; i < g->n_disp && g->disp; i++)
        if (g->disp[i].bg) wgpuBindGroupRelease(g->disp[i].bg);
    free(g->disp);
    for (int i = 0; i < g->n_v; i++) {
        gvalue *v = &g->v[i];
        if (v->kind != V_CONST || v->take) wgnn__tensor_free(v->t);
        free(v->name);
    }
    free(g->v);
    for (int i = 0; i < g->n_nodes; i++) free_node_strings(&g->nodes[i]);
    free(g->nodes);
    for (int b = 0; b < g->n_pool; b++)
        if (g->pool[b].buf) wgpuBufferRelease(g->pool[b].buf);
    free(g->pool);
    for (uint32_t k = 0; k < g->n_scratch; k++)
        if (g->scratch[k]) wgpuBufferRelease(g->scratch[k]);
    if (g->uni) wgpuBufferRelease(g->uni);
    for (uint32_t k = 0; k < g->n_qsets; k++)
        if (g->qsets[k]) wgpuQuerySetRelease(g->qsets[k]);
    free(g->qsets);
    if (g->resolve) wgpuBufferRelease(g->resolve);
    if (g->err_stage) wgpuBufferRelease(g->err_stage);
    for (int k = 0; k < WGNN__SLOTS; k++)
        if (g->stage[k]) wgpuBufferRelease(g->stage[k]);
    free(g->prof);
    free(g);
}
