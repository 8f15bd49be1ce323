/* qwen3.c - Qwen3ForCausalLM (and Qwen2, Llama: the same graph without q/k
 * norms): config.json, weights, and the graph of one run of n tokens.
 *
 * Graph of a run (batch 1, n tokens at positions lens[0] - n .. lens[0] - 1,
 * lens[0] the cache length after it):
 *   x = embedding(embed, ids)                                   [n, hidden]
 *   per layer (RMSNorm weights are folded into the columns of the matrix
 *   after them at load; linear's prologue=rms_norm divides rows by their RMS;
 *   int8 products take the weight in the prologue instead, see fold_norms):
 *     qkv = linear(x, prologue=rms_norm)  [n, (H + 2 Hkv) hd] (one stacked matrix)
 *     att = qkv_sdpa_kvcache(qkv, cos, sin, k_cache, v_cache, lens, q_norm, k_norm):
 *           heads out of qkv, q and k RMS-normalized per head (Qwen3) and
 *           rotated by the rows of the cos/sin tables [max_context, hd] at
 *           their positions; k and v written into the layer's cache rows
 *           lens - n .. lens - 1 (in place); causal attention over the
 *           cache -> [1, H, n, hd],
 *           viewed as [n, H*hd]; one kernel and the split-KV reduce when
 *           decoding
 *     x = linear(att, o, bias = x)          (the residual in the same pass)
 *     h = linear(x, gate|up, prologue=rms_norm)   (gate and up stacked)
 *     x = linear(h, down, prologue=swiglu, bias = x)
 *   For one token (decoding) [1, n, heads, hd] and [1, heads, n, hd] are
 *   the same bytes: views replace the permutes.
 *   logits = linear(x, lm_head, prologue=rms_norm) (every row, or the last
 *   row only, then argmax or sample on the GPU; a tied f32/f16 lm_head is
 *   the embedding itself: its prologue takes the norm's weight). */
#include "models/builder.h"
#include "models/lm.h"
#include "models/model.h" /* wgnn__weight_read */
#include "ops/op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- config.json ------------------------------------------------------------ */

static wgnn_status jint(wgnn_lm *lm, const wgnn__json *j, const char *key, bool has_def, int64_t def, int64_t lo,
                        int64_t hi, int *out) {
    char err[512];
    int64_t v = 0;
    wgnn_status s = wgnn__json_int(j, key, has_def, def, lo, hi, &v, err, sizeof err);
    if (s != WGNN_OK) return wgnn__err(lm->ctx, s, "%s", err);
    *out = (int)v;
    return WGNN_OK;
}

static bool is_null(const wgnn__json *j, const char *key) {
    const cJSON *it = wgnn__json_get(j, key);
    return !it || cJSON_IsNull(it);
}

/* eos_token_id: an integer or a list of them; false when absent or null. */
static wgnn_status read_eos(wgnn_lm *lm, const wgnn__json *j, bool *found) {
    *found = false;
    if (!j || is_null(j, "eos_token_id")) return WGNN_OK;
    const cJSON *it = wgnn__json_get(j, "eos_token_id");
    wgnn_lm_info *in = &lm->info;
    if (cJSON_IsNumber(it)) {
        int v = 0;
        wgnn_status s = jint(lm, j, "eos_token_id", false, 0, 0, in->vocab_size - 1, &v);
        if (s != WGNN_OK) return s;
        in->eos[0] = v;
        in->n_eos = 1;
    } else {
        double ids[8];
        int got = 0;
        char err[512];
        wgnn_status s = wgnn__json_nums(j, "eos_token_id", ids, 0, 8, &got, err, sizeof err);
        if (s != WGNN_OK) return wgnn__err(lm->ctx, s, "%s", err);
        for (int i = 0; i < got; i++) {
            if (ids[i] != floor(ids[i]) || ids[i] < 0 || ids[i] >= in->vocab_size)
                return wgnn__err(lm->ctx, WGNN_ERR_FORMAT, "%s: eos_token_id[%d] = %g is not a token id (0..%d)",
                                 j->label, i, ids[i], in->vocab_size - 1);
            in->eos[i] = (int32_t)ids[i];
        }
        in->n_eos = got;
    }
    *found = true;
    return WGNN_OK;
}

