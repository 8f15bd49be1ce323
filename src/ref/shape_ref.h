/* shape_ref.h - CPU references of the shape family (src/ops/shape.c):
 * slice, split_with_sizes, permute, cat, constant_pad_nd, embedding,
 * index_copy, with
 * PyTorch's semantics. Elements move as bits (float32 / int32: 4 bytes,
 * float16: 2), as on the GPU. The rows' check has validated n first. */
#ifndef WGNN_SHAPE_REF_H
#define WGNN_SHAPE_REF_H

#include "ops/op.h"

/* Argument positions, in the order of each row's argument table. */
enum { WGNN__SLICE_DIM, WGNN__SLICE_START, WGNN__SLICE_END, WGNN__SLICE_STEP };
enum { WGNN__SPLIT_SIZES, WGNN__SPLIT_DIM };
enum { WGNN__PERMUTE_DIMS };
enum { WGNN__CAT_DIM };
enum { WGNN__PAD_PAD, WGNN__PAD_VALUE };
enum { WGNN__INDEX_COPY_DIM };

/* aten::slice's bounds on a dim of size elements: start (unset: 0) and end
 * (unset: size), each counted from the end when negative, clamped into
 * [0, size], end no less than start. *first is the first index taken and
 * *len how many, step apart (0 when the slice is empty). */
void wgnn__slice_bounds(int64_t size, const wgnn__arg *start, const wgnn__arg *end, int64_t step, int64_t *first,
                        int64_t *len);

/* The bits constant_pad_nd writes for value into a tensor of dtype dt
 * (float16: the low 16 bits; int32: value truncated toward zero). False, with
 * *why set, where PyTorch's fill_ refuses the value (it overflows the dtype,
 * or is not finite for int32). */
bool wgnn__pad_fill_bits(wgnn_dtype dt, double value, uint32_t *bits, const char **why);

wgnn_status wgnn__ref_slice(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_split_with_sizes(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_permute(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_cat(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_constant_pad_nd(wgnn__node *n, const void *const *in, void *const *out);
/* WGNN_ERR_INVALID_ARGUMENT "indices[i] = v is out of range for weight with
 * V rows" for the first such index, as PyTorch raises; the GPU kernel writes
 * zeros there instead (it cannot fail synchronously). */
wgnn_status wgnn__ref_embedding(wgnn__node *n, const void *const *in, void *const *out);
/* self copied, then source's rows written at index along dim (later
 * indices win on repeats); an index outside [0, N) is an error. */
wgnn_status wgnn__ref_index_copy(wgnn__node *n, const void *const *in, void *const *out);

#endif /* WGNN_SHAPE_REF_H */
