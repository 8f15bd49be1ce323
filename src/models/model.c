/* model.c - wgnn_model_*: config.json, the weight table, the graph cache.
 * The architectures themselves are in vit.c. */
#include "models/model.h"

#include "io/image.h"
#include "ops/op.h" /* wgnn__dims_str, wgnn__desc_numel */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the weight table ----------------------------------------------------- */

wgnn_tensor *wgnn__model_weight(const wgnn_model *m, const char *name) {
    for (int i = 0; i < m->n_w; i++)
        if (strcmp(m->w[i].name, name) == 0) return m->w[i].t;
    return NULL;
}

wgnn_status wgnn__model_add(wgnn_model *m, const char *name, const float *data, int rank, const int64_t *dims,
                            bool half) {
    if (m->n_w == m->cap_w) {
        int cap = m->cap_w ? 2 * m->cap_w : 64;
        wgnn__weight *w = realloc(m->w, (size_t)cap * sizeof *w);
        if (!w) return wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
        m->w = w;
        m->cap_w = cap;
    }
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) n *= (uint64_t)dims[i];
    wgnn_tensor *t = NULL;
    wgnn_status s = wgnn_tensor_create(m->ctx, half ? WGNN_F16 : WGNN_F32, rank, dims, &t);
    if (s != WGNN_OK) return s;
    if (half) {
        uint16_t *h = malloc(n * sizeof *h);
        if (!h) {
            wgnn_tensor_destroy(t);
            return wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
        }
        wgnn_f32_to_f16(data, h, n);
        s = wgnn_tensor_upload(m->ctx, t, h, n * sizeof *h);
        free(h);
    } else {
        s = wgnn_tensor_upload(m->ctx, t, data, n * sizeof(float));
    }
    char *nm = strdup(name);
    if (s == WGNN_OK && !nm) s = wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    if (s != WGNN_OK) {
        free(nm);
        wgnn_tensor_destroy(t);
        return s;
    }
    m->w[m->n_w].name = nm;
    m->w[m->n_w].t = t;
    m->n_w++;
    m->info.n_params += n;
    m->info.weight_bytes += wgnn_tensor_nbytes(t);
    return WGNN_OK;
}

static void shape_str(int rank, const int64_t *dims, char *buf, size_t cap) {
    wgnn_desc d = {WGNN_F32, rank, {0}};
    for (int i = 0; i < rank; i++) d.dims[i] = dims[i];
    wgnn__dims_str(&d, buf, cap);
}

wgnn_status wgnn__check_layer_count(wgnn_context *ctx, const char *dir, const wgnn__st *st, const char *stem,
                                    int n_layers) {
    size_t sl = strlen(stem);
    for (int i = 0; i < wgnn__st_count(st); i++) {
        const char *name = wgnn__st_at(st, i)->name;
        if (strncmp(name, stem, sl) != 0 || !isdigit((unsigned char)name[sl])) continue;
        char *end = NULL;
        unsigned long long l = strtoull(name + sl, &end, 10);
        if (*end == '.' && l >= (unsigned long long)n_layers)
            return wgnn__err(ctx, WGNN_ERR_FORMAT,
                             "%s: model weights: tensor %s belongs to layer %llu, but config.json's num_hidden_layers "
                             "is %d: the config does not describe these weights",
                             dir, name, l, n_layers);
    }
    return WGNN_OK;
}

