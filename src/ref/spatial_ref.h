/* spatial_ref.h - CPU references of the spatial family (src/ops/conv.c,
 * src/ops/pool.c): conv2d, max_pool2d, upsample_nearest2d,
 * upsample_bilinear2d; PyTorch semantics, double accumulation. Each is its
 * op row's ref; they rely on the row's check having validated the node. */
#ifndef WGNN_SPATIAL_REF_H
#define WGNN_SPATIAL_REF_H

#include "ops/op.h"

/* Argument indices (the order of each row's args). */
enum { WGNN__CONV_STRIDE = 0, WGNN__CONV_PADDING = 1, WGNN__CONV_DILATION = 2, WGNN__CONV_GROUPS = 3 };
enum { WGNN__POOL_KERNEL = 0, WGNN__POOL_STRIDE = 1, WGNN__POOL_PADDING = 2, WGNN__POOL_DILATION = 3,
       WGNN__POOL_CEIL = 4 };
enum { WGNN__UP_SIZE = 0, WGNN__UP_ALIGN = 1 };

/* aten's source-index scale of one upsampled dim (float, as aten computes
 * it): nearest and bilinear without align_corners in / out; bilinear with
 * align_corners (in - 1) / (out - 1), 0 when out == 1. */
float wgnn__upsample_scale(int64_t in, int64_t out, bool align_corners);

wgnn_status wgnn__ref_conv2d(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_max_pool2d(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_upsample_nearest2d(wgnn__node *n, const void *const *in, void *const *out);
wgnn_status wgnn__ref_upsample_bilinear2d(wgnn__node *n, const void *const *in, void *const *out);

#endif /* WGNN_SPATIAL_REF_H */