wgnn_status wgnn__qwen3_config(wgnn_lm *lm, const wgnn__json *j, const wgnn__json *gen) {
    char err[512], type[32];
    wgnn_lm_info *in = &lm->info;
    wgnn_status s = wgnn__json_str(j, "model_type", NULL, type, sizeof type, err, sizeof err);
    if (s != WGNN_OK) return wgnn__err(lm->ctx, s, "%s", err);
    bool qwen3 = strcmp(type, "qwen3") == 0, qwen2 = strcmp(type, "qwen2") == 0, llama = strcmp(type, "llama") == 0;
    if (!qwen3 && !qwen2 && !llama)
        return wgnn__err(lm->ctx, WGNN_ERR_UNSUPPORTED,
                         "%s: model_type \"%s\" is not a decoder wgnn runs (qwen3, qwen2, llama)", j->label, type);
    snprintf(in->model_type, sizeof in->model_type, "%s", type);
    if ((s = jint(lm, j, "vocab_size", false, 0, 1, INT32_MAX, &in->vocab_size)) ||
        (s = jint(lm, j, "hidden_size", false, 0, 4, 1 << 17, &in->hidden_size)) ||
        (s = jint(lm, j, "intermediate_size", false, 0, 1, 1 << 20, &in->intermediate_size)) ||
        (s = jint(lm, j, "num_hidden_layers", false, 0, 1, 4096, &in->num_layers)) ||
        (s = jint(lm, j, "num_attention_heads", false, 0, 1, 4096, &in->num_heads)) ||
        (s = jint(lm, j, "num_key_value_heads", true, in->num_heads, 1, 4096, &in->num_kv_heads)))
        return s;
    int def_hd = in->hidden_size / in->num_heads;
    if (is_null(j, "head_dim")) in->head_dim = def_hd;
    else if ((s = jint(lm, j, "head_dim", false, 0, 1, 1 << 12, &in->head_dim))) return s;
    int maxpos = 0;
    if ((s = jint(lm, j, "max_position_embeddings", true, 4096, 1, 1 << 24, &maxpos))) return s;
    if ((s = wgnn__json_num(j, "rms_norm_eps", true, 1e-6, 0.0, 1.0, &in->rms_norm_eps, err, sizeof err)))
        return wgnn__err(lm->ctx, s, "%s", err);
    /* rope: theta at the top level (transformers 4) or in rope_parameters (5) */
    /* (transformers 5 moves a top-level rope_theta into rope_parameters:
     * one missing there is taken from the top level) */
    const char *rp = wgnn__json_has(j, "rope_parameters") && !is_null(j, "rope_parameters") ? "rope_parameters." : "";
    char key[64];
    snprintf(key, sizeof key, "%srope_theta", rp);
    if (*rp && !wgnn__json_has(j, key)) snprintf(key, sizeof key, "rope_theta");
    if ((s = wgnn__json_num(j, key, true, 10000.0, 1e-3, 1e12, &in->rope_theta, err, sizeof err)))
        return wgnn__err(lm->ctx, s, "%s", err);
    /* a scaling in either key, both checked: only the default rotary embedding */
    static const char *const scals[2] = {"rope_parameters", "rope_scaling"};
    for (int k = 0; k < 2; k++) {
        char rope_type[32] = "default";
        if (!wgnn__json_has(j, scals[k]) || is_null(j, scals[k])) continue;
        const cJSON *obj = wgnn__json_get(j, scals[k]);
        if (!cJSON_IsObject(obj))
            return wgnn__err(lm->ctx, WGNN_ERR_FORMAT, "%s: %s must be an object (or null)", j->label, scals[k]);
        snprintf(key, sizeof key, "%s.rope_type", scals[k]);
        if (!wgnn__json_has(j, key)) snprintf(key, sizeof key, "%s.type", scals[k]);
        if (!wgnn__json_has(j, key)) {
            /* no type: as transformers, only an object that holds no
             * scaling parameter (at most rope_theta) is the default */
            for (const cJSON *c = obj->child; c; c = c->next)
                if (strcmp(c->string, "rope_theta") != 0)
                    return wgnn__err(lm->ctx, WGNN_ERR_FORMAT,
                                     "%s: %s has \"%s\" but no \"rope_type\" (or \"type\"): which scaling is meant?",
                                     j->label, scals[k], c->string);
        }
        if ((s = wgnn__json_str(j, key, "default", rope_type, sizeof rope_type, err, sizeof err)))
            return wgnn__err(lm->ctx, s, "%s", err);
        if (strcmp(rope_type, "default") != 0)
            return wgnn__err(lm->ctx, WGNN_ERR_UNSUPPORTED,
                             "%s: %s type \"%s\" is not supported (only the default rotary embedding)", j->label,
                             scals[k], rope_type);
    }
    char act[32];
    if ((s = wgnn__json_str(j, "hidden_act", "silu", act, sizeof act, err, sizeof err)))
        return wgnn__err(lm->ctx, s, "%s", err);
    if (strcmp(act, "silu") != 0)
        return wgnn__err(lm->ctx, WGNN_ERR_UNSUPPORTED, "%s: hidden_act \"%s\" is not supported (silu)", j->label, act);
    bool tie, abias;
    if ((s = wgnn__json_bool(j, "tie_word_embeddings", true, false, &tie, err, sizeof err)) ||
        (s = wgnn__json_bool(j, "attention_bias", true, false, &abias, err, sizeof err)))
        return wgnn__err(lm->ctx, s, "%s", err);
    if (abias && !qwen2)
        return wgnn__err(lm->ctx, WGNN_ERR_UNSUPPORTED, "%s: attention_bias true is not supported for %s", j->label,
                         type);
    bool sliding;
    if ((s = wgnn__json_bool(j, "use_sliding_window", true, false, &sliding, err, sizeof err)))
        return wgnn__err(lm->ctx, s, "%s", err);
    if (sliding)
        return wgnn__err(lm->ctx, WGNN_ERR_UNSUPPORTED,
                         "%s: use_sliding_window true: sliding-window attention is not supported", j->label);
    in->tie_word_embeddings = tie;
    in->has_qk_norm = qwen3;
    in->has_qkv_bias = qwen2;
    if (in->num_heads % in->num_kv_heads)
        return wgnn__err(lm->ctx, WGNN_ERR_FORMAT,
                         "%s: num_attention_heads %d is not a multiple of num_key_value_heads %d", j->label,
                         in->num_heads, in->num_kv_heads);
    if (in->head_dim % 4)
        return wgnn__err(lm->ctx, WGNN_ERR_UNSUPPORTED,
                         "%s: head_dim %d is not a multiple of 4, which wgnn's attention needs", j->label,
                         in->head_dim);
    if (in->max_context == 0) in->max_context = maxpos < 4096 ? maxpos : 4096;
    /* a layer's K (and V) cache [kv_heads, max_context, head_dim] and the
     * RoPE tables are each one storage binding: refused before anything is
     * allocated */
    uint64_t row = (uint64_t)in->num_kv_heads * (uint64_t)in->head_dim * 4u, lim = UINT64_MAX;
    if (lm->ctx) { /* (NULL: the config fuzzer, no device) */
        lim = lm->ctx->limits.maxStorageBufferBindingSize;
        if (lm->ctx->limits.maxBufferSize < lim) lim = lm->ctx->limits.maxBufferSize;
    }
    if ((uint64_t)in->max_context * row > lim)
        return wgnn__err(lm->ctx, WGNN_ERR_LIMIT,
                         "max_context %d: a layer's KV cache [%d, %d, %d] float32 takes %llu bytes, past the "
                         "device's limit of %llu bytes a storage binding (at most %llu positions here; lower --max-context, "
                         "wgnn_lm_options.max_context)",
                         in->max_context, in->num_kv_heads, in->max_context, in->head_dim,
                         (unsigned long long)((uint64_t)in->max_context * row), (unsigned long long)lim,
                         (unsigned long long)(lim / row));
    bool found = false;
    if ((s = read_eos(lm, gen, &found))) return s;
    if (!found && (s = read_eos(lm, j, &found))) return s;
    return WGNN_OK;
}