wgnn_status wgnn__weight_read(wgnn_context *ctx, const char *dir, const wgnn__st *st, const char *full, int rank,
                              const int64_t *dims, float **out) {
    *out = NULL;
    const wgnn__st_tensor *t = wgnn__st_find(st, full);
    if (!t) return wgnn__err(ctx, WGNN_ERR_FORMAT, "%s: model weights: tensor %s is missing", dir, full);
    bool same = t->rank == rank;
    for (int i = 0; same && i < rank; i++) same = t->dims[i] == dims[i];
    if (!same) {
        char want[160], got[160];
        shape_str(rank, dims, want, sizeof want);
        shape_str(t->rank, t->dims, got, sizeof got);
        return wgnn__err(ctx, WGNN_ERR_FORMAT, "%s: model weights: tensor %s has shape %s, config.json implies %s",
                         dir, full, got, want);
    }
    if (t->dtype != WGNN__ST_F32 && t->dtype != WGNN__ST_F16 && t->dtype != WGNN__ST_BF16)
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED,
                         "%s: model weights: tensor %s is %s; float32, float16 and bfloat16 are supported", dir,
                         full, t->dtype_name);
    float *f = malloc((t->numel ? t->numel : 1) * sizeof *f);
    if (!f) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory for %s", full);
    char err[512];
    wgnn_status s = wgnn__st_to_f32(t, f, err, sizeof err);
    if (s != WGNN_OK) {
        free(f);
        return wgnn__err(ctx, s, "%s", err);
    }
    *out = f;
    return WGNN_OK;
}

wgnn_status wgnn__model_read(wgnn_model *m, const wgnn__st *st, const char *name, int rank, const int64_t *dims,
                             float **out) {
    char full[512];
    snprintf(full, sizeof full, "%s%s", m->prefix, name);
    return wgnn__weight_read(m->ctx, m->dir, st, full, rank, dims, out);
}

wgnn_status wgnn__model_load_tensor(wgnn_model *m, const wgnn__st *st, const char *name, int rank,
                                    const int64_t *dims, bool half) {
    float *f;
    wgnn_status s = wgnn__model_read(m, st, name, rank, dims, &f);
    if (s != WGNN_OK) return s;
    s = wgnn__model_add(m, name, f, rank, dims, half);
    free(f);
    return s;
}

/* ---- config.json ------------------------------------------------------------ */

static wgnn_status cfg_int(wgnn_model *m, const wgnn__json *j, const char *base, const char *key, bool has_def,
                           int64_t def, int64_t lo, int64_t hi, int *out) {
    char path[128], err[512];
    snprintf(path, sizeof path, "%s%s", base, key);
    int64_t v;
    wgnn_status s = wgnn__json_int(j, path, has_def, def, lo, hi, &v, err, sizeof err);
    if (s != WGNN_OK) return wgnn__err(m->ctx, s, "%s", err);
    *out = (int)v;
    return WGNN_OK;
}

