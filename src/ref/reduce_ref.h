/* reduce_ref.h - CPU references of the reduce family (argmax, sample):
 * PyTorch's semantics for argmax, wgnn's stated rule for sample (in
 * double). Each is its op row's ref (src/ops/reduce.c); they rely on the
 * row's check having validated the node. */
#ifndef WGNN_REDUCE_REF_H
#define WGNN_REDUCE_REF_H

#include "ops/op.h"

/* Argument indices (the order of each row's args). */
enum { WGNN__ARGMAX_DIM = 0, WGNN__ARGMAX_KEEPDIM = 1 };
enum { WGNN__SAMPLE_TEMPERATURE = 0, WGNN__SAMPLE_TOP_K = 1, WGNN__SAMPLE_TOP_P = 2 };

/* argmax's (outer, n, inner) view of self over dim: values of one row are
 * inner apart. A 0-d self is one row of one value. */
void wgnn__argmax_layout(const wgnn__node *n, uint64_t *outer, uint64_t *len, uint64_t *inner);

wgnn_status wgnn__ref_argmax(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_sample(wgnn__node *n, const void *const *in, void *const *out);

#endif /* WGNN_REDUCE_REF_H */
