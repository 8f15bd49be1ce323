/* vit.c - ViT (ViTModel) and SigLIP vision (SiglipVisionModel): weights and
 * the graph of one input shape.
 *
 * Both are a patch embedding, position embeddings and pre-LN transformer
 * blocks with multi-head attention through wgnn's sdpa; they differ in:
 *   ViT     a CLS token leads the sequence; final LayerNorm; pooler: dense +
 *           tanh on the CLS row; exact GELU by default
 *   SigLIP  no CLS; post-LayerNorm; pooler: attention pooling with a learned
 *           probe query, LayerNorm and MLP with residual; tanh GELU
 *
 * Graph (per block): LN -> linear to q|k|v (one [3H, H] matrix) viewed as
 * [B,T,3,heads,hd] -> sdpa_qkvpacked ([B,T,heads,hd]: q, k, v read in place,
 * heads merged by the kernel, which also takes the projection's bias where
 * the GEMM would pass over the output for it alone; where the projection
 * passes one storage binding: heads split by qkv_rope without rotation,
 * sdpa, permute back) ->
 * linear with x added in its epilogue (residual); LN -> linear with the
 * GELU in its epilogue -> linear with x added. The patch embedding (a conv
 * with stride = kernel = patch) is a permute of the pixels to [B, patches,
 * C*p*p] and a linear, with the position embeddings added in its epilogue
 * and the first block's first LayerNorm in it too; ViT's CLS row enters it
 * as a row of zeros padded ahead of each image's patches (the product
 * makes it from the bias and the residual's row 0; no cat). */
#include "models/builder.h"
#include "models/model.h"
#include "ops/gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- weights --------------------------------------------------------------------- */

#define D1(a) 1, (int64_t[]){a}
#define D2(a, b) 2, (int64_t[]){a, b}

/* A linear layer's weight [n, k] as the graph uses it: kept transposed,
 * [k, n], for addmm, in float32 or float16 (the GEMM's untransposed
 * operands get its widest tile, and a float16 B read along n loads whole
 * sectors: fc1's product at batch 32 on an H100 took 0.908 ms from an f16
 * [n, k] weight, against 0.800 from an f32 [k, n] one; docs/PERFORMANCE.md,
 * session 24). */
static wgnn_status add_linear_weight(wgnn_model *m, const char *name, const float *w, int64_t n, int64_t k) {
    float *t = malloc((size_t)(n * k) * sizeof *t);
    if (!t) return wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) t[j * n + i] = w[i * k + j];
    wgnn_status s = wgnn__model_add(m, name, t, D2(k, n), m->weights == WGNN_MODEL_WEIGHTS_F16);
    free(t);
    return s;
}

/* Loads a linear layer's weight [n, k] (see add_linear_weight) and bias [n]. */
static wgnn_status load_linear(wgnn_model *m, const wgnn__st *st, const char *name, int64_t n, int64_t k) {
    char w[256], b[256];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(b, sizeof b, "%s.bias", name);
    float *wt = NULL;
    wgnn_status s = wgnn__model_read(m, st, w, D2(n, k), &wt);
    if (s == WGNN_OK) s = add_linear_weight(m, w, wt, n, k);
    free(wt);
    if (s == WGNN_OK) s = wgnn__model_load_tensor(m, st, b, D1(n), false);
    return s;
}

static wgnn_status load_norm(wgnn_model *m, const wgnn__st *st, const char *name, int64_t n) {
    char w[256], b[256];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(b, sizeof b, "%s.bias", name);
    wgnn_status s = wgnn__model_load_tensor(m, st, w, D1(n), false);
    if (s == WGNN_OK) s = wgnn__model_load_tensor(m, st, b, D1(n), false);
    return s;
}

/* q, k, v projections (each [H, H] + [H]) stacked into one [3H, H] linear
 * stored as out_name.weight / .bias. */