static wgnn_status read_config(wgnn_model *m, const wgnn__json *j) {
    char err[512], type[64];
    wgnn_status s = wgnn__json_str(j, "model_type", NULL, type, sizeof type, err, sizeof err);
    if (s != WGNN_OK) return wgnn__err(m->ctx, s, "%s", err);
    const char *base = "";
    if (strcmp(type, "vit") == 0) {
        m->arch = WGNN__ARCH_VIT;
    } else if (strcmp(type, "siglip_vision_model") == 0) {
        m->arch = WGNN__ARCH_SIGLIP;
    } else if (strcmp(type, "siglip") == 0) {
        m->arch = WGNN__ARCH_SIGLIP;
        base = "vision_config.";
        if (!wgnn__json_has(j, "vision_config"))
            return wgnn__err(m->ctx, WGNN_ERR_FORMAT, "%s/config.json: model_type siglip without vision_config",
                             m->dir);
    } else {
        return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED,
                         "%s/config.json: model_type \"%s\" is not an architecture wgnn runs "
                         "(vit, siglip_vision_model, siglip)",
                         m->dir, type);
    }
    bool vit = m->arch == WGNN__ARCH_VIT;
    wgnn_model_info *in = &m->info;
    snprintf(in->model_type, sizeof in->model_type, "%s", vit ? "vit" : "siglip_vision_model");
    if ((s = cfg_int(m, j, base, "hidden_size", false, 0, 4, 65536, &in->hidden_size)) ||
        (s = cfg_int(m, j, base, "num_hidden_layers", false, 0, 0, 4096, &in->num_layers)) ||
        (s = cfg_int(m, j, base, "num_attention_heads", false, 0, 1, 4096, &in->num_heads)) ||
        (s = cfg_int(m, j, base, "intermediate_size", false, 0, 1, 1 << 20, &in->intermediate_size)) ||
        (s = cfg_int(m, j, base, "image_size", false, 0, 1, 1 << 16, &in->image_size)) ||
        (s = cfg_int(m, j, base, "patch_size", false, 0, 1, 1 << 12, &in->patch_size)) ||
        (s = cfg_int(m, j, base, "num_channels", true, 3, 1, 64, &in->num_channels)))
        return s;
    char path[128];
    snprintf(path, sizeof path, "%slayer_norm_eps", base);
    if ((s = wgnn__json_num(j, path, true, vit ? 1e-12 : 1e-6, 0.0, 1.0, &in->layer_norm_eps, err, sizeof err)))
        return wgnn__err(m->ctx, s, "%s", err);
    char act[64];
    snprintf(path, sizeof path, "%shidden_act", base);
    if ((s = wgnn__json_str(j, path, vit ? "gelu" : "gelu_pytorch_tanh", act, sizeof act, err, sizeof err)))
        return wgnn__err(m->ctx, s, "%s", err);
    if (strcmp(act, "gelu") == 0) {
        m->gelu = "none";
        in->hidden_act = "gelu";
    } else if (strcmp(act, "gelu_pytorch_tanh") == 0 || strcmp(act, "gelu_new") == 0) {
        m->gelu = "tanh";
        in->hidden_act = "gelu_tanh";
    } else {
        return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED,
                         "%s/config.json: %s \"%s\" is not supported (gelu, gelu_pytorch_tanh, gelu_new)", m->dir,
                         path, act);
    }
    if (in->hidden_size % in->num_heads)
        return wgnn__err(m->ctx, WGNN_ERR_FORMAT,
                         "%s/config.json: hidden_size %d is not a multiple of num_attention_heads %d", m->dir,
                         in->hidden_size, in->num_heads);
    in->head_dim = in->hidden_size / in->num_heads;
    if (in->head_dim % 4)
        return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED,
                         "%s/config.json: head size %d (hidden_size / num_attention_heads) is not a multiple of 4, "
                         "which wgnn's attention needs",
                         m->dir, in->head_dim);
    if (in->image_size % in->patch_size)
        return wgnn__err(m->ctx, WGNN_ERR_FORMAT, "%s/config.json: image_size %d is not a multiple of patch_size %d",
                         m->dir, in->image_size, in->patch_size);
    if (vit) {
        bool qkv_bias;
        if ((s = wgnn__json_bool(j, "qkv_bias", true, true, &qkv_bias, err, sizeof err)))
            return wgnn__err(m->ctx, s, "%s", err);
        if (!qkv_bias)
            return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED, "%s/config.json: qkv_bias false is not supported",
                             m->dir);
        char pact[32];
        if ((s = wgnn__json_str(j, "pooler_act", "tanh", pact, sizeof pact, err, sizeof err)))
            return wgnn__err(m->ctx, s, "%s", err);
        if (strcmp(pact, "tanh") != 0)
            return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED, "%s/config.json: pooler_act \"%s\" is not supported (tanh)",
                             m->dir, pact);
        int pool_size = 0;
        if ((s = cfg_int(m, j, "", "pooler_output_size", true, in->hidden_size, 1, 65536, &pool_size))) return s;
        if (pool_size != in->hidden_size)
            return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED,
                             "%s/config.json: pooler_output_size %d != hidden_size %d is not supported", m->dir,
                             pool_size, in->hidden_size);
    } else {
        bool head;
        snprintf(path, sizeof path, "%svision_use_head", base);
        if ((s = wgnn__json_bool(j, path, true, true, &head, err, sizeof err))) return wgnn__err(m->ctx, s, "%s", err);
        in->has_pooler = head;
    }
    return WGNN_OK;
}

