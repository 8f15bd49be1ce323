/* test_models.c - ViT and SigLIP vision encoders from the tiny random-init
 * Hugging Face folders in tests/models/ (made by tests/models/make_fixtures.py)
 * against PyTorch's stored outputs: a fixed input, an image through the HF
 * image processor, batch and size changes, f16 weights, broken folders. */
#define _GNU_SOURCE /* mkdtemp, memmem */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ATOL 1e-4
#define RTOL 1e-3

static char g_root[1024];

static void path_of(char *buf, size_t cap, const char *model, const char *file) {
    snprintf(buf, cap, "%s/tests/models/%s/%s", g_root, model, file);
}

static bool load_npy(const char *model, const char *file, wgnn_npy *out) {
    char p[1200], err[512];
    path_of(p, sizeof p, model, file);
    wgnn_status s = wgnn_npy_load(p, out, err, sizeof err);
    CHECK(s == WGNN_OK, "%s", err);
    return s == WGNN_OK;
}

static void compare_output(wgnn_model *m, wgnn_model_output which, const wgnn_npy *ref, uint64_t offset, int64_t batch,
                           double atol, double rtol, const char *what) {
    wgnn_desc d;
    wgnn_status s = wgnn_model_output_desc(m, which, &d);
    CHECK(s == WGNN_OK, "%s: output desc", what);
    if (s != WGNN_OK) return;
    CHECK(d.rank == ref->rank && d.dims[0] == batch, "%s: rank %d dims0 %lld", what, d.rank, (long long)d.dims[0]);
    for (int i = 1; i < d.rank && i < ref->rank; i++) CHECK(d.dims[i] == ref->dims[i], "%s: dim %d", what, i);
    uint64_t n = 1;
    for (int i = 0; i < d.rank; i++) n *= (uint64_t)d.dims[i];
    float *got = malloc(n * sizeof *got);
    s = wgnn_model_read_output(m, which, got, n * sizeof *got);
    CHECK(s == WGNN_OK, "%s: read", what);
    double max_abs = 0;
    int ok = s == WGNN_OK && tu_close(got, (const float *)ref->data + offset, n, atol, rtol, &max_abs);
    CHECK(ok, "%s: max |diff| %.3g", what, max_abs);
    printf("  %-48s max |diff| %.3g\n", what, max_abs);
    free(got);
}

/* The fixed input (batch 2) and, for the folders that have them, the image
 * through the model's preprocessor (batch 1). */