static wgnn_status load_qkv(wgnn_model *m, const wgnn__st *st, const char *const names[3], const char *out_name) {
    int64_t h = m->info.hidden_size;
    float *w = malloc((size_t)(3 * h * h) * sizeof *w), *b = malloc((size_t)(3 * h) * sizeof *b);
    wgnn_status s = (w && b) ? WGNN_OK : wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    for (int i = 0; i < 3 && s == WGNN_OK; i++) {
        char nm[256];
        float *part = NULL;
        snprintf(nm, sizeof nm, "%s.weight", names[i]);
        s = wgnn__model_read(m, st, nm, D2(h, h), &part);
        if (s != WGNN_OK) break;
        memcpy(w + i * h * h, part, (size_t)(h * h) * sizeof *w);
        free(part);
        snprintf(nm, sizeof nm, "%s.bias", names[i]);
        s = wgnn__model_read(m, st, nm, D1(h), &part);
        if (s != WGNN_OK) break;
        memcpy(b + i * h, part, (size_t)h * sizeof *b);
        free(part);
    }
    char nm[256];
    if (s == WGNN_OK) {
        snprintf(nm, sizeof nm, "%s.weight", out_name);
        s = add_linear_weight(m, nm, w, 3 * h, h);
    }
    if (s == WGNN_OK) {
        snprintf(nm, sizeof nm, "%s.bias", out_name);
        s = wgnn__model_add(m, nm, b, D1(3 * h), false);
    }
    free(w);
    free(b);
    return s;
}

/* The checkpoint's names of block l's modules (without the prefix). */
typedef struct layer_names {
    char a[64], q[128], k[128], v[128], o[128], n1[128], n2[128], f1[128], f2[128], qkv[64];
} layer_names;

static void names_of(const wgnn_model *m, int l, layer_names *n) {
    bool vit = m->arch == WGNN__ARCH_VIT;
    snprintf(n->qkv, sizeof n->qkv, "layer.%d.qkv", l); /* the stacked q|k|v made at load */
    snprintf(n->a, sizeof n->a, vit ? "encoder.layer.%d" : "encoder.layers.%d", l);
#define NAME(f, vit_s, siglip_s) snprintf(n->f, sizeof n->f, "%s.%s", n->a, vit ? vit_s : siglip_s)
    NAME(q, "attention.attention.query", "self_attn.q_proj");
    NAME(k, "attention.attention.key", "self_attn.k_proj");
    NAME(v, "attention.attention.value", "self_attn.v_proj");
    NAME(o, "attention.output.dense", "self_attn.out_proj");
    NAME(n1, "layernorm_before", "layer_norm1");
    NAME(n2, "layernorm_after", "layer_norm2");
    NAME(f1, "intermediate.dense", "mlp.fc1");
    NAME(f2, "output.dense", "mlp.fc2");
#undef NAME
}