/* The prefix the checkpoint's names carry, found from a tensor every
 * checkpoint of the architecture has. */
static wgnn_status find_prefix(wgnn_model *m, const wgnn__st *st) {
    const char *probe = m->arch == WGNN__ARCH_VIT ? "embeddings.patch_embeddings.projection.weight"
                                                  : "embeddings.patch_embedding.weight";
    const char *prefixes[] = {"", "vit.", "vision_model."};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s%s", prefixes[i], probe);
        if (wgnn__st_find(st, name)) {
            snprintf(m->prefix, sizeof m->prefix, "%s", prefixes[i]);
            return WGNN_OK;
        }
    }
    return wgnn__err(m->ctx, WGNN_ERR_FORMAT,
                     "%s: model weights: no tensor %s (also looked for it under vit. and vision_model.): "
                     "not a %s checkpoint",
                     m->dir, probe, m->arch == WGNN__ARCH_VIT ? "ViTModel" : "SiglipVisionModel");
}

/* ---- public API --------------------------------------------------------------- */

static wgnn_status model_load_locked(wgnn_context *ctx, const char *dir, const wgnn_model_options *opts, wgnn_model **out) {
    if (!out) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_model_load: out is NULL");
    *out = NULL;
    if (!ctx) return WGNN_ERR_INVALID_ARGUMENT;
    if (!dir) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_model_load: dir is NULL");
    wgnn_model_weights wm = opts ? opts->weights : WGNN_MODEL_WEIGHTS_F32;
    if (wm != WGNN_MODEL_WEIGHTS_F32 && wm != WGNN_MODEL_WEIGHTS_F16)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_model_load: unknown weights option %d", (int)wm);
    if (strlen(dir) > 900) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_model_load: folder path too long");
    wgnn_model *m = calloc(1, sizeof *m);
    if (!m) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "wgnn_model_load: out of host memory");
    m->ctx = ctx;
    m->weights = wm;
    m->v_in = m->v_last = m->v_pool = -1;
    snprintf(m->dir, sizeof m->dir, "%s", dir);

    char path[1100], err[1024];
    wgnn__json cfg = {0};
    wgnn__st *st = NULL;
    snprintf(path, sizeof path, "%s/config.json", dir);
    wgnn_status s = wgnn__json_load(path, 0, &cfg, err, sizeof err);
    if (s != WGNN_OK) s = wgnn__err(ctx, s, "%s", err);
    if (s == WGNN_OK) s = read_config(m, &cfg);
    if (s == WGNN_OK) {
        s = wgnn__st_open(dir, &st, err, sizeof err);
        if (s != WGNN_OK) s = wgnn__err(ctx, s, "%s", err);
    }
    if (s == WGNN_OK) s = find_prefix(m, st);
    if (s == WGNN_OK) s = wgnn__vit_load(m, st);
    if (s == WGNN_OK) s = wgnn_context_sync(ctx); /* uploads done, errors surfaced here */
    wgnn__st_close(st);
    wgnn__json_free(&cfg);
    if (s != WGNN_OK) {
        wgnn_model_destroy(m);
        return s;
    }
    *out = m;
    return WGNN_OK;
}

/* The public calls that make other public calls hold the context
 * throughout (as lm.c's): another thread is refused until they return. */
wgnn_status wgnn_model_load(wgnn_context *ctx, const char *dir, const wgnn_model_options *opts, wgnn_model **out) {
    if (!ctx) return model_load_locked(ctx, dir, opts, out); /* its messages for NULL arguments */
    wgnn_status s = wgnn__enter(ctx);
    return s == WGNN_OK ? wgnn__leave(ctx, model_load_locked(ctx, dir, opts, out)) : s;
}