static void check_model(wgnn_context *ctx, const char *name, wgnn_model_weights wmode, double atol, double rtol) {
    char dir[1100], what[160];
    snprintf(dir, sizeof dir, "%s/tests/models/%s", g_root, name);
    wgnn_model_options mo = {wmode};
    wgnn_model *m = NULL;
    wgnn_status s = wgnn_model_load(ctx, dir, &mo, &m);
    CHECK(s == WGNN_OK, "%s: load: %s", name, wgnn_context_error(ctx));
    if (s != WGNN_OK) return;
    wgnn_model_info mi;
    wgnn_model_get_info(m, &mi);
    CHECK(mi.hidden_size == 32 && mi.num_layers == 2 && mi.num_heads == 4 && mi.patch_size == 8 && mi.has_pooler,
          "%s: info", name);
    const char *tag = wmode == WGNN_MODEL_WEIGHTS_F16 ? "f16 weights" : "f32";

    wgnn_npy x, last, pool, ipx, ilast, ipool;
    if (load_npy(name, "input.npy", &x) && load_npy(name, "last_hidden_state.npy", &last) &&
        load_npy(name, "pooler_output.npy", &pool)) {
        s = wgnn_model_encode(m, x.data, x.dims[0], x.dims[2], x.dims[3], 0);
        CHECK(s == WGNN_OK, "%s: encode: %s", name, wgnn_context_error(ctx));
        snprintf(what, sizeof what, "%s %s last_hidden_state", name, tag);
        compare_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, &last, 0, x.dims[0], atol, rtol, what);
        snprintf(what, sizeof what, "%s %s pooler_output", name, tag);
        compare_output(m, WGNN_MODEL_POOLER_OUTPUT, &pool, 0, x.dims[0], atol, rtol, what);

        /* batch 1 (the second image) on the same model: another graph */
        uint64_t per = (uint64_t)(x.dims[1] * x.dims[2] * x.dims[3]);
        s = wgnn_model_encode(m, (const float *)x.data + per, 1, x.dims[2], x.dims[3], 0);
        CHECK(s == WGNN_OK, "%s: encode batch 1: %s", name, wgnn_context_error(ctx));
        snprintf(what, sizeof what, "%s %s batch 1 (item 2)", name, tag);
        compare_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, &last, (uint64_t)(last.dims[1] * last.dims[2]), 1, atol, rtol,
                       what);
        /* another image size: position embeddings interpolated. No stored
         * reference: the output must have the right shape and be finite. */
        int64_t h2 = 48, w2 = 40;
        float *big = malloc((size_t)(3 * h2 * w2) * sizeof *big);
        tu_fill(big, (size_t)(3 * h2 * w2), -1, 1);
        s = wgnn_model_encode(m, big, 1, h2, w2, 0);
        CHECK(s == WGNN_OK, "%s: encode 48x40: %s", name, wgnn_context_error(ctx));
        wgnn_desc d;
        if (s == WGNN_OK && wgnn_model_output_desc(m, WGNN_MODEL_LAST_HIDDEN_STATE, &d) == WGNN_OK) {
            int64_t t = (h2 / 8) * (w2 / 8) + mi.has_cls;
            CHECK(d.rank == 3 && d.dims[0] == 1 && d.dims[1] == t && d.dims[2] == 32, "%s 48x40: shape", name);
            float *o = malloc((size_t)t * 32 * sizeof *o);
            CHECK(wgnn_model_read_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, o, (size_t)t * 32 * sizeof *o) == WGNN_OK,
                  "read");
            int finite = 1;
            for (int64_t i = 0; i < t * 32; i++) finite &= isfinite(o[i]);
            CHECK(finite, "%s 48x40: finite", name);
            free(o);
        }
        free(big);
        /* back to the fixture's shape: results as before */
        s = wgnn_model_encode(m, x.data, x.dims[0], x.dims[2], x.dims[3], 0);
        CHECK(s == WGNN_OK, "%s: encode again", name);
        snprintf(what, sizeof what, "%s %s last_hidden_state again", name, tag);
        compare_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, &last, 0, x.dims[0], atol, rtol, what);
        wgnn_npy_free(&x);
        wgnn_npy_free(&last);
        wgnn_npy_free(&pool);
    }
    if (load_npy(name, "image_pixel_values.npy", &ipx) && load_npy(name, "image_last_hidden_state.npy", &ilast) &&
        load_npy(name, "image_pooler_output.npy", &ipool)) {
        char img[1100], pp[1100], err[512];
        snprintf(img, sizeof img, "%s/tests/models/image.png", g_root);
        path_of(pp, sizeof pp, name, "preprocessor_config.json");
        float *px = NULL;
        int64_t h = 0, w = 0;
        s = wgnn_image_preprocess_file(img, pp, &px, &h, &w, err, sizeof err);
        CHECK(s == WGNN_OK, "%s: preprocess: %s", name, err);
        if (s == WGNN_OK) {
            CHECK(h == ipx.dims[2] && w == ipx.dims[3], "%s: preprocessed size %lldx%lld", name, (long long)h,
                  (long long)w);
            /* wgnn resizes as Pillow does (bit-exact: tests/test_image.c);
             * transformers 5 resizes with torchvision, whose antialiased
             * filters round some pixels one uint8 level the other way:
             * allow one level (1/255, divided by the smallest std 0.2). */
            double max_abs = 0;
            CHECK(tu_close(px, ipx.data, ipx.numel, 1.0 / 255 / 0.2 + 1e-5, 0, &max_abs),
                  "%s: pixel_values max |diff| %.3g", name, max_abs);
            size_t off = 0;
            for (uint64_t i = 0; i < ipx.numel; i++) off += fabsf(px[i] - ((const float *)ipx.data)[i]) > 1e-5f;
            printf("  %-48s max |diff| %.3g (%zu of %llu values one uint8 level off)\n",
                   "image.png pixel_values vs HF's processor", max_abs, off, (unsigned long long)ipx.numel);
            /* the Pillow path (make_pil_refs.py): exact preprocessing, and
             * the encoder on wgnn's own pixels */
            wgnn_npy ppx, plast, ppool;
            char pth[1200];
            path_of(pth, sizeof pth, name, "pil_pixel_values.npy");
            if (access(pth, R_OK) == 0 && load_npy(name, "pil_pixel_values.npy", &ppx)) {
                CHECK(tu_close(px, ppx.data, ppx.numel, 1e-6, 0, &max_abs), "%s: Pillow-path pixel_values max |diff| %.3g",
                      name, max_abs);
                printf("  %-48s max |diff| %.3g\n", "image.png pixel_values vs Pillow's path", max_abs);
                wgnn_npy_free(&ppx);
                s = wgnn_model_encode(m, px, 1, h, w, 0);
                CHECK(s == WGNN_OK, "%s: encode image: %s", name, wgnn_context_error(ctx));
                if (load_npy(name, "pil_last_hidden_state.npy", &plast)) {
                    snprintf(what, sizeof what, "%s %s image (wgnn's pixels) last_hidden_state", name, tag);
                    compare_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, &plast, 0, 1, atol, rtol, what);
                    wgnn_npy_free(&plast);
                }
                path_of(pth, sizeof pth, name, "pil_pooler_output.npy");
                if (access(pth, R_OK) == 0 && load_npy(name, "pil_pooler_output.npy", &ppool)) {
                    snprintf(what, sizeof what, "%s %s image (wgnn's pixels) pooler_output", name, tag);
                    compare_output(m, WGNN_MODEL_POOLER_OUTPUT, &ppool, 0, 1, atol, rtol, what);
                    wgnn_npy_free(&ppool);
                }
            }
            /* the encoder on the image as HF preprocessed it */
            s = wgnn_model_encode(m, ipx.data, 1, h, w, 0);
            CHECK(s == WGNN_OK, "%s: encode image: %s", name, wgnn_context_error(ctx));
            snprintf(what, sizeof what, "%s %s image last_hidden_state", name, tag);
            compare_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, &ilast, 0, 1, atol, rtol, what);
            snprintf(what, sizeof what, "%s %s image pooler_output", name, tag);
            compare_output(m, WGNN_MODEL_POOLER_OUTPUT, &ipool, 0, 1, atol, rtol, what);
            free(px);
        }
        wgnn_npy_free(&ipx);
        wgnn_npy_free(&ilast);
        wgnn_npy_free(&ipool);
    }
    wgnn_model_destroy(m);
}

