/* gemm_ref.h - CPU references of the GEMM rows (mm, bmm, matmul, linear,
 * addmm; src/ops/gemm_rows.c): double accumulation, PyTorch semantics. Each is
 * its row's ref and relies on the row's check. */
#ifndef WGNN_GEMM_REF_H
#define WGNN_GEMM_REF_H

#include "ops/op.h"

/* torch.matmul's view of self and other (both contiguous): A(i, k) =
 * self[a_batch + i*lda + k] (1-D self: M = 1), B(k, j) = other[b_batch +
 * k*ldb + j] (1-D other: N = 1, ldb = 1); nb broadcast batch dims of sizes
 * bsize with element strides bsa, bsb (0 where an operand broadcasts) and
 * bsc (the contiguous output's). */
typedef struct wgnn__matmul_layout {
    int64_t m, n, k_a, k_b, lda, ldb;
    int nb;
    int64_t bsize[WGNN_MAX_RANK], bsa[WGNN_MAX_RANK], bsb[WGNN_MAX_RANK], bsc[WGNN_MAX_RANK];
    wgnn_desc out;
} wgnn__matmul_layout;

/* false when a rank is 0, K differs (k_a != k_b) or the batch dims do not
 * broadcast. */
bool wgnn__matmul_layout_of(const wgnn_desc *a, const wgnn_desc *b, wgnn__matmul_layout *l);

wgnn_status wgnn__ref_mm(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_bmm(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_matmul(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_linear(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_addmm(wgnn__node *n, const void *const *in, void *const *out); /* args: beta, alpha */

/* The GEMM family's epilogue activation on n floats in place, in double:
 * 0 none, 1 relu (NaN kept), 2 gelu (erf), 3 gelu tanh, 4 silu. */
void wgnn__ref_act(float *y, uint64_t n, int act);
/* linear's prologue on rows of x (pre 1: RMS without a weight, x [rows, k];
 * 3: RMS times w [k]; 2: swiglu, x [rows, 2k]) into a new [rows, k] array
 * (free it), or NULL when out of memory. */
float *wgnn__ref_prologue(const float *x, uint64_t rows, uint64_t k, int pre, double eps, const float *w);

#endif /* WGNN_GEMM_REF_H */