void wgnn_model_destroy(wgnn_model *m) {
    if (!m) return;
    wgnn_graph_destroy(m->g);
    for (int i = 0; i < m->n_w; i++) {
        wgnn_tensor_destroy(m->w[i].t);
        free(m->w[i].name);
    }
    free(m->w);
    free(m->pos);
    free(m->cls);
    free(m->probe_q);
    free(m);
}

void wgnn_model_get_info(const wgnn_model *m, wgnn_model_info *info) {
    if (m && info) *info = m->info;
}

/* Checks an input, builds the graph of its shape (unless it is the last
 * one's) and uploads it. what names the call in messages. */
static wgnn_status prepare(wgnn_model *m, const float *pixel_values, int64_t batch, int64_t height, int64_t width,
                           const char *what) {
    const wgnn_model_info *in = &m->info;
    if (!pixel_values) return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: pixel_values is NULL", what);
    if (batch < 1 || batch > 65536)
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: batch %lld is not in [1, 65536]", what,
                         (long long)batch);
    if (height < in->patch_size || width < in->patch_size || height > 65536 || width > 65536 ||
        height % in->patch_size || width % in->patch_size)
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "%s: image size %lldx%lld (height x width) must be a positive multiple of "
                         "the patch size %d (at most 65536)",
                         what, (long long)height, (long long)width, in->patch_size);
    bool same = m->g && m->g_batch == batch && m->g_height == height && m->g_width == width;
    if (!same && m->inflight > 0)
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "%s: %d run%s of input [%lld,%d,%lld,%lld] %s in flight: fetch %s with "
                         "wgnn_model_encode_fetch before another input shape",
                         what, m->inflight, m->inflight > 1 ? "s" : "", (long long)m->g_batch, in->num_channels,
                         (long long)m->g_height, (long long)m->g_width, m->inflight > 1 ? "are" : "is",
                         m->inflight > 1 ? "them" : "it");
    if (!same) {
        wgnn_graph_destroy(m->g);
        m->g = NULL;
        wgnn_status s = wgnn__vit_build(m, batch, height, width);
        if (s != WGNN_OK) {
            wgnn_graph_destroy(m->g);
            m->g = NULL;
            if (s == WGNN_ERR_LIMIT) { /* a device limit deep in the graph: say which input passed it */
                char inner[WGNN__ERR_LEN];
                snprintf(inner, sizeof inner, "%s", wgnn_context_error(m->ctx));
                return wgnn__err(m->ctx, s, "%s: input [%lld,%d,%lld,%lld] is too large for this device (a smaller "
                                 "batch or image fits): %s", what, (long long)batch, in->num_channels,
                                 (long long)height, (long long)width, inner);
            }
            return s;
        }
        m->g_batch = batch;
        m->g_height = height;
        m->g_width = width;
    }
    uint64_t bytes = (uint64_t)batch * (uint64_t)in->num_channels * (uint64_t)height * (uint64_t)width * sizeof(float);
    return wgnn_graph_set_input(m->g, m->v_in, pixel_values, (size_t)bytes);
}

static wgnn_status model_encode_locked(wgnn_model *m, const float *pixel_values, int64_t batch, int64_t height, int64_t width,
                              int profile) {
    if (!m) return WGNN_ERR_INVALID_ARGUMENT;
    if (m->inflight > 0)
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "wgnn_model_encode: %d run%s of wgnn_model_encode_submit not fetched yet: fetch them first "
                         "(wgnn_model_encode_fetch)",
                         m->inflight, m->inflight > 1 ? "s" : "");
    wgnn_status s = prepare(m, pixel_values, batch, height, width, "wgnn_model_encode");
    if (s == WGNN_OK) s = wgnn_graph_run(m->g, profile);
    return s;
}