/* ---- broken folders ------------------------------------------------------------ */

/* A folder holding the vit fixture's files with config.json's text edited
 * (find -> repl, when find is not NULL) and model.safetensors cut to
 * st_len bytes (0: whole). */
/* wgnn_model_encode_submit / _fetch: two runs in flight, outputs as the
 * stored references and as wgnn_model_encode's, and the misuse errors. */
static void pipelined(wgnn_context *ctx, const char *name) {
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/tests/models/%s", g_root, name);
    wgnn_model *m = NULL;
    wgnn_npy x, last, pool;
    if (wgnn_model_load(ctx, dir, NULL, &m) != WGNN_OK) {
        CHECK(0, "%s: load: %s", name, wgnn_context_error(ctx));
        return;
    }
    if (!load_npy(name, "input.npy", &x) || !load_npy(name, "last_hidden_state.npy", &last) ||
        !load_npy(name, "pooler_output.npy", &pool)) {
        wgnn_model_destroy(m);
        return;
    }
    int64_t B = x.dims[0], H = x.dims[2], W = x.dims[3];
    float *x2 = malloc((size_t)x.numel * sizeof *x2);
    for (uint64_t i = 0; i < x.numel; i++) x2[i] = 0.5f * ((const float *)x.data)[i] - 0.25f;
    size_t nl = (size_t)last.numel * sizeof(float), np = (size_t)pool.numel * sizeof(float);
    float *want2 = malloc(nl), *want2p = malloc(np), *got = malloc(nl), *gotp = malloc(np);
    /* the second input's outputs from a plain encode */
    CHECK(wgnn_model_encode(m, x2, B, H, W, 0) == WGNN_OK, "%s: encode x2", name);
    CHECK(wgnn_model_read_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, want2, nl) == WGNN_OK, "read");
    CHECK(wgnn_model_read_output(m, WGNN_MODEL_POOLER_OUTPUT, want2p, np) == WGNN_OK, "read pooled");
    double err = 0;

    CHECK(wgnn_model_encode_fetch(m, got, nl, gotp, np) == WGNN_ERR_INVALID_ARGUMENT, "%s: fetch with none in flight",
          name);
    CHECK(wgnn_model_encode_submit(m, x.data, B, H, W) == WGNN_OK, "%s: submit 0: %s", name, wgnn_context_error(ctx));
    CHECK(wgnn_model_encode_submit(m, x2, B, H, W) == WGNN_OK, "%s: submit 1: %s", name, wgnn_context_error(ctx));
    CHECK(wgnn_model_encode_submit(m, x.data, B, H, W) == WGNN_ERR_INVALID_ARGUMENT, "%s: a third submit", name);
    CHECK(strstr(wgnn_context_error(ctx), "two runs are in flight") != NULL, "message: %s", wgnn_context_error(ctx));
    CHECK(wgnn_model_encode(m, x.data, B, H, W, 0) == WGNN_ERR_INVALID_ARGUMENT, "%s: encode with runs in flight",
          name);
    CHECK(wgnn_model_read_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, got, nl) == WGNN_ERR_INVALID_ARGUMENT &&
              strstr(wgnn_context_error(ctx), "not fetched yet") != NULL,
          "%s: read_output with runs in flight: %s", name, wgnn_context_error(ctx));
    CHECK(wgnn_model_encode_fetch(m, got, nl - 4, NULL, 0) == WGNN_ERR_INVALID_ARGUMENT, "%s: fetch, wrong bytes",
          name);
    /* run 0 is still in flight after the bad fetch */
    CHECK(wgnn_model_encode_fetch(m, got, nl, gotp, np) == WGNN_OK, "%s: fetch 0: %s", name, wgnn_context_error(ctx));
    CHECK(tu_close(got, last.data, last.numel, ATOL, RTOL, &err), "%s: run 0 last_hidden_state: %.3g", name, err);
    CHECK(tu_close(gotp, pool.data, pool.numel, ATOL, RTOL, &err), "%s: run 0 pooler_output: %.3g", name, err);
    /* another shape while run 1 is in flight */
    CHECK(wgnn_model_encode_submit(m, x.data, 1, H, W) == WGNN_ERR_INVALID_ARGUMENT, "%s: another shape in flight",
          name);
    CHECK(strstr(wgnn_context_error(ctx), "in flight") != NULL, "message: %s", wgnn_context_error(ctx));
    CHECK(wgnn_model_encode_submit(m, x.data, B, H, W) == WGNN_OK, "%s: submit 2", name);
    CHECK(wgnn_model_encode_fetch(m, got, nl, gotp, np) == WGNN_OK, "%s: fetch 1", name);
    CHECK(!memcmp(got, want2, nl) && !memcmp(gotp, want2p, np), "%s: run 1 equals wgnn_model_encode's outputs", name);
    memset(got, 0, nl);
    CHECK(wgnn_model_encode_fetch(m, got, nl, NULL, 0) == WGNN_OK, "%s: fetch 2 (no pooler_output)", name);
    CHECK(tu_close(got, last.data, last.numel, ATOL, RTOL, &err), "%s: run 2 last_hidden_state: %.3g", name, err);
    printf("  %-48s max |diff| %.3g\n", "pipelined runs", err);
    /* nothing in flight: the plain calls and another shape work again */
    CHECK(wgnn_model_encode_submit(m, x.data, 1, H, W) == WGNN_OK, "%s: submit batch 1", name);
    CHECK(wgnn_model_encode_fetch(m, NULL, 0, NULL, 0) == WGNN_OK, "%s: fetch dropping the outputs", name);
    CHECK(wgnn_model_encode(m, x.data, B, H, W, 0) == WGNN_OK, "%s: encode after the pipeline", name);
    /* destroyed with two runs in flight (ASan: nothing leaked or touched after) */
    CHECK(wgnn_model_encode_submit(m, x.data, B, H, W) == WGNN_OK && wgnn_model_encode_submit(m, x2, B, H, W) == WGNN_OK,
          "%s: two more submits", name);
    free(x2);
    free(want2);
    free(want2p);
    free(got);
    free(gotp);
    wgnn_npy_free(&x);
    wgnn_npy_free(&last);
    wgnn_npy_free(&pool);
    wgnn_model_destroy(m);
}