wgnn_status wgnn__vit_load(wgnn_model *m, const wgnn__st *st) {
    wgnn_model_info *in = &m->info;
    const int64_t h = in->hidden_size, c = in->num_channels, p = in->patch_size, f = in->intermediate_size;
    const int64_t grid = in->image_size / in->patch_size, np = grid * grid;
    const bool vit = m->arch == WGNN__ARCH_VIT;
    in->has_cls = vit;
    m->pos_grid = (int)grid;
    char stem[128];
    snprintf(stem, sizeof stem, "%s%s", m->prefix, vit ? "encoder.layer." : "encoder.layers.");
    wgnn_status s = wgnn__check_layer_count(m->ctx, m->dir, st, stem, in->num_layers);
    if (s != WGNN_OK) return s;

    /* patch embedding: conv weight [h, c, p, p] used as a linear [h, c*p*p] */
    const char *pe = vit ? "embeddings.patch_embeddings.projection" : "embeddings.patch_embedding";
    char nm[256];
    float *wt = NULL;
    snprintf(nm, sizeof nm, "%s.weight", pe);
    if ((s = wgnn__model_read(m, st, nm, 4, (int64_t[]){h, c, p, p}, &wt))) return s;
    s = add_linear_weight(m, "patch.weight", wt, h, c * p * p);
    free(wt);
    if (s) return s;
    snprintf(nm, sizeof nm, "%s.bias", pe);
    if ((s = wgnn__model_read(m, st, nm, D1(h), &wt))) return s;
    s = wgnn__model_add(m, "patch.bias", wt, D1(h), false);
    float *patch_bias = NULL; /* ViT: kept for the CLS row below */
    if (s == WGNN_OK && vit) patch_bias = wt;
    else free(wt);
    if (s) return s;

    /* position embeddings (and the CLS token) stay on the host too: graphs
     * derive their constants from them for their batch and image size */
    float *pos = NULL; /* read (its shape checked against config.json) before anything is sized from it */
    if (vit) {
        if ((s = wgnn__model_read(m, st, "embeddings.position_embeddings", 3, (int64_t[]){1, np + 1, h}, &pos))) {
            free(patch_bias);
            return s;
        }
        float *cls = NULL;
        if ((s = wgnn__model_read(m, st, "embeddings.cls_token", 3, (int64_t[]){1, 1, h}, &cls))) {
            free(pos);
            free(patch_bias);
            return s;
        }
        /* the CLS row enters the patch product as a row of zeros, so that
         * product gives its bias plus its residual's row 0: that row is
         * cls_token + position 0 - the bias (wgnn__vit_build) */
        for (int64_t i = 0; i < h; i++) cls[i] = (cls[i] + pos[i]) - patch_bias[i];
        free(patch_bias);
        m->cls = cls;
        /* the grid's rows, after the CLS token's */
        memmove(pos, pos + h, (size_t)(np * h) * sizeof *pos);
    } else {
        if ((s = wgnn__model_read(m, st, "embeddings.position_embedding.weight", D2(np, h), &pos))) return s;
    }
    m->pos = pos;
    in->n_params += (uint64_t)(np + (vit ? 2 : 0)) * (uint64_t)h;

    for (int l = 0; l < in->num_layers; l++) {
        layer_names n;
        names_of(m, l, &n);
        const char *qkv_names[3] = {n.q, n.k, n.v};
        if ((s = load_qkv(m, st, qkv_names, n.qkv)) || (s = load_linear(m, st, n.o, h, h)) ||
            (s = load_norm(m, st, n.n1, h)) || (s = load_norm(m, st, n.n2, h)) ||
            (s = load_linear(m, st, n.f1, f, h)) || (s = load_linear(m, st, n.f2, h, f)))
            return s;
    }
    if (vit) {
        if ((s = load_norm(m, st, "layernorm", h))) return s;
        char pw[128];
        snprintf(pw, sizeof pw, "%spooler.dense.weight", m->prefix);
        in->has_pooler = wgnn__st_find(st, pw) != NULL; /* ViTModel(add_pooling_layer=False) has none */
        if (in->has_pooler && (s = load_linear(m, st, "pooler.dense", h, h))) return s;
        return WGNN_OK;
    }
    if ((s = load_norm(m, st, "post_layernorm", h))) return s;
    if (!in->has_pooler) return WGNN_OK;
    /* attention-pooling head: the probe's query is the same for every
     * image, so it is computed here once: q = probe @ Wq^T + bq */
    float *probe = NULL, *inw = NULL, *inb = NULL;
    if ((s = wgnn__model_read(m, st, "head.probe", 3, (int64_t[]){1, 1, h}, &probe)) ||
        (s = wgnn__model_read(m, st, "head.attention.in_proj_weight", D2(3 * h, h), &inw)) ||
        (s = wgnn__model_read(m, st, "head.attention.in_proj_bias", D1(3 * h), &inb))) {
        free(probe);
        free(inw);
        return s;
    }
    m->probe_q = malloc((size_t)h * sizeof *m->probe_q);
    if (!m->probe_q) s = wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    for (int64_t i = 0; s == WGNN_OK && i < h; i++) {
        double acc = inb[i];
        for (int64_t j = 0; j < h; j++) acc += (double)probe[j] * inw[i * h + j];
        m->probe_q[i] = (float)acc;
    }
    in->n_params += (uint64_t)h * (uint64_t)(h + 2);
    /* keys and values: rows h..3h of the input projection */
    if (s == WGNN_OK) s = add_linear_weight(m, "head.kv.weight", inw + h * h, 2 * h, h);
    if (s == WGNN_OK) s = wgnn__model_add(m, "head.kv.bias", inb + h, D1(2 * h), false);
    free(probe);
    free(inw);
    free(inb);
    if (s == WGNN_OK) s = load_linear(m, st, "head.attention.out_proj", h, h);
    if (s == WGNN_OK) s = load_norm(m, st, "head.layernorm", h);
    if (s == WGNN_OK) s = load_linear(m, st, "head.mlp.fc1", f, h);
    if (s == WGNN_OK) s = load_linear(m, st, "head.mlp.fc2", h, f);
    return s;
}