wgnn_status wgnn_model_encode(wgnn_model *m, const float *pixel_values, int64_t batch, int64_t height, int64_t width,
                              int profile) {
    if (!m) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(m->ctx);
    return s == WGNN_OK ? wgnn__leave(m->ctx, model_encode_locked(m, pixel_values, batch, height, width, profile)) : s;
}

static wgnn_status model_encode_submit_locked(wgnn_model *m, const float *pixel_values, int64_t batch, int64_t height,
                                     int64_t width) {
    if (!m) return WGNN_ERR_INVALID_ARGUMENT;
    if (m->inflight >= 2)
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "wgnn_model_encode_submit: two runs are in flight already: fetch one first "
                         "(wgnn_model_encode_fetch)");
    wgnn_status s = prepare(m, pixel_values, batch, height, width, "wgnn_model_encode_submit");
    if (s != WGNN_OK) return s;
    wgnn_value v[2] = {m->v_last, m->v_pool};
    s = wgnn__graph_submit_n(m->g, v, m->v_pool >= 0 ? 2 : 1, (m->slot_oldest + m->inflight) % 2);
    if (s == WGNN_OK) m->inflight++;
    return s;
}

wgnn_status wgnn_model_encode_submit(wgnn_model *m, const float *pixel_values, int64_t batch, int64_t height,
                                     int64_t width) {
    if (!m) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(m->ctx);
    return s == WGNN_OK ? wgnn__leave(m->ctx, model_encode_submit_locked(m, pixel_values, batch, height, width)) : s;
}

static wgnn_status model_encode_fetch_locked(wgnn_model *m, float *last_hidden_state, size_t bytes, float *pooler_output,
                                    size_t pooled_bytes) {
    if (!m) return WGNN_ERR_INVALID_ARGUMENT;
    if (m->inflight == 0)
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "wgnn_model_encode_fetch: no run in flight (wgnn_model_encode_submit starts one)");
    if (pooler_output && m->v_pool < 0)
        return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED, "%s: this model has no pooler output", m->dir);
    wgnn_desc d[2];
    wgnn_status s = wgnn_graph_desc(m->g, m->v_last, &d[0]);
    if (s == WGNN_OK && m->v_pool >= 0) s = wgnn_graph_desc(m->g, m->v_pool, &d[1]);
    if (s != WGNN_OK) return s;
    uint64_t want[2] = {wgnn__desc_numel(&d[0]) * wgnn_dtype_size(d[0].dtype),
                        m->v_pool >= 0 ? wgnn__desc_numel(&d[1]) * wgnn_dtype_size(d[1].dtype) : 0};
    if (last_hidden_state && bytes != want[0])
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "wgnn_model_encode_fetch: %zu bytes given for last_hidden_state, it holds %llu", bytes,
                         (unsigned long long)want[0]);
    if (pooler_output && pooled_bytes != want[1])
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "wgnn_model_encode_fetch: %zu bytes given for pooler_output, it holds %llu", pooled_bytes,
                         (unsigned long long)want[1]);
    void *dst[2] = {last_hidden_state, pooler_output};
    size_t len[2] = {last_hidden_state ? bytes : 0, pooler_output ? pooled_bytes : 0};
    /* the run leaves the pipeline whatever the outcome of the wait */
    int slot = m->slot_oldest;
    m->slot_oldest ^= 1;
    m->inflight--;
    return wgnn__graph_fetch_n(m->g, slot, m->v_pool >= 0 ? 2 : 1, dst, len);
}

wgnn_status wgnn_model_encode_fetch(wgnn_model *m, float *last_hidden_state, size_t bytes, float *pooler_output,
                                    size_t pooled_bytes) {
    if (!m) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(m->ctx);
    return s == WGNN_OK ? wgnn__leave(m->ctx, model_encode_fetch_locked(m, last_hidden_state, bytes, pooler_output, pooled_bytes)) : s;
}

