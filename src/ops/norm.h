/* norm.h - the norm family's shared pieces (src/ops/norm.c, src/ops/rope.c):
 * the row-softmax other ops reuse, the binding-chunk helper and qkv_rope's
 * kernel (for qkv_sdpa_kvcache).
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

/* Row lanes (reduce_rows.wgsl, gemm_reduce_ln.wgsl; shaders/common/row_reduce):
 * the subgroup size with which `lanes` consecutive threads of a row in
 * workgroups of wg reduce by subgroup shuffles, or 0 (workgroup memory);
 * and the WGSL of fn lanes_reduce for it (the shader then needs "enable
 * subgroups;" first where sg > 0). */
uint32_t wgnn__row_lanes_subgroup(const wgnn_context *ctx, uint32_t lanes, uint32_t wg);
const char *wgnn__lanes_reduce_wgsl(uint32_t sg);

/* y[r] = (x[r] - mean) / sqrt(var + eps) * w + b over rows of n values
 * (layer_norm's pass; w, b [n] or NULL; bindings as wgnn__softmax_rows'). */
wgnn_status wgnn__plan_layer_norm_rows(wgnn_context *ctx, wgnn__plan *p, wgnn__binding x, wgnn__binding y,
                                      uint64_t rows, uint64_t n, float eps, WGPUBuffer w, WGPUBuffer b);

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

/* ---- qkv_rope's kernel (src/ops/rope.c, shaders/qkv_rope.wgsl) ---------- */

/* Where the k and v heads of token t go: heads of their own [B, Hk, n, D]
 * (qkv_rope), cache rows [B, Hk, ctx, D] at positions[t] (qkv_rope_cache),
 * or at cache_seqlens[b] - n + t (qkv_sdpa_kvcache's general path). */
enum { WGNN__QKV_HEADS, WGNN__QKV_CACHE_POSITIONS, WGNN__QKV_CACHE_LENS };

typedef struct wgnn__qkv_rope_io {
    int mode;                      /* WGNN__QKV_* */
    uint64_t b, n, h, hk, d, ctx;  /* batch, tokens, q heads, kv heads, head dim, cache rows (cache modes) */
    float eps;                     /* q_norm / k_norm's epsilon */
    WGPUBuffer x;                  /* the stacked projection [B, n, (H + 2 Hk) * D] */
    WGPUBuffer cos, sin;           /* [n, D] (cache_seqlens mode: tables [P >= ctx, D] read by position), or
                                      NULL: no rotation */
    WGPUBuffer qn, kn;             /* [D], or NULL: no q/k norms */
    WGPUBuffer rows;               /* positions [n] or cache_seqlens [B] (int32), by mode */
    wgnn__binding q;               /* q's heads [B, H, n, D]: a buffer or a plan scratch */
    WGPUBuffer k, v;               /* k's and v's heads, or the caches */
} wgnn__qkv_rope_io;

/* Appends the qkv_rope kernel's dispatch; name goes into errors. A cache
 * row outside [0, ctx) is not written and is reported by the next sync. */
wgnn_status wgnn__qkv_rope_encode(wgnn_context *ctx, wgnn__plan *p, const wgnn__qkv_rope_io *io, const char *name);

/* The reference of one head's row: src [D] RMS-normalized with weight w
 * (NULL: not normalized), then rotated by cos / sin [D] (NULL: not), into
 * dst; tmp holds D doubles. */
void wgnn__qkv_rope_row(const float *src, int64_t D, const float *w, double eps, const float *cos, const float *sin,
                        double *tmp, float *dst);

#endif /* WGNN_NORM_H */