/* ---- position-embedding interpolation ----------------------------------------- */

static double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }          /* |x| <= 1 */
static double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; } /* 1 < |x| < 2 */

static void cubic_coeffs(double t, double w[4]) {
    const double a = -0.75;
    w[0] = cubic2(t + 1, a);
    w[1] = cubic1(t, a);
    w[2] = cubic1(1 - t, a);
    w[3] = cubic2(2 - t, a);
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

void wgnn__bicubic_grid(const float *src, int gh_in, int gw_in, int c, float *dst, int gh, int gw) {
    const double sy = (double)gh_in / gh, sx = (double)gw_in / gw;
    for (int y = 0; y < gh; y++) {
        double ry = sy * (y + 0.5) - 0.5;
        int iy = (int)floor(ry);
        double wy[4];
        cubic_coeffs(ry - iy, wy);
        for (int x = 0; x < gw; x++) {
            double rx = sx * (x + 0.5) - 0.5;
            int ix = (int)floor(rx);
            double wx[4];
            cubic_coeffs(rx - ix, wx);
            for (int ch = 0; ch < c; ch++) {
                double acc = 0;
                for (int j = 0; j < 4; j++) {
                    int yy = clampi(iy - 1 + j, 0, gh_in - 1);
                    double row = 0;
                    for (int i = 0; i < 4; i++) {
                        int xx = clampi(ix - 1 + i, 0, gw_in - 1);
                        row += wx[i] * src[((size_t)yy * gw_in + xx) * c + ch];
                    }
                    acc += wy[j] * row;
                }
                dst[((size_t)y * gw + x) * c + ch] = (float)acc;
            }
        }
    }
}

/* ---- graph builder ----------------------------------------------------------------- */

/* The shared helpers (models/builder.h) under short names; a weight by
 * its name in the model's table. */
typedef wgnn__gb gb;
#define gb_op_n wgnn__gb_op_n
#define gb_op wgnn__gb_op
#define gb_view wgnn__gb_view
#define gb_const wgnn__gb_const

static wgnn_model *model_of(gb *b) { return (wgnn_model *)b->user; }

static wgnn_value gb_weight(gb *b, const char *name) {
    return wgnn__gb_tensor(b, b->s == WGNN_OK ? wgnn__model_weight(model_of(b), name) : NULL, name);
}

/* The model's GELU as the GEMM epilogue's activation argument. */
static const char *gelu_arg(gb *b) {
    return strcmp(model_of(b)->gelu, "tanh") == 0 ? "activation=gelu_tanh" : "activation=gelu";
}

/* x [..., K] -> [..., N]: addmm on the weight kept as [K, N] (float32 or
 * float16; x viewed as [rows, K], the result viewed back). act (not NULL):
 * an activation argument for the product's epilogue (gelu_arg,
 * "activation=tanh"); res >= 0: a residual of the output's shape added in
 * the epilogue too (residual=true).
 * ln (not NULL): the LayerNorm of that name over the result as well, into
 * *ln_out (layer_norm=true: where the product ends in a reduce pass, that
 * pass writes both). !bias: the product alone (mm), which takes neither a
 * GELU, a residual nor a norm. */
static wgnn_value linear_ex(gb *b, const char *label, wgnn_value x, const char *name, const char *act,
                            wgnn_value res, bool bias, const char *ln, wgnn_value *ln_out) {
    char w[192], bb[192], lw[192], lb[192], eps[64];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(bb, sizeof bb, "%s.bias", name);
    const char *args[4];
    int n_args = 0;
    if (act) args[n_args++] = act;
    if (res >= 0) args[n_args++] = "residual=true";
    if (ln) {
        snprintf(lw, sizeof lw, "%s.weight", ln);
        snprintf(lb, sizeof lb, "%s.bias", ln);
        snprintf(eps, sizeof eps, "ln_eps=%.17g", model_of(b)->info.layer_norm_eps);
        args[n_args++] = "layer_norm=true";
        args[n_args++] = eps;
    }
    if (!bias && n_args > 0 && b->s == WGNN_OK)
        b->s = wgnn__err(model_of(b)->ctx, WGNN_ERR_INVALID_ARGUMENT, "model: internal: %s without its bias takes no epilogue",
                         name);
    wgnn_value outs[2] = {-1, -1};
    wgnn_desc dx;
    if (b->s != WGNN_OK || x < 0) return -1;
    if ((b->s = wgnn_graph_desc(b->g, x, &dx)) != WGNN_OK) return -1;
    wgnn_tensor *wt = wgnn__model_weight(model_of(b), w);
    if (!wt) {
        b->s = wgnn__err(model_of(b)->ctx, WGNN_ERR_INVALID_ARGUMENT, "model: internal: weight %s was not loaded", w);
        return -1;
    }
    int64_t n = wgnn_tensor_dims(wt)[1], k = dx.dims[dx.rank - 1], rows = 1;
    for (int i = 0; i + 1 < dx.rank; i++) rows *= dx.dims[i];
    wgnn_value x2 = dx.rank == 2 ? x : gb_view(b, x, 2, (int64_t[]){rows, k});
    wgnn_value r2 = res < 0 || dx.rank == 2 ? res : gb_view(b, res, 2, (int64_t[]){rows, n});
    wgnn_value in[6] = {bias ? gb_weight(b, bb) : -1, x2, gb_weight(b, w)};
    int n_in = 3;
    if (res >= 0) in[n_in++] = r2;
    if (ln) in[n_in++] = gb_weight(b, lw), in[n_in++] = gb_weight(b, lb);
    if (bias) gb_op_n(b, label ? label : name, "addmm", n_in, in, n_args, args, outs, ln ? 2 : 1);
    else outs[0] = gb_op(b, label ? label : name, "mm", 2, in + 1, 0, NULL);
    dx.dims[dx.rank - 1] = n;
    if (ln) *ln_out = dx.rank == 2 ? outs[1] : gb_view(b, outs[1], dx.rank, dx.dims);
    return dx.rank == 2 ? outs[0] : gb_view(b, outs[0], dx.rank, dx.dims);
}

static wgnn_value linear_act(gb *b, const char *label, wgnn_value x, const char *name, const char *act,
                             wgnn_value res) {
    return linear_ex(b, label, x, name, act, res, true, NULL, NULL);
}

static wgnn_value linear(gb *b, const char *label, wgnn_value x, const char *name) {
    return linear_act(b, label, x, name, NULL, -1);
}

static wgnn_value layer_norm(gb *b, wgnn_value x, const char *name) {
    char w[192], bb[192], ns[64], eps[64];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(bb, sizeof bb, "%s.bias", name);
    snprintf(ns, sizeof ns, "normalized_shape=%d", model_of(b)->info.hidden_size);
    snprintf(eps, sizeof eps, "eps=%.17g", model_of(b)->info.layer_norm_eps);
    const char *args[2] = {ns, eps};
    wgnn_value in[3] = {x, gb_weight(b, w), gb_weight(b, bb)};
    return gb_op(b, name, "layer_norm", 3, in, 2, args);
}

/* [B, T, n*H] (n stacked projections) -> n values [B, heads, T, hd]: for
 * q|k|v one qkv_rope node without rotation (even head dims), else a
 * permute and a split. */
static void split_heads(gb *b, const char *label, wgnn_value x, int64_t B, int64_t T, int n, wgnn_value *out) {
    const wgnn_model_info *in = &model_of(b)->info;
    int64_t nh = in->num_heads, hd = in->head_dim;
    if (n == 3 && hd % 2 == 0 && hd <= 2048) { /* qkv_rope's head dims */
        char h[48], hk[48];
        snprintf(h, sizeof h, "num_heads=%lld", (long long)nh);
        snprintf(hk, sizeof hk, "num_kv_heads=%lld", (long long)nh);
        const char *args[2] = {h, hk};
        wgnn_value x3 = gb_view(b, x, 3, (int64_t[]){B, T, 3 * nh * hd});
        gb_op_n(b, label, "qkv_rope", 1, &x3, 2, args, out, 3);
        return;
    }
    wgnn_value v5 = gb_view(b, x, 5, (int64_t[]){B, T, n, nh, hd});
    const char *perm[1] = {"dims=2,0,3,1,4"};
    wgnn_value p = gb_op(b, label, "permute", 1, &v5, 1, perm);
    char sizes[64];
    snprintf(sizes, sizeof sizes, "split_sizes=%s", n == 3 ? "1,1,1" : "1,1");
    const char *sargs[2] = {sizes, "dim=0"};
    wgnn_value parts[3] = {-1, -1, -1};
    gb_op_n(b, label, "split_with_sizes", 1, &p, 2, sargs, parts, n);
    for (int i = 0; i < n; i++) out[i] = gb_view(b, parts[i], 4, (int64_t[]){B, nh, T, hd});
}

/* Block l on x, whose first LayerNorm h is given (the residual product
 * before it wrote it; -1: a node of its own here). *h_next gets next_ln of
 * the block's output the same way (NULL: none, *h_next -1): the out
 * projection and fc2 take x's next norm as their second output
 * (layer_norm=true), so that each LayerNorm runs in the reduce pass of
 * the product before it where that product has one (docs/PERFORMANCE.md,
 * session 10); WGNN_LN_FUSED=0 keeps every norm a node of its own. */
static wgnn_value block(gb *b, int l, wgnn_value x, wgnn_value h, int64_t B, int64_t T, const char *next_ln,
                        wgnn_value *h_next) {
    const wgnn_model_info *in = &model_of(b)->info;
    layer_names n;
    names_of(model_of(b), l, &n);
    const char *a = n.a;
    char lab[160];
    bool fuse = !model_of(b)->ctx->knobs.no_ln_fused;
    if (h < 0) h = layer_norm(b, x, n.n1);
    snprintf(lab, sizeof lab, "%s.attention.qkv", a);
    /* q|k|v read in place and heads merged by the attention kernel itself
     * when the projection fits one storage binding; else (or with
     * WGNN_SDPA_PACKED=0) heads split out, attention, heads merged. The
     * packed attention takes the projection's bias itself where the GEMM
     * would run that bias as a pass of its own over the output
     * (wgnn__gemm_bias_pass_alone: batch 32 on the H200 took the product
     * from 0.606 to 0.571 ms so, session 8; since session 24 the 128 x 128
     * tile takes the bias in its accumulators at the plain product's speed,
     * 0.572 ms on an H100, and the bias stays in the product; not at batch
     * 8, where the wave plan puts the biased product on the 128 x 128 tile
     * and the plain one would take 64 x 64, 0.185 -> 0.196 ms;
     * docs/PERFORMANCE.md); WGNN_SDPA_PACKED=nobias keeps it in the
     * product, =bias moves it always (tests) */
    const wgnn_context *ctx = model_of(b)->ctx;
    uint64_t qkv_bytes = (uint64_t)(B * T * 3 * in->hidden_size) * 4u;
    bool packed = in->head_dim % 4 == 0 && qkv_bytes <= ctx->limits.maxStorageBufferBindingSize &&
                  !ctx->knobs.no_sdpa_packed;
    bool f16 = model_of(b)->weights == WGNN_MODEL_WEIGHTS_F16;
    bool fold = packed && ctx->knobs.sdpa_packed_bias != 0 &&
                (ctx->knobs.sdpa_packed_bias == 1 ||
                 wgnn__gemm_bias_pass_alone(ctx, (uint32_t)(B * T), (uint32_t)(3 * in->hidden_size),
                                            (uint32_t)in->hidden_size, false, f16));
    wgnn_value p = linear_ex(b, lab, h, n.qkv, NULL, -1, !fold, NULL, NULL);
    wgnn_value att;
    snprintf(lab, sizeof lab, "%s.attention.sdpa", a);
    if (packed) {
        wgnn_value in2[2] = {gb_view(b, p, 5, (int64_t[]){B, T, 3, in->num_heads, in->head_dim}), -1};
        if (fold) {
            char bn[192];
            snprintf(bn, sizeof bn, "%s.bias", n.qkv);
            in2[1] = gb_weight(b, bn);
        }
        att = gb_op(b, lab, "sdpa_qkvpacked", fold ? 2 : 1, in2, 0, NULL);
    } else {
        wgnn_value q[3];
        char hl[160];
        snprintf(hl, sizeof hl, "%s.attention.heads", a);
        split_heads(b, hl, p, B, T, 3, q);
        att = gb_op(b, lab, "sdpa", 3, q, 0, NULL);
        snprintf(hl, sizeof hl, "%s.attention.merge", a);
        const char *perm[1] = {"dims=0,2,1,3"};
        att = gb_op(b, hl, "permute", 1, &att, 1, perm);
    }
    att = gb_view(b, att, 3, (int64_t[]){B, T, in->hidden_size});
    /* x + the out projection (the residual in its epilogue), and its norm */
    h = -1;
    x = linear_ex(b, n.o, att, n.o, NULL, x, true, fuse ? n.n2 : NULL, &h);
    if (h < 0) h = layer_norm(b, x, n.n2);
    h = linear_act(b, n.f1, h, n.f1, gelu_arg(b), -1); /* the GELU in fc1's epilogue */
    *h_next = -1;
    x = linear_ex(b, n.f2, h, n.f2, NULL, x, true, fuse ? next_ln : NULL, h_next);
    if (*h_next < 0 && next_ln) *h_next = layer_norm(b, x, next_ln);
    return x;
}

wgnn_status wgnn__vit_build(wgnn_model *m, int64_t B, int64_t H, int64_t W) {
    const wgnn_model_info *in = &m->info;
    const bool vit = m->arch == WGNN__ARCH_VIT;
    const int64_t C = in->num_channels, p = in->patch_size, hid = in->hidden_size;
    const int64_t gh = H / p, gw = W / p, np = gh * gw, T = np + (vit ? 1 : 0);
    gb b = {m->ctx, NULL, WGNN_OK, m};
    b.s = wgnn_graph_create(m->ctx, &b.g);
    m->g = b.g;
    if (b.s != WGNN_OK) return b.s;

    /* patches: [B,C,gh,p,gw,p] -> [B,gh,gw,C,p,p] -> [B, np, C*p*p] -> linear */
    if (b.s == WGNN_OK) b.s = wgnn_graph_input(b.g, "pixel_values", WGNN_F32, 4, (int64_t[]){B, C, H, W}, &m->v_in);
    wgnn_value x = gb_view(&b, b.s == WGNN_OK ? m->v_in : -1, 6, (int64_t[]){B, C, gh, p, gw, p});
    const char *perm[1] = {"dims=0,2,4,1,3,5"};
    x = gb_op(&b, "embeddings.patches", "permute", 1, &x, 1, perm);
    x = gb_view(&b, x, 3, (int64_t[]){B, np, C * p * p});

    /* position embeddings, interpolated when the grid differs, one copy a
     * batch element: the patch product's residual (added in its epilogue,
     * not by a pass of its own) */
    float *pos = m->pos;
    if (gh != m->pos_grid || gw != m->pos_grid) {
        pos = malloc((size_t)(np * hid) * sizeof *pos);
        if (!pos) b.s = wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
        else wgnn__bicubic_grid(m->pos, m->pos_grid, m->pos_grid, (int)hid, pos, (int)gh, (int)gw);
    }
    /* ViT: a row of zeros ahead of each image's patches, the CLS row's
     * place: the product gives it its bias plus the residual's row 0,
     * cls_token + position 0 - bias (m->cls), so no cat follows and the
     * product writes the first block's first norm for every row */
    if (vit) {
        const char *pad[1] = {"pad=0,0,1,0"};
        x = gb_op(&b, "embeddings.cls_row", "constant_pad_nd", 1, &x, 1, pad);
    }
    float *rep = pos ? malloc((size_t)(B * T * hid) * sizeof *rep) : NULL;
    if (!rep && b.s == WGNN_OK) b.s = wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
    for (int64_t i = 0; rep && i < B; i++) {
        float *r = rep + i * T * hid;
        if (vit) memcpy(r, m->cls, (size_t)hid * sizeof *rep);
        memcpy(r + (T - np) * hid, pos, (size_t)(np * hid) * sizeof *rep);
    }
    wgnn_value pv = rep ? gb_const(&b, rep, 3, (int64_t[]){B, T, hid}) : -1;
    free(rep);
    if (pos != m->pos) free(pos);
    wgnn_value h1 = -1; /* the next block's first norm */
    layer_names n0;
    if (in->num_layers > 0) names_of(m, 0, &n0);
    const char *first_ln = in->num_layers > 0 && !m->ctx->knobs.no_ln_fused ? n0.n1 : NULL;
    x = linear_ex(&b, "embeddings.patch_embedding", x, "patch", NULL, pv, true, first_ln, &h1);
    /* each block's fc2 also writes the next block's first norm (the last
     * block's: the final one) */
    const char *final_ln = vit ? "layernorm" : "post_layernorm";
    for (int l = 0; l < in->num_layers; l++) {
        layer_names nx;
        if (l + 1 < in->num_layers) names_of(m, l + 1, &nx);
        x = block(&b, l, x, h1, B, T, l + 1 < in->num_layers ? nx.n1 : final_ln, &h1);
    }
    wgnn_value last = in->num_layers > 0 ? h1 : layer_norm(&b, x, final_ln);
    if (b.s == WGNN_OK) b.s = wgnn_graph_output(b.g, last);
    m->v_last = last;
    m->v_pool = -1;

    if (in->has_pooler && vit) {
        const char *sl[3] = {"dim=1", "start=0", "end=1"};
        wgnn_value c0 = gb_op(&b, "pooler.cls", "slice", 1, &last, 3, sl);
        c0 = gb_view(&b, c0, 2, (int64_t[]){B, hid});
        m->v_pool = linear_act(&b, "pooler.dense", c0, "pooler.dense", "activation=tanh", -1); /* tanh in the epilogue */
    } else if (in->has_pooler) {
        /* attention pooling: one query (the probe's, per head) over the tokens */
        wgnn_value kv = linear(&b, "head.attention.kv", last, "head.kv");
        wgnn_value kvs[2] = {-1, -1};
        split_heads(&b, "head.attention.heads", kv, B, T, 2, kvs);
        float *q = malloc((size_t)(B * hid) * sizeof *q);
        if (!q && b.s == WGNN_OK) b.s = wgnn__err(m->ctx, WGNN_ERR_OUT_OF_MEMORY, "model: out of host memory");
        for (int64_t i = 0; q && i < B; i++) memcpy(q + i * hid, m->probe_q, (size_t)hid * sizeof *q);
        wgnn_value qv = q ? gb_const(&b, q, 4, (int64_t[]){B, in->num_heads, 1, in->head_dim}) : -1;
        free(q);
        wgnn_value att_in[3] = {qv, kvs[0], kvs[1]};
        wgnn_value att = gb_op(&b, "head.attention.sdpa", "sdpa", 3, att_in, 0, NULL);
        att = gb_view(&b, att, 2, (int64_t[]){B, hid}); /* [B, heads, 1, hd] is [B, 1, heads, hd] */
        wgnn_value h = -1;
        wgnn_value r = linear_ex(&b, "head.attention.out_proj", att, "head.attention.out_proj", NULL, -1, true,
                                 m->ctx->knobs.no_ln_fused ? NULL : "head.layernorm", &h);
        if (h < 0) h = layer_norm(&b, r, "head.layernorm");
        h = linear_act(&b, "head.mlp.fc1", h, "head.mlp.fc1", gelu_arg(&b), -1);
        m->v_pool = linear_act(&b, "head.mlp.fc2", h, "head.mlp.fc2", NULL, r);
    }
    if (m->v_pool >= 0 && b.s == WGNN_OK) b.s = wgnn_graph_output(b.g, m->v_pool);
    if (b.s == WGNN_OK) b.s = wgnn_graph_build(b.g);
    return b.s;
}
