/* conv.h - the spatial family's shared pieces (src/ops/conv.c,
 * src/ops/pool.c, src/ref/spatial_ref.c): the window geometry of conv2d and
 * max_pool2d as their checks resolve it, binding windows over planes, and
 * the im2col building block for conv2d's GEMM route.
 *
 * Layout: NCHW, float32, contiguous. A rank-3 input [C, H, W] is one sample
 * (n = 1) and gives a rank-3 output. */
#ifndef WGNN_CONV_H
#define WGNN_CONV_H

#include "op.h"

/* A 2-D window op's geometry: input [n, c, h, w], output [n, o, ho, wo];
 * kernel kh x kw, stride, padding (both sides), dilation; conv2d's groups
 * (1 for pooling, where o = c). Every value fits an int32. */
typedef struct wgnn__conv2d_geom {
    int64_t n, c, h, w;
    int64_t o, ho, wo;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t groups;
    bool ceil_mode;
} wgnn__conv2d_geom;

/* The geometry of a checked conv2d or max_pool2d node (its check has
 * validated the node; false for other ops). */
bool wgnn__conv2d_geom_of(const wgnn__node *n, wgnn__conv2d_geom *g);

/* ---- checks shared by the family's rows ----------------------------------- */

/* Input i is float32 (else the message names it and the op). */
wgnn_status wgnn__spatial_need_f32(wgnn__node *n, int i, const char *name);
/* Reads int[] argument idx as an (h, w) pair: one value means both; an
 * empty or unset one takes def (when def is NULL it is an error). Each value
 * must be >= min and < 2^31; the message names the argument. */
wgnn_status wgnn__pair_arg(wgnn__node *n, int idx, int64_t min, const int64_t *def, int64_t out[2]);
/* Input 0 is [N, C, H, W] (or [C, H, W] when rank3_ok) with every dim
 * < 2^31. */
wgnn_status wgnn__spatial_input(wgnn__node *n, const char *name, bool rank3_ok);

/* ---- binding windows --------------------------------------------------------- */

/* Binds elements [first, first + count) of a tensor (or plan scratch, as
 * wgnn__binding says) as a window whose offset is rounded down to
 * minStorageBufferOffsetAlignment; returns the element index of `first`
 * inside the window (what the shader adds). */
uint32_t wgnn__bind_window(const wgnn_context *ctx, wgnn__dispatch *d, const wgnn__binding *b, uint64_t first,
                           uint64_t count);

/* How many units of unit_elems[i] float32 elements each (one per tensor i;
 * 0: bound whole, not split) one dispatch may take so that every window of
 * wgnn__bind_window fits maxStorageBufferBindingSize (and 2^32 - 4 bytes);
 * at most total; 0 when one unit does not fit. */
uint64_t wgnn__units_per_window(const wgnn_context *ctx, const uint64_t *unit_elems, int n, uint64_t total);

/* ---- im2col ------------------------------------------------------------------
 * Columns of samples [n0, n0 + count) of input for the geometry g (groups
 * any: group k's rows are the contiguous block k * (c/groups) * kh * kw on):
 *
 *   cols[s][(ci * kh + ky) * kw + kx][oy * wo + ox]
 *       = input[n0 + s][ci][oy*sh - ph + ky*dh][ox*sw - pw + kx*dw]   (0 outside)
 *
 * i.e. per sample a row-major [c*kh*kw, ho*wo] matrix, the B operand of
 * out[s] = weight[o, c*kh*kw] x cols[s] (one GEMM per sample and group;
 * wgnn__gemm with b.bs = c*kh*kw*ho*wo, ldb = ho*wo). dst names a plan
 * scratch buffer (scratch = index + 1, see wgnn__binding) or a buffer, from
 * its offset (bytes, a multiple of 4); count * c*kh*kw*ho*wo floats are
 * written there. The input samples are bound as one window, so are the
 * columns: the caller picks count so that both fit one storage binding
 * (WGNN_ERR_LIMIT otherwise; wgnn__im2col_max_samples gives the most). */
wgnn_status wgnn__im2col_plan(wgnn_context *ctx, wgnn__plan *p, const wgnn_tensor *input, const wgnn__conv2d_geom *g,
                              uint64_t n0, uint64_t count, wgnn__binding dst);
/* The most samples one wgnn__im2col_plan call takes (0: not even one). */
uint64_t wgnn__im2col_max_samples(const wgnn_context *ctx, const wgnn__conv2d_geom *g);

#endif /* WGNN_CONV_H */
