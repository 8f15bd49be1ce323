/* builder.h - helpers the architectures' graph builders share (internal;
 * src/models/builder.c): a sticky status, so that a builder reads as a
 * list of ops. After the first failure every call is a no-op returning -1,
 * and b->s keeps the failure (with the context's message). */
#ifndef WGNN_MODELS_BUILDER_H
#define WGNN_MODELS_BUILDER_H

#include "internal.h"

typedef struct wgnn__gb {
    wgnn_context *ctx;
    wgnn_graph *g;
    wgnn_status s;
    void *user; /* the builder's own (its model) */
} wgnn__gb;

/* op on in[0..n_in); its outputs into outs (n_outs) when outs != NULL.
 * Returns the first output; label (may be NULL) names its node. */
wgnn_value wgnn__gb_op_n(wgnn__gb *b, const char *label, const char *op, int n_in, const wgnn_value *in, int n_args,
                         const char *const *args, wgnn_value *outs, int n_outs);
wgnn_value wgnn__gb_op(wgnn__gb *b, const char *label, const char *op, int n_in, const wgnn_value *in, int n_args,
                       const char *const *args);
/* wgnn_graph_op_into */
void wgnn__gb_op_into(wgnn__gb *b, const char *op, int n_in, const wgnn_value *in, int n_args,
                      const char *const *args, wgnn_value dst);
/* wgnn_graph_op_into_n: outputs i < n_dst with dst[i] >= 0 written into dst[i];
 * outs[0..n_outs) get the output values; labelled by the first. */
void wgnn__gb_op_into_n(wgnn__gb *b, const char *label, const char *op, int n_in, const wgnn_value *in, int n_args,
                        const char *const *args, const wgnn_value *dst, int n_dst, wgnn_value *outs, int n_outs);
wgnn_value wgnn__gb_view(wgnn__gb *b, wgnn_value v, int rank, const int64_t *dims);
/* A constant the caller keeps alive (a weight); what names it in the
 * message when t is NULL. */
wgnn_value wgnn__gb_tensor(wgnn__gb *b, wgnn_tensor *t, const char *what);
/* A graph-owned float32 constant from host data. */
wgnn_value wgnn__gb_const(wgnn__gb *b, const float *data, int rank, const int64_t *dims);
wgnn_value wgnn__gb_input(wgnn__gb *b, const char *name, wgnn_dtype dtype, int rank, const int64_t *dims);
void wgnn__gb_output(wgnn__gb *b, wgnn_value v);

#endif /* WGNN_MODELS_BUILDER_H */
