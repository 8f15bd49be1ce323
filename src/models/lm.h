/* lm.h - decoder language models from Hugging Face folders (internal).
 *
 * lm.c:    the public wgnn_lm_* API: the KV cache, the graph cache (one
 *          graph per token count and output kind), generation.
 * qwen3.c: Qwen3 / Qwen2 / Llama: config.json, weights, and the graph of
 *          one run of n tokens. */
#ifndef WGNN_MODELS_LM_H
#define WGNN_MODELS_LM_H

#include "internal.h"
#include "io/json.h"
#include "io/safetensors.h"

/* A matrix [n, k] of a linear layer as stored on the GPU: float32 or
 * float16 w (the "linear" op), or int8 rows w with a float32 scale per row
 * (the "linear_q8" op). */
typedef struct wgnn__lm_mat {
    wgnn_tensor *w, *scale;
    wgnn_tensor *bias; /* float32 [n] or NULL */
} wgnn__lm_mat;

typedef struct wgnn__lm_layer {
    wgnn_tensor *in_norm, *post_norm, *q_norm, *k_norm; /* float32; q/k norms only with has_qk_norm */
    wgnn__lm_mat qkv;     /* q_proj, k_proj, v_proj stacked: [(H + 2 H_kv) hd, hidden] */
    wgnn__lm_mat o, down;
    wgnn__lm_mat gate_up; /* gate_proj, up_proj stacked: [2 intermediate, hidden] */
    wgnn_tensor *kc, *vc; /* the cache: [1, H_kv, max_context, head_dim] float32 */
} wgnn__lm_layer;

/* What a run's graph returns. */
typedef enum wgnn__lm_kind {
    WGNN__LM_LOGITS = 0, /* logits of every position [n, vocab] */
    WGNN__LM_ARGMAX = 1, /* the last position's argmax [1] int32 */
    WGNN__LM_SAMPLE = 2  /* the last position's sample [1] int32 (input u) */
} wgnn__lm_kind;

typedef struct wgnn__lm_graph {
    wgnn_graph *g;
    int n;
    wgnn__lm_kind kind;
    float temperature, top_p;
    int top_k;
    uint64_t used; /* LRU stamp */
    wgnn_value ids, lens, u, out;
} wgnn__lm_graph;

#define WGNN__LM_GRAPHS 4

/* Decode steps in flight in wgnn_lm_generate (WGNN_DECODE_DEPTH overrides,
 * 1 .. WGNN__SLOTS; src/models/lm.c) */
#define WGNN__LM_DEPTH 2

struct wgnn_lm {
    wgnn_context *ctx;
    bool generating; /* inside wgnn_lm_generate (its on_token may not call back into the lm) */
    wgnn_lm_info info;
    wgnn_lm_weights weights;
    char dir[1024];
    wgnn__lm_layer *layers;
    wgnn_tensor *embed;   /* [vocab, hidden], float32 or float16 (f16 and q8 weights) */
    wgnn__lm_mat lm_head; /* the embedding itself when tied (w == embed) */
    wgnn_tensor *norm;
    wgnn_tensor *cos, *sin; /* rotary tables [max_context, head_dim] */
    wgnn__lm_graph graphs[WGNN__LM_GRAPHS];
    uint64_t stamp;
    wgnn_graph *last_prefill, *last_decode;
};

/* qwen3.c */
wgnn_status wgnn__qwen3_config(wgnn_lm *lm, const wgnn__json *cfg, const wgnn__json *gen);
wgnn_status wgnn__qwen3_load(wgnn_lm *lm, const wgnn__st *st);
/* Builds the graph of one run of n tokens into gr (gr->n, kind and the
 * sampling fields set by the caller). */
wgnn_status wgnn__qwen3_build(wgnn_lm *lm, wgnn__lm_graph *gr);

#endif /* WGNN_MODELS_LM_H */
