/* elementwise_ref.h - CPU references of the elementwise family (rows in
 * src/ops/elementwise.c): double precision, PyTorch's semantics, NumPy
 * broadcasting. Each function is the `ref` of the op of its name; an op's
 * one argument, if it has one, is n->arg[0]. */
#ifndef WGNN_ELEMENTWISE_REF_H
#define WGNN_ELEMENTWISE_REF_H

#include "ops/op.h"

wgnn_status wgnn__ref_relu(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_sigmoid(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_tanh(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_silu(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_gelu(wgnn__node *n, const void *const *in, void *const *out);       /* arg 0: approximate */
wgnn_status wgnn__ref_leaky_relu(wgnn__node *n, const void *const *in, void *const *out); /* arg 0: negative_slope */
wgnn_status wgnn__ref_add(wgnn__node *n, const void *const *in, void *const *out);        /* arg 0: alpha */
wgnn_status wgnn__ref_sub(wgnn__node *n, const void *const *in, void *const *out);        /* arg 0: alpha */
wgnn_status wgnn__ref_mul(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_div(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_to_copy(wgnn__node *n, const void *const *in, void *const *out);    /* arg 0: dtype */

/* IEEE binary16 bits of a float, round to nearest even (overflow: inf; NaN:
 * 0x7E00 with f's sign, as PyTorch's c10::Half), and back (exact). */
uint16_t wgnn__ref_f16_bits(float f);
double wgnn__ref_f16_value(uint16_t h);

#endif /* WGNN_ELEMENTWISE_REF_H */