/* ---- weights -------------------------------------------------------------------- */

#define D1(a) 1, (int64_t[]){a}
#define D2(a, b) 2, (int64_t[]){a, b}

static wgnn_status upload(wgnn_lm *lm, const void *data, wgnn_dtype dt, int rank, const int64_t *dims,
                          wgnn_tensor **out) {
    wgnn_status s = wgnn_tensor_create(lm->ctx, dt, rank, dims, out);
    if (s == WGNN_OK) s = wgnn_tensor_upload(lm->ctx, *out, data, (size_t)wgnn_tensor_nbytes(*out));
    if (s == WGNN_OK) {
        lm->info.weight_bytes += wgnn_tensor_nbytes(*out);
    } else {
        wgnn_tensor_destroy(*out);
        *out = NULL;
    }
    return s;
}

/* A float32 vector (norm weights, biases). */
static wgnn_status load_vec(wgnn_lm *lm, const wgnn__st *st, const char *name, int64_t n, wgnn_tensor **out) {
    float *f = NULL;
    wgnn_status s = wgnn__weight_read(lm->ctx, lm->dir, st, name, D1(n), &f);
    if (s == WGNN_OK) s = upload(lm, f, WGNN_F32, D1(n), out);
    if (s == WGNN_OK) lm->info.n_params += (uint64_t)n;
    free(f);
    return s;
}

