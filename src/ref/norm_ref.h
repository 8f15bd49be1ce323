/* norm_ref.h - CPU references of the norm family (softmax, layer_norm,
 * rms_norm, batch_norm, apply_rotary_emb_hf): double accumulation, PyTorch semantics.
 * Each is its op row's ref (src/ops/norm.c, src/ops/rope.c); they rely on
 * the row's check having validated the node. */
#ifndef WGNN_NORM_REF_H
#define WGNN_NORM_REF_H

#include "ops/op.h"

/* Argument indices (the order of each row's args). */
enum { WGNN__SOFTMAX_DIM = 0 };
enum { WGNN__LN_SHAPE = 0, WGNN__LN_EPS = 1 }; /* rms_norm's too */
enum { WGNN__BN_EPS = 0, WGNN__BN_TRAINING = 1 };

/* softmax's (outer, n, inner) view of self over dim: values of one row are
 * n apart by inner. A 0-d self is one row of one value. */
void wgnn__softmax_layout(const wgnn__node *n, uint64_t *outer, uint64_t *len, uint64_t *inner);

wgnn_status wgnn__ref_softmax(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_layer_norm(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_rms_norm(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_batch_norm(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_rope_hf(wgnn__node *n, const void *const *in, void *const *out);

#endif /* WGNN_NORM_REF_H */
