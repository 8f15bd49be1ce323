/* sdpa.h - what the attention rows share (internal): src/ops/sdpa_fused.c
 * (the fused plan and its split-KV reduce), src/ops/sdpa.c (rows "sdpa" and
 * "sdpa_qkvpacked": validation, routing, the three-pass plan) and
 * src/ops/sdpa_kvcache.c (row "sdpa_kvcache": attention over a KV cache,
 * the fused plan or shaders/sdpa_decode.wgsl). */
#ifndef WGNN_SDPA_H
#define WGNN_SDPA_H

#include "op.h"

typedef struct sdpa_shape {
    uint64_t bh;      /* product of batch dims and H (q's heads) */
    uint64_t group;   /* H / H_kv (grouped-query attention), 1 for plain attention */
    int causal;       /* wgnn_sdpa_causal */
    uint64_t s_q, s_kv, d;
    double scale;
    bool mask;
    bool f16; /* q, k, v and out are float16 (fused only) */
    bool kvlen; /* sdpa_kvcache: keys per batch element from cache_seqlens (in[3]); causal is bottom-right
                   against that length */
    uint64_t n_h; /* q heads per batch element (bh = batch * n_h) */
    bool packed;  /* row sdpa_qkvpacked: in[0] is qkv [B, S, 3, H, D] (k, v unused), out [B, S, H, D]; fused only,
                     no mask, no GQA, one binding */
    bool qbias;   /* packed only: in[3] is the q|k|v projection's bias [3 * H * D] float32 */
} sdpa_shape;

/* log2(e): the kernels score in log2 units (exp2 for exp), so their
 * Params carry scale * WGNN__SDPA_LOG2E */
#define WGNN__SDPA_LOG2E 1.4426950408889634

/* Four elements of q, k, v (IN4, ld4) and of out (OUT4, st4) for a
 * kernel's prelude: float32 as vec4<f32>, float16 as vec2<u32> words of
 * two halves (unpack2x16float / pack2x16float: no shader-f16 needed). */
extern const char wgnn__sdpa_in4_f32[], wgnn__sdpa_in4_f16[], wgnn__sdpa_out4_f32[], wgnn__sdpa_out4_f16[];

/* src/ops/sdpa_fused.c: the query rows a fused workgroup takes for sh (0:
 * no tile fits the device), and whether the whole fused plan fits its
 * limits (the error names the limit otherwise). */
uint64_t wgnn__sdpa_fused_rows(const wgnn_context *ctx, const sdpa_shape *sh);
wgnn_status wgnn__sdpa_fused_fits(wgnn_context *ctx, const sdpa_shape *sh);

/* The fused kernel's whole plan for sh (sdpa_fused, split-KV, chunks of
 * heads past one binding). in[3] is the mask, or with sh->kvlen the cache
 * lengths. q_at: where q is (a buffer or a plan scratch) instead of in[0]
 * (then unused), or NULL. */
wgnn_status wgnn__sdpa_plan_fused(wgnn_context *ctx, const sdpa_shape *sh, const wgnn_tensor *const *in,
                                  const wgnn__binding *q_at, wgnn_tensor *out, wgnn__plan *p);

/* The decode kernel's splits for the reduce: with L = lens[row / rows_b]
 * clamped to [0, s_kv], only splits below ceil(L / blk) wrote partials. */
typedef struct wgnn__sdpa_kv_splits {
    WGPUBuffer lens;
    uint32_t blk, rows_b, s_kv;
} wgnn__sdpa_kv_splits;

/* sdpa_fused_reduce over split-KV partials (part_o [split][rows][d4] at
 * the start of plan scratch part_o, part_ml [split][rows] (max, sum) pairs
 * at byte ml_off of scratch part_ml, which may be the same scratch) into
 * out's bytes [off, off + bytes) (bytes 0: the rest of the buffer); kv:
 * NULL, or which splits hold keys. */
wgnn_status wgnn__sdpa_split_reduce(wgnn_context *ctx, wgnn__plan *p, bool f16, uint64_t rows, uint32_t d4,
                                    uint32_t n_split, int part_o, int part_ml, uint64_t ml_off, WGPUBuffer out,
                                    uint64_t off, uint64_t bytes, const wgnn__sdpa_kv_splits *kv);

#endif /* WGNN_SDPA_H */