/* A matrix [n, k] in the model's weight format: float32, float16, or int8
 * rows (4 a word, little-endian) with scale = max |row| / 127, so that
 * w ~= q * scale with q = round(w / scale) in [-127, 127]. */
static wgnn_status put_mat(wgnn_lm *lm, const float *f, int64_t n, int64_t k, wgnn__lm_mat *m) {
    wgnn_status s;
    if (lm->weights == WGNN_LM_WEIGHTS_F32) return upload(lm, f, WGNN_F32, D2(n, k), &m->w);
    if (lm->weights == WGNN_LM_WEIGHTS_F16) {
        uint16_t *h = malloc((size_t)(n * k) * sizeof *h);
        if (!h) return wgnn__err(lm->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
        wgnn_f32_to_f16(f, h, (size_t)(n * k));
        s = upload(lm, h, WGNN_F16, D2(n, k), &m->w);
        free(h);
        return s;
    }
    uint32_t *q = malloc((size_t)(n * k)); /* k % 4 == 0 (checked at load) */
    float *sc = malloc((size_t)n * sizeof *sc);
    if (!q || !sc) {
        free(q);
        free(sc);
        return wgnn__err(lm->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    }
    for (int64_t i = 0; i < n; i++) {
        const float *row = f + i * k;
        float mx = 0;
        for (int64_t j = 0; j < k; j++) mx = fabsf(row[j]) > mx ? fabsf(row[j]) : mx;
        float scale = mx > 0 ? mx / 127.0f : 1.0f;
        sc[i] = scale;
        for (int64_t j = 0; j < k; j += 4) {
            uint32_t w = 0;
            for (int b = 0; b < 4; b++) {
                long v = lrintf(row[j + b] / scale);
                v = v > 127 ? 127 : v < -127 ? -127 : v;
                w |= (uint32_t)(uint8_t)(int8_t)v << (8 * b);
            }
            q[(i * k + j) / 4] = w;
        }
    }
    s = upload(lm, q, WGNN_I32, D2(n, k / 4), &m->w);
    if (s == WGNN_OK) s = upload(lm, sc, WGNN_F32, D1(n), &m->scale);
    free(q);
    free(sc);
    return s;
}

/* Several layers' matrices [n_i, k] (names[i].weight, and .bias when bias)
 * stacked into one [sum n_i, k]: one product instead of several. colscale
 * (may be NULL): the RMSNorm weight [k] before them, folded into the
 * columns (the graph's linear then takes prologue=rms_norm). */
static wgnn_status load_stacked(wgnn_lm *lm, const wgnn__st *st, int count, const char *const *names,
                                const int64_t *ns, int64_t k, bool bias, const float *colscale, wgnn__lm_mat *m) {
    int64_t total = 0;
    for (int i = 0; i < count; i++) total += ns[i];
    float *w = malloc((size_t)(total * k) * sizeof *w), *b = bias ? malloc((size_t)total * sizeof *b) : NULL;
    wgnn_status s = w && (!bias || b) ? WGNN_OK : wgnn__err(lm->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    int64_t row = 0;
    for (int i = 0; s == WGNN_OK && i < count; i++) {
        char nm[256];
        float *part = NULL;
        snprintf(nm, sizeof nm, "%s.weight", names[i]);
        s = wgnn__weight_read(lm->ctx, lm->dir, st, nm, D2(ns[i], k), &part);
        if (s == WGNN_OK) memcpy(w + row * k, part, (size_t)(ns[i] * k) * sizeof *w);
        free(part);
        if (s == WGNN_OK && bias) {
            snprintf(nm, sizeof nm, "%s.bias", names[i]);
            s = wgnn__weight_read(lm->ctx, lm->dir, st, nm, D1(ns[i]), &part);
            if (s == WGNN_OK) memcpy(b + row, part, (size_t)ns[i] * sizeof *b);
            free(part);
        }
        row += ns[i];
    }
    for (int64_t r = 0; s == WGNN_OK && colscale && r < total; r++)
        for (int64_t i = 0; i < k; i++) w[r * k + i] *= colscale[i];
    if (s == WGNN_OK) s = put_mat(lm, w, total, k, m);
    if (s == WGNN_OK && bias) s = upload(lm, b, WGNN_F32, D1(total), &m->bias);
    if (s == WGNN_OK) lm->info.n_params += (uint64_t)(total * k) + (bias ? (uint64_t)total : 0);
    free(w);
    free(b);
    return s;
}

static wgnn_status load_mat(wgnn_lm *lm, const wgnn__st *st, const char *name, int64_t n, int64_t k, bool bias,
                            const float *colscale, wgnn__lm_mat *m) {
    return load_stacked(lm, st, 1, &name, &n, k, bias, colscale, m);
}

/* RMSNorm weights folded into the columns of the matrix after them (the
 * product then takes prologue=rms_norm): exact up to rounding for float32
 * and float16 storage; not for int8 rows, whose one scale per row would then
 * be set by the largest norm weight and lose the small columns' precision,
 * so q8 products take the weight in the prologue (rms_norm_weight). */
static bool fold_norms(const wgnn_lm *lm) { return lm->weights != WGNN_LM_WEIGHTS_Q8; }

/* A float32 vector kept on the host (an RMSNorm weight folded into the
 * matrix after it). */
static wgnn_status read_vec(wgnn_lm *lm, const wgnn__st *st, const char *name, int64_t n, float **out) {
    wgnn_status s = wgnn__weight_read(lm->ctx, lm->dir, st, name, D1(n), out);
    if (s == WGNN_OK) lm->info.n_params += (uint64_t)n;
    return s;
}

/* cos and sin of position p times inv_freq, as transformers computes them in
 * float32 (inv_freq = 1 / theta^(2i/hd), freqs = p * inv_freq, emb =
 * cat(freqs, freqs)). */
static wgnn_status rope_tables(wgnn_lm *lm) {
    const int hd = lm->info.head_dim, n = lm->info.max_context;
    float *c = malloc((size_t)n * hd * sizeof *c), *sn = malloc((size_t)n * hd * sizeof *sn);
    wgnn_status s = c && sn ? WGNN_OK : wgnn__err(lm->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    for (int i = 0; s == WGNN_OK && i < hd / 2; i++) {
        float e = (float)(2 * i) / (float)hd;
        float inv = 1.0f / powf((float)lm->info.rope_theta, e);
        for (int p = 0; p < n; p++) {
            float fr = (float)p * inv;
            c[(size_t)p * hd + i] = c[(size_t)p * hd + i + hd / 2] = (float)cos((double)fr);
            sn[(size_t)p * hd + i] = sn[(size_t)p * hd + i + hd / 2] = (float)sin((double)fr);
        }
    }
    if (s == WGNN_OK) s = upload(lm, c, WGNN_F32, D2(n, hd), &lm->cos);
    if (s == WGNN_OK) s = upload(lm, sn, WGNN_F32, D2(n, hd), &lm->sin);
    free(c);
    free(sn);
    return s;
}

wgnn_status wgnn__qwen3_load(wgnn_lm *lm, const wgnn__st *st) {
    wgnn_lm_info *in = &lm->info;
    const int64_t h = in->hidden_size, hd = in->head_dim, nq = (int64_t)in->num_heads * hd,
                  nkv = (int64_t)in->num_kv_heads * hd, f = in->intermediate_size, V = in->vocab_size;
    wgnn_status s0 = wgnn__check_layer_count(lm->ctx, lm->dir, st, "model.layers.", in->num_layers);
    if (s0 != WGNN_OK) return s0;
    if (lm->weights == WGNN_LM_WEIGHTS_Q8 && (h % 4 || nq % 4 || f % 4))
        return wgnn__err(lm->ctx, WGNN_ERR_UNSUPPORTED,
                         "%s: int8 weights need hidden_size, heads*head_dim and intermediate_size to be multiples "
                         "of 4",
                         lm->dir);
    wgnn_status s;
    /* the embedding: float32, or float16 for the f16 and q8 formats (the
     * lookup reads single rows; the tied lm_head then reads it as float16) */
    float *emb = NULL;
    if ((s = wgnn__weight_read(lm->ctx, lm->dir, st, "model.embed_tokens.weight", D2(V, h), &emb))) return s;
    in->n_params += (uint64_t)(V * h);
    if (lm->weights == WGNN_LM_WEIGHTS_F32) {
        s = upload(lm, emb, WGNN_F32, D2(V, h), &lm->embed);
    } else {
        uint16_t *e16 = malloc((size_t)(V * h) * sizeof *e16);
        if (!e16) s = wgnn__err(lm->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
        else wgnn_f32_to_f16(emb, e16, (size_t)(V * h));
        if (s == WGNN_OK) s = upload(lm, e16, WGNN_F16, D2(V, h), &lm->embed);
        free(e16);
    }
    /* the final RMSNorm's weight is folded into the lm_head where that is
     * a float matrix of its own (untied f32/f16); see fold_norms */
    float *fnorm = NULL;
    bool fold = fold_norms(lm);
    if (s == WGNN_OK) s = read_vec(lm, st, "model.norm.weight", h, &fnorm);
    if (s == WGNN_OK && in->tie_word_embeddings) {
        if (lm->weights == WGNN_LM_WEIGHTS_Q8) s = put_mat(lm, emb, V, h, &lm->lm_head);
        else lm->lm_head.w = lm->embed;
    }
    free(emb);
    if (s == WGNN_OK && !in->tie_word_embeddings)
        s = load_mat(lm, st, "lm_head", V, h, false, fold ? fnorm : NULL, &lm->lm_head);
    if (s == WGNN_OK && (in->tie_word_embeddings || !fold)) s = upload(lm, fnorm, WGNN_F32, D1(h), &lm->norm);
    free(fnorm);
    if (s) return s;

    lm->layers = calloc((size_t)in->num_layers, sizeof *lm->layers);
    if (!lm->layers) return wgnn__err(lm->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    for (int l = 0; l < in->num_layers; l++) {
        wgnn__lm_layer *L = &lm->layers[l];
        char a[64], nm[160];
        snprintf(a, sizeof a, "model.layers.%d", l);
#define NM(x) (snprintf(nm, sizeof nm, "%s.%s", a, x), nm)
        char qn[160], kn[160], vn[160], gn[160], un[160];
        snprintf(qn, sizeof qn, "%s.self_attn.q_proj", a);
        snprintf(kn, sizeof kn, "%s.self_attn.k_proj", a);
        snprintf(vn, sizeof vn, "%s.self_attn.v_proj", a);
        snprintf(gn, sizeof gn, "%s.mlp.gate_proj", a);
        snprintf(un, sizeof un, "%s.mlp.up_proj", a);
        const char *qkv[3] = {qn, kn, vn}, *gu[2] = {gn, un};
        float *n1 = NULL, *n2 = NULL;
        if ((s = read_vec(lm, st, NM("input_layernorm.weight"), h, &n1)) == WGNN_OK &&
            (s = read_vec(lm, st, NM("post_attention_layernorm.weight"), h, &n2)) == WGNN_OK &&
            (s = load_stacked(lm, st, 3, qkv, (int64_t[]){nq, nkv, nkv}, h, in->has_qkv_bias, fold ? n1 : NULL,
                              &L->qkv)) == WGNN_OK &&
            (s = load_mat(lm, st, NM("self_attn.o_proj"), h, nq, false, NULL, &L->o)) == WGNN_OK &&
            (s = load_stacked(lm, st, 2, gu, (int64_t[]){f, f}, h, false, fold ? n2 : NULL, &L->gate_up)) == WGNN_OK &&
            (s = load_mat(lm, st, NM("mlp.down_proj"), h, f, false, NULL, &L->down)) == WGNN_OK && !fold &&
            (s = upload(lm, n1, WGNN_F32, D1(h), &L->in_norm)) == WGNN_OK)
            s = upload(lm, n2, WGNN_F32, D1(h), &L->post_norm);
        free(n1);
        free(n2);
        if (s) return s;
        if (in->has_qk_norm && ((s = load_vec(lm, st, NM("self_attn.q_norm.weight"), hd, &L->q_norm)) ||
                                (s = load_vec(lm, st, NM("self_attn.k_norm.weight"), hd, &L->k_norm))))
            return s;
#undef NM
        int64_t cd[4] = {1, in->num_kv_heads, in->max_context, hd};
        if ((s = wgnn_tensor_create(lm->ctx, WGNN_F32, 4, cd, &L->kc)) ||
            (s = wgnn_tensor_create(lm->ctx, WGNN_F32, 4, cd, &L->vc)))
            return s;
        in->cache_bytes += 2 * wgnn_tensor_nbytes(L->kc);
    }
    return rope_tables(lm);
}

/* ---- the graph of a run -------------------------------------------------------- */

typedef wgnn__gb gb;
#define gb_op wgnn__gb_op
#define gb_view wgnn__gb_view

static wgnn_value cst(gb *b, wgnn_tensor *t, const char *what) { return wgnn__gb_tensor(b, t, what); }

/* x [rows, k] -> [rows, n] through a stored matrix, plus its bias, or plus
 * res [rows, n] when res >= 0 (a residual added in the same pass; the
 * matrices that take one, o_proj and down_proj, have no bias in any
 * architecture read here). pre: linear's prologue on x, "rms_norm" (the
 * norm's weight folded into the matrix at load), "rms_norm_weight" (the
 * weight norm_w given, int8 matrices) or "swiglu" (x holds gate|up
 * [rows, 2k]); NULL: none. */
static wgnn_value mat(gb *b, const char *label, wgnn_value x, const wgnn__lm_mat *m, wgnn_value res, const char *pre,
                      wgnn_tensor *norm_w) {
    const wgnn_lm *lm = b->user;
    wgnn_value in[5] = {x, cst(b, m->w, label), -1, -1, -1};
    int n_in = 2;
    const char *op = "linear";
    if (m->scale) {
        op = "linear_q8";
        in[n_in++] = cst(b, m->scale, label);
    }
    if (res >= 0) in[n_in++] = res;
    else if (m->bias) in[n_in++] = cst(b, m->bias, label);
    if (norm_w) in[n_in++] = cst(b, norm_w, label);
    char ps[48], eps[48];
    snprintf(ps, sizeof ps, "prologue=%s", pre ? pre : "none");
    snprintf(eps, sizeof eps, "eps=%.17g", lm->info.rms_norm_eps);
    const char *args[2] = {ps, eps};
    return gb_op(b, label, op, n_in, in, pre ? 2 : 0, args);
}

/* rms_norm(x) through m, in the product's prologue: the norm's weight
 * folded into m at load (norm NULL), or given (int8 rows) */
static wgnn_value normed_mat(gb *b, wgnn_value x, wgnn_tensor *norm, const char *label, const wgnn__lm_mat *m) {
    return mat(b, label, x, m, -1, norm ? "rms_norm_weight" : "rms_norm", norm);
}

static wgnn_value layer(gb *b, int l, wgnn_value x, int64_t n, wgnn_value cosv, wgnn_value sinv, wgnn_value lens) {
    wgnn_lm *lm = b->user;
    const wgnn_lm_info *in = &lm->info;
    const wgnn__lm_layer *L = &lm->layers[l];
    const int64_t H = in->num_heads, Hk = in->num_kv_heads, hd = in->head_dim;
    char lab[96];
#define LAB(x) (snprintf(lab, sizeof lab, "layers.%d.%s", l, x), lab)
    /* input_layernorm in the product's prologue (its weight folded into the matrix) */
    wgnn_value qkv = normed_mat(b, x, L->in_norm, LAB("self_attn.qkv_proj"), &L->qkv);
    /* one node: heads out of the stacked projection, q/k RMSNorm, RoPE, k
     * and v written into the layer's cache rows lens - n .. lens - 1 (in
     * place), and the attention over the cache (one kernel when decoding) */
    char nh[48], nkv[48], eps[48];
    snprintf(nh, sizeof nh, "num_heads=%lld", (long long)H);
    snprintf(nkv, sizeof nkv, "num_kv_heads=%lld", (long long)Hk);
    snprintf(eps, sizeof eps, "eps=%.17g", in->rms_norm_eps);
    const char *args[3] = {nh, nkv, eps};
    wgnn_value kc = cst(b, L->kc, "k cache"), vc = cst(b, L->vc, "v cache");
    wgnn_value xin[8] = {gb_view(b, qkv, 3, (int64_t[]){1, n, (H + 2 * Hk) * hd}), cosv, sinv, kc, vc, lens, -1, -1};
    int n_in = 6;
    if (in->has_qk_norm) {
        xin[n_in++] = cst(b, L->q_norm, "q_norm");
        xin[n_in++] = cst(b, L->k_norm, "k_norm");
    }
    wgnn_value outs[3] = {-1, -1, -1};
    wgnn__gb_op_into_n(b, LAB("self_attn.attn"), "qkv_sdpa_kvcache", n_in, xin, 3, args, (wgnn_value[]){-1, kc, vc}, 3,
                       outs, 3);
    wgnn_value att = outs[0];
    if (n > 1) {
        const char *perm[1] = {"dims=0,2,1,3"};
        att = gb_op(b, LAB("self_attn.merge"), "permute", 1, &att, 1, perm);
    }
    att = gb_view(b, att, 2, (int64_t[]){n, H * hd});
    x = mat(b, LAB("self_attn.o_proj"), att, &L->o, x, NULL, NULL); /* + the residual */
    /* post_attention_layernorm in gate|up's prologue, swiglu in down's */
    wgnn_value h = normed_mat(b, x, L->post_norm, LAB("mlp.gate_up_proj"), &L->gate_up);
    x = mat(b, LAB("mlp.down_proj"), h, &L->down, x, "swiglu", NULL); /* + the residual */
#undef LAB
    return x;
}

wgnn_status wgnn__qwen3_build(wgnn_lm *lm, wgnn__lm_graph *gr) {
    const wgnn_lm_info *in = &lm->info;
    const int64_t n = gr->n;
    gb b = {lm->ctx, NULL, WGNN_OK, lm};
    b.s = wgnn_graph_create(lm->ctx, &b.g);
    gr->g = b.g;
    if (b.s != WGNN_OK) return b.s;
    gr->ids = wgnn__gb_input(&b, "ids", WGNN_I32, 1, (int64_t[]){n});
    gr->lens = wgnn__gb_input(&b, "cache_seqlens", WGNN_I32, 1, (int64_t[]){1});
    gr->u = gr->kind == WGNN__LM_SAMPLE ? wgnn__gb_input(&b, "u", WGNN_F32, 1, (int64_t[]){1}) : -1;

    wgnn_value x = gb_op(&b, "embed_tokens", "embedding", 2, (wgnn_value[]){cst(&b, lm->embed, "embed"), gr->ids},
                         0, NULL);
    if (wgnn_tensor_dtype(lm->embed) != WGNN_F32) {
        const char *f32[1] = {"dtype=float32"};
        x = gb_op(&b, "embed_tokens.float", "to_copy", 1, &x, 1, f32);
    }
    /* the RoPE tables [max_context, hd], read by position inside the
     * attention node */
    wgnn_value cosv = cst(&b, lm->cos, "rope cos"), sinv = cst(&b, lm->sin, "rope sin");
    for (int l = 0; l < in->num_layers; l++) x = layer(&b, l, x, n, cosv, sinv, gr->lens);
    if (gr->kind != WGNN__LM_LOGITS && n > 1) {
        char st[48];
        snprintf(st, sizeof st, "start=%lld", (long long)(n - 1));
        const char *sl[2] = {"dim=0", st};
        x = gb_op(&b, "last", "slice", 1, &x, 2, sl);
    }
    /* the final norm in the lm_head's prologue (its weight folded in at load
     * where the lm_head is a float matrix of its own, else given) */
    wgnn_value logits = normed_mat(&b, x, lm->norm, "lm_head", &lm->lm_head);
    /* the chosen token: with one token a run (decoding) it is written into
     * the ids input itself, so the next step can run before the host has
     * read it (wgnn_lm_generate pipelines the steps) */
    const char *op = gr->kind == WGNN__LM_ARGMAX ? "argmax" : "sample";
    char t[48], k[48], p[48];
    snprintf(t, sizeof t, "temperature=%.9g", (double)gr->temperature);
    snprintf(k, sizeof k, "top_k=%d", gr->top_k);
    snprintf(p, sizeof p, "top_p=%.9g", (double)gr->top_p);
    const char *sargs[3] = {t, k, p}, *dargs[1] = {"dim=-1"};
    const char *const *args = gr->kind == WGNN__LM_ARGMAX ? dargs : sargs;
    int n_args = gr->kind == WGNN__LM_ARGMAX ? 1 : 3, n_in = gr->kind == WGNN__LM_ARGMAX ? 1 : 2;
    wgnn_value cin[2] = {logits, gr->u};
    if (gr->kind == WGNN__LM_LOGITS) {
        gr->out = logits;
    } else if (n == 1) {
        wgnn__gb_op_into(&b, op, n_in, cin, n_args, args, gr->ids);
        gr->out = gr->ids;
    } else {
        gr->out = gb_op(&b, op, op, n_in, cin, n_args, args);
    }
    wgnn__gb_output(&b, gr->out);
    if (b.s == WGNN_OK) b.s = wgnn_graph_build(b.g);
    return b.s;
}