static void make_folder(const char *dir, const char *model, const char *find, const char *repl, size_t st_len) {
    char src[1200], dst[1200];
    size_t len;
    mkdir(dir, 0700);
    path_of(src, sizeof src, model, "config.json");
    char *cfg = tu_read_file(src, &len);
    snprintf(dst, sizeof dst, "%s/config.json", dir);
    if (cfg && find) {
        char *at = strstr(cfg, find);
        if (at) {
            size_t out_len = len - strlen(find) + strlen(repl);
            char *o = malloc(out_len + 1);
            size_t pre = (size_t)(at - cfg);
            memcpy(o, cfg, pre);
            memcpy(o + pre, repl, strlen(repl));
            memcpy(o + pre + strlen(repl), at + strlen(find), len - pre - strlen(find));
            tu_write_file(dst, o, out_len);
            free(o);
        }
    } else if (cfg) {
        tu_write_file(dst, cfg, len);
    }
    free(cfg);
    path_of(src, sizeof src, model, "model.safetensors");
    char *st = tu_read_file(src, &len);
    snprintf(dst, sizeof dst, "%s/model.safetensors", dir);
    if (st) tu_write_file(dst, st, st_len ? st_len : len);
    free(st);
}

static void expect_fail(wgnn_context *ctx, const char *dir, const char *what, const char *needle) {
    wgnn_model *m = (wgnn_model *)1;
    wgnn_status s = wgnn_model_load(ctx, dir, NULL, &m);
    const char *msg = wgnn_context_error(ctx);
    CHECK(s != WGNN_OK && m == NULL, "%s: loaded", what);
    CHECK(strstr(msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, msg, needle);
    printf("  %-24s -> %s\n", what, msg);
    if (s == WGNN_OK) wgnn_model_destroy(m);
}

static void broken_folders(wgnn_context *ctx) {
    char tmpl[] = "/tmp/wgnn_models_XXXXXX";
    char *root = mkdtemp(tmpl);
    CHECK(root != NULL, "mkdtemp");
    if (!root) return;
    struct {
        const char *name, *find, *repl;
        size_t st_len;
        const char *needle;
    } cases[] = {
        {"unknown_type", "\"model_type\": \"vit\"", "\"model_type\": \"bert\"", 0, "bert"},
        {"bad_hidden", "\"hidden_size\": 32", "\"hidden_size\": 33", 0, "hidden_size"},
        {"string_hidden", "\"hidden_size\": 32", "\"hidden_size\": \"abc\"", 0, "hidden_size"},
        {"bad_act", "\"hidden_act\": \"gelu\"", "\"hidden_act\": \"swish\"", 0, "swish"},
        {"more_layers", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3", 0, "encoder.layer.2."},
        {"fewer_layers", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1", 0, "belongs to layer 1"},
        {"huge_image", "\"image_size\": 32", "\"image_size\": 65536", 0, "position_embeddings"},
        {"mis_shaped", "\"intermediate_size\": 64", "\"intermediate_size\": 48", 0, "intermediate.dense.weight"},
        {"truncated", NULL, NULL, 5000, "model.safetensors"},
        {"tiny_file", NULL, NULL, 5, "model.safetensors"},
        {"bad_json", "{", "{{", 0, "config.json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, "%s/%s", root, cases[i].name);
        make_folder(dir, "vit", cases[i].find, cases[i].repl, cases[i].st_len);
        expect_fail(ctx, dir, cases[i].name, cases[i].needle);
        tu_rm_folder(dir);
    }
    /* a SigLIP config over ViT weights: the first missing tensor is named */
    char dir[256], src[1200], dst[1200];
    size_t len;
    snprintf(dir, sizeof dir, "%s/not_siglip", root);
    make_folder(dir, "vit", NULL, NULL, 0);
    path_of(src, sizeof src, "siglip", "config.json");
    char *cfg = tu_read_file(src, &len);
    snprintf(dst, sizeof dst, "%s/config.json", dir);
    if (cfg) tu_write_file(dst, cfg, len);
    free(cfg);
    expect_fail(ctx, dir, "siglip_config_vit_weights", "embeddings.patch_embedding.weight");
    tu_rm_folder(dir);
    snprintf(dir, sizeof dir, "%s/missing", root);
    expect_fail(ctx, dir, "no_folder", "config.json");
    rmdir(root);

    /* bad encode arguments on a good model */
    char good[1100];
    snprintf(good, sizeof good, "%s/tests/models/vit", g_root);
    wgnn_model *m = NULL;
    if (wgnn_model_load(ctx, good, NULL, &m) == WGNN_OK) {
        float px[3 * 32 * 36] = {0};
        CHECK(wgnn_model_encode(m, px, 1, 32, 36, 0) == WGNN_ERR_INVALID_ARGUMENT, "36 not a multiple of 8");
        CHECK(strstr(wgnn_context_error(ctx), "patch size") != NULL, "message: %s", wgnn_context_error(ctx));
        CHECK(wgnn_model_encode(m, NULL, 1, 32, 32, 0) == WGNN_ERR_INVALID_ARGUMENT, "NULL pixels");
        CHECK(wgnn_model_encode(m, px, 0, 32, 32, 0) == WGNN_ERR_INVALID_ARGUMENT, "batch 0");
        wgnn_desc d;
        CHECK(wgnn_model_output_desc(m, WGNN_MODEL_LAST_HIDDEN_STATE, &d) != WGNN_OK, "no output before encode");
        CHECK(wgnn_model_read_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, px, sizeof px) == WGNN_ERR_INVALID_ARGUMENT &&
                  strstr(wgnn_context_error(ctx), "wgnn_model_read_output: nothing encoded yet"),
              "read before encode names the call: %s", wgnn_context_error(ctx));
        CHECK(wgnn_model_encode(m, px, 1, 32, 32, 0) == WGNN_OK, "encode zeros");
        float small[4];
        CHECK(wgnn_model_read_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, small, sizeof small) != WGNN_OK,
              "read with the wrong byte count");
        wgnn_model_destroy(m);
    }
    /* preprocess errors */
    char img[1100], pp[1100], err[512];
    float *p = NULL;
    int64_t h, w;
    snprintf(img, sizeof img, "%s/tests/models/config_is_not_an_image.png", g_root);
    path_of(pp, sizeof pp, "vit", "preprocessor_config.json");
    CHECK(wgnn_image_preprocess_file(img, pp, &p, &h, &w, err, sizeof err) != WGNN_OK && p == NULL,
          "missing image");
    CHECK(strstr(err, "config_is_not_an_image.png") != NULL, "message names the image: %s", err);
    path_of(img, sizeof img, "vit", "config.json");
    CHECK(wgnn_image_preprocess_file(img, pp, &p, &h, &w, err, sizeof err) != WGNN_OK && p == NULL,
          "a JSON file as image");
    printf("  %-24s -> %s\n", "json_as_image", err);
}

int main(int argc, char **argv) {
    /* the source tree: argv[1], $WGNN_SOURCE_DIR, or where it was built */
    const char *root = argc > 1 ? argv[1] : getenv("WGNN_SOURCE_DIR");
    snprintf(g_root, sizeof g_root, "%s", root ? root : WGNN_SOURCE_DIR);
    wgnn_context *ctx = tu_context();
    check_model(ctx, "vit", WGNN_MODEL_WEIGHTS_F32, ATOL, RTOL);
    check_model(ctx, "vit_bf16", WGNN_MODEL_WEIGHTS_F32, ATOL, RTOL);
    check_model(ctx, "siglip", WGNN_MODEL_WEIGHTS_F32, ATOL, RTOL);
    /* float16 linear weights: the weights' own rounding (2^-11 relative) sets the bound */
    check_model(ctx, "vit", WGNN_MODEL_WEIGHTS_F16, 2e-2, 2e-2);
    check_model(ctx, "siglip", WGNN_MODEL_WEIGHTS_F16, 2e-2, 2e-2);
    pipelined(ctx, "vit");
    pipelined(ctx, "siglip");
    broken_folders(ctx);
    wgnn_context_destroy(ctx);
    return tu_finish();
}
