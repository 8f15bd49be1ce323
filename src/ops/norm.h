/* norm.h - the norm family's shared pieces (src/ops/norm.c, src/ops/rope.c):
 * the row-softmax other ops reuse and the binding-chunk helper.
 *
 * shaders/reduce_rows.wgsl is one kernel with variants for row reductions
 * followed by a write of the row: softmax (over any dim) and layer_norm.
 * wgnn__softmax_rows is its entry for other families: SDPA's three-pass
 * softmax over rows of scores is one call. */
#ifndef WGNN_NORM_H
#define WGNN_NORM_H

#include "op.h"

/* Appends the dispatches of a softmax over n_rows contiguous rows of n_cols
 * floats, src -> dst (element (r, c) at r * n_cols + c of both, from each
 * binding's offset). src and dst name a tensor's buffer (buf) or a plan
 * scratch buffer (scratch = index + 1, as in wgnn__binding); their size is
 * ignored. Split into several dispatches (offset bindings) where the rows
 * pass one storage binding. empty: the value a row that is -inf everywhere
 * gives: NaN for PyTorch's softmax, 0 for attention (a fully masked row). */
wgnn_status wgnn__softmax_rows(wgnn_context *ctx, wgnn__plan *p, uint64_t n_rows, uint64_t n_cols, float empty,
                               wgnn__binding src, wgnn__binding dst);

/* How many units (rows, or blocks of rows) one dispatch may take so that
 * each tensor's slice fits one storage binding (and 2^32 - 4 bytes, keeping
 * shader indices in u32) and starts at a multiple of
 * minStorageBufferOffsetAlignment. unit_bytes[i]: bytes one unit of tensor
 * i takes (0: not sliced). total when everything fits; 0 when one unit
 * alone does not. */
uint64_t wgnn__units_per_binding(const wgnn_context *ctx, const uint64_t *unit_bytes, int n, uint64_t total);

/* WGNN_ERR_LIMIT with a message for per == 0 above: the tensor cannot be
 * split over storage bindings in units of unit_bytes. */
wgnn_status wgnn__split_err(wgnn_context *ctx, const char *what, const char *unit_name, uint64_t unit_bytes);

#endif /* WGNN_NORM_H */
