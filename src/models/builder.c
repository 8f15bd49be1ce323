/* builder.c - the graph builders' shared helpers (see builder.h). */
#include "models/builder.h"

wgnn_value wgnn__gb_op_n(wgnn__gb *b, const char *label, const char *op, int n_in, const wgnn_value *in, int n_args,
                         const char *const *args, wgnn_value *outs, int n_outs) {
    if (b->s != WGNN_OK) return -1;
    for (int i = 0; i < n_in; i++)
        if (in[i] < 0) return -1;
    int n = 0;
    wgnn_value tmp[4];
    wgnn_value *o = outs ? outs : tmp;
    b->s = wgnn_graph_op(b->g, op, in, n_in, args, n_args, o, outs ? n_outs : 4, &n);
    if (b->s != WGNN_OK) return -1;
    if (label) b->s = wgnn_graph_set_label(b->g, o[0], label);
    return b->s == WGNN_OK ? o[0] : -1;
}

wgnn_value wgnn__gb_op(wgnn__gb *b, const char *label, const char *op, int n_in, const wgnn_value *in, int n_args,
                       const char *const *args) {
    return wgnn__gb_op_n(b, label, op, n_in, in, n_args, args, NULL, 0);
}

void wgnn__gb_op_into(wgnn__gb *b, const char *op, int n_in, const wgnn_value *in, int n_args,
                      const char *const *args, wgnn_value dst) {
    if (b->s != WGNN_OK || dst < 0) return;
    for (int i = 0; i < n_in; i++)
        if (in[i] < 0) return;
    b->s = wgnn_graph_op_into(b->g, op, in, n_in, args, n_args, dst);
}

void wgnn__gb_op_into_n(wgnn__gb *b, const char *label, const char *op, int n_in, const wgnn_value *in, int n_args,
                        const char *const *args, const wgnn_value *dst, int n_dst, wgnn_value *outs, int n_outs) {
    if (b->s != WGNN_OK) return;
    for (int i = 0; i < n_in; i++)
        if (in[i] < 0) return;
    int n = 0;
    b->s = wgnn_graph_op_into_n(b->g, op, in, n_in, args, n_args, dst, n_dst, outs, n_outs, &n);
    if (b->s == WGNN_OK && label) b->s = wgnn_graph_set_label(b->g, outs[0], label);
}

wgnn_value wgnn__gb_view(wgnn__gb *b, wgnn_value v, int rank, const int64_t *dims) {
    if (b->s != WGNN_OK || v < 0) return -1;
    wgnn_value out = -1;
    b->s = wgnn_graph_view(b->g, v, rank, dims, &out);
    return b->s == WGNN_OK ? out : -1;
}

wgnn_value wgnn__gb_tensor(wgnn__gb *b, wgnn_tensor *t, const char *what) {
    if (b->s != WGNN_OK) return -1;
    if (!t) {
        b->s = wgnn__err(b->ctx, WGNN_ERR_INVALID_ARGUMENT, "model: internal: weight %s was not loaded", what);
        return -1;
    }
    wgnn_value v = -1;
    b->s = wgnn_graph_constant(b->g, t, 0, &v);
    return b->s == WGNN_OK ? v : -1;
}

wgnn_value wgnn__gb_const(wgnn__gb *b, const float *data, int rank, const int64_t *dims) {
    if (b->s != WGNN_OK) return -1;
    wgnn_tensor *t = NULL;
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) n *= (uint64_t)dims[i];
    b->s = wgnn_tensor_create(b->ctx, WGNN_F32, rank, dims, &t);
    if (b->s == WGNN_OK) b->s = wgnn_tensor_upload(b->ctx, t, data, n * sizeof(float));
    wgnn_value v = -1;
    if (b->s == WGNN_OK) b->s = wgnn_graph_constant(b->g, t, 1, &v);
    if (b->s != WGNN_OK) {
        wgnn_tensor_destroy(t);
        return -1;
    }
    return v;
}

wgnn_value wgnn__gb_input(wgnn__gb *b, const char *name, wgnn_dtype dtype, int rank, const int64_t *dims) {
    if (b->s != WGNN_OK) return -1;
    wgnn_value v = -1;
    b->s = wgnn_graph_input(b->g, name, dtype, rank, dims, &v);
    return b->s == WGNN_OK ? v : -1;
}

void wgnn__gb_output(wgnn__gb *b, wgnn_value v) {
    if (b->s != WGNN_OK || v < 0) return;
    b->s = wgnn_graph_output(b->g, v);
}
