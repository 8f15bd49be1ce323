/* model.h - vision encoders from Hugging Face folders (internal).
 *
 * model.c: the public wgnn_model_* API, config.json, the weight table
 * (tensors uploaded once, by name), the per-shape graph cache.
 * vit.c:   ViT and SigLIP vision: which weights they need, and the graph
 *          they build for one input shape. */
#ifndef WGNN_MODELS_MODEL_H
#define WGNN_MODELS_MODEL_H

#include "internal.h"
#include "io/json.h"
#include "io/safetensors.h"

typedef enum wgnn__arch { WGNN__ARCH_VIT, WGNN__ARCH_SIGLIP } wgnn__arch;

typedef struct wgnn__weight {
    char *name;     /* the checkpoint's name without prefix, or a derived one ("...qkv.weight") */
    wgnn_tensor *t;
} wgnn__weight;

struct wgnn_model {
    wgnn_context *ctx;
    wgnn_model_info info;
    wgnn__arch arch;
    wgnn_model_weights weights;
    char prefix[32];          /* "", "vit." or "vision_model." */
    const char *gelu;         /* the gelu op's approximate= value: "none" or "tanh" */
    char dir[1024];

    wgnn__weight *w;
    int n_w, cap_w;

    /* host data that graphs of a given shape derive constants from */
    float *pos;               /* patch position embeddings [pos_grid^2, hidden] */
    int pos_grid;
    float *cls;               /* ViT: cls_token + position 0 - the patch bias [hidden] (vit.c) */
    float *probe_q;           /* SigLIP head: probe @ Wq^T + bq [hidden] */

    /* the graph of the last input shape */
    wgnn_graph *g;
    int64_t g_batch, g_height, g_width;
    wgnn_value v_in, v_last, v_pool;
    int inflight;             /* wgnn_model_encode_submit runs not fetched yet (0..2) */
    int slot_oldest;          /* the read-back slot of the oldest of them */
};

/* The uploaded weight called name, or NULL. */
wgnn_tensor *wgnn__model_weight(const wgnn_model *m, const char *name);
/* Uploads data (float32 of the given shape; as float16 when half) under name. */
wgnn_status wgnn__model_add(wgnn_model *m, const char *name, const float *data, int rank, const int64_t *dims,
                            bool half);
/* A tensor named stem + N + "." with N >= n_layers (e.g. stem
 * "model.layers.", N = 2 for a config of 2 layers) means config.json's
 * num_hidden_layers does not describe the weights: WGNN_ERR_FORMAT naming
 * the first such tensor and the count. */
wgnn_status wgnn__check_layer_count(wgnn_context *ctx, const char *dir, const wgnn__st *st, const char *stem,
                                    int n_layers);
/* Reads the checkpoint's tensor full (its whole name), checks its shape
 * equals dims (rank values) and returns it as float32 (malloc'd) in *out;
 * messages name dir and the tensor. */
wgnn_status wgnn__weight_read(wgnn_context *ctx, const char *dir, const wgnn__st *st, const char *full, int rank,
                              const int64_t *dims, float **out);
/* Reads the checkpoint's tensor prefix+name, checks its shape equals dims
 * (rank values) and returns it as float32 (malloc'd) in *out. */
wgnn_status wgnn__model_read(wgnn_model *m, const wgnn__st *st, const char *name, int rank, const int64_t *dims,
                             float **out);
/* wgnn__model_read + wgnn__model_add under the same name. */
wgnn_status wgnn__model_load_tensor(wgnn_model *m, const wgnn__st *st, const char *name, int rank,
                                    const int64_t *dims, bool half);

/* vit.c */
wgnn_status wgnn__vit_load(wgnn_model *m, const wgnn__st *st);
wgnn_status wgnn__vit_build(wgnn_model *m, int64_t batch, int64_t height, int64_t width);
/* Bicubic resize (PyTorch's, align_corners false, A = -0.75) of a [gh_in,
 * gw_in, c] grid to [gh, gw, c]: position-embedding interpolation. */
void wgnn__bicubic_grid(const float *src, int gh_in, int gw_in, int c, float *dst, int gh, int gw);

#endif /* WGNN_MODELS_MODEL_H */