static wgnn_value output_value(const wgnn_model *m, wgnn_model_output which) {
    if (which == WGNN_MODEL_LAST_HIDDEN_STATE) return m->v_last;
    if (which == WGNN_MODEL_POOLER_OUTPUT) return m->v_pool;
    return -1;
}

/* fn: the public function, for messages */
static wgnn_status output_desc(const wgnn_model *m, wgnn_model_output which, wgnn_desc *out, const char *fn) {
    if (which != WGNN_MODEL_LAST_HIDDEN_STATE && which != WGNN_MODEL_POOLER_OUTPUT)
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: unknown output %d", fn, (int)which);
    if (which == WGNN_MODEL_POOLER_OUTPUT && !m->info.has_pooler)
        return wgnn__err(m->ctx, WGNN_ERR_UNSUPPORTED, "%s: %s: this model has no pooler output", fn, m->dir);
    if (!m->g) return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: nothing encoded yet", fn);
    return wgnn_graph_desc(m->g, output_value(m, which), out);
}

wgnn_status wgnn_model_output_desc(const wgnn_model *m, wgnn_model_output which, wgnn_desc *out) {
    if (!m || !out) return WGNN_ERR_INVALID_ARGUMENT;
    return output_desc(m, which, out, "wgnn_model_output_desc");
}

static wgnn_status model_read_output_locked(wgnn_model *m, wgnn_model_output which, float *data, size_t bytes) {
    wgnn_desc d;
    wgnn_status s = output_desc(m, which, &d, "wgnn_model_read_output");
    if (s != WGNN_OK) return s;
    if (m->inflight > 0) /* which run's output it would be is not the caller's to guess */
        return wgnn__err(m->ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "wgnn_model_read_output: %d run%s of wgnn_model_encode_submit not fetched yet: their outputs "
                         "come with wgnn_model_encode_fetch",
                         m->inflight, m->inflight > 1 ? "s" : "");
    return wgnn_graph_read_output(m->g, output_value(m, which), data, bytes);
}

wgnn_status wgnn_model_read_output(wgnn_model *m, wgnn_model_output which, float *data, size_t bytes) {
    if (!m) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(m->ctx);
    return s == WGNN_OK ? wgnn__leave(m->ctx, model_read_output_locked(m, which, data, bytes)) : s;
}

wgnn_graph *wgnn_model_graph(wgnn_model *m) { return m ? m->g : NULL; }

/* ---- images ------------------------------------------------------------------------ */

wgnn_status wgnn_image_preprocess_file(const char *image_path, const char *preproc_path, float **pixels,
                                       int64_t *height, int64_t *width, char *err, size_t err_len) {
    if (err && err_len) err[0] = 0;
    if (!image_path || !preproc_path || !pixels || !height || !width) {
        if (err && err_len) snprintf(err, err_len, "wgnn_image_preprocess_file: NULL argument");
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    *pixels = NULL;
    wgnn__preproc pp;
    wgnn_status s = wgnn__preproc_load(preproc_path, &pp, err, err_len);
    if (s != WGNN_OK) return s;
    wgnn__image img = {0};
    s = wgnn__image_load(image_path, &img, err, err_len);
    if (s != WGNN_OK) return s;
    int ow, oh;
    wgnn__preproc_out_size(&pp, img.w, img.h, &ow, &oh);
    float *px = malloc((size_t)3 * (size_t)ow * (size_t)oh * sizeof *px);
    if (!px) {
        wgnn__image_free(&img);
        if (err && err_len) snprintf(err, err_len, "%s: out of host memory", image_path);
        return WGNN_ERR_OUT_OF_MEMORY;
    }
    s = wgnn__image_preprocess(&img, &pp, px, ow, oh, err, err_len);
    wgnn__image_free(&img);
    if (s != WGNN_OK) {
        free(px);
        return s;
    }
    *pixels = px;
    *height = oh;
    *width = ow;
    return WGNN_OK;
}
