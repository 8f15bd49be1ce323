/* cmd_run.c - `wgnn run`: a vision encoder from a Hugging Face folder on
 * images or a pixel_values .npy; outputs, timing, profile and agreement
 * with stored reference outputs. */
#include "args.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char k_usage_run[] =
    "usage: wgnn [global options] run --model DIR (--image FILE [--image FILE ...] | --input X.npy) [options]\n"
    "  runs the vision encoder (ViTModel, SiglipVisionModel) of a Hugging Face folder\n"
    "  (config.json, model.safetensors or a sharded index, preprocessor_config.json)\n"
    "options:\n"
    "  --image FILE       PNG or JPEG, preprocessed as preprocessor_config.json says;\n"
    "                     repeat for a batch (every image gives the same size)\n"
    "  --input FILE       pixel_values [B, C, H, W] float32 .npy (already preprocessed)\n"
    "  --out FILE         last_hidden_state [B, T, hidden] as .npy\n"
    "  --pooled-out FILE  pooler_output [B, hidden] as .npy\n"
    "  --weights W        f32 (default) or f16 (linear weights stored as float16)\n"
    "  --iters N          run N times (default 1) and report the median wall time; then (N > 1,\n"
    "                     N more runs pipelined, two in flight, outputs read back; then N runs of\n"
    "                     the graph alone, input left on the GPU and outputs not read back)\n"
    "  --profile          GPU time per node, sorted, with total GPU time, wall time and memory\n"
    "  --ref FILE         compare last_hidden_state with this .npy (atol 1e-4, rtol 1e-3; exit 3 on mismatch)\n"
    "  --pooled-ref FILE  the same for pooler_output\n"
    "  --atol A, --rtol R tolerances of --ref / --pooled-ref\n"
    "outputs are written only when everything (and every comparison) succeeded.\n";

/* With --iters N > 1: N more runs pipelined (wgnn_model_encode_submit, two
 * in flight, each run's outputs fetched to the host), their time per run,
 * and whether their outputs equal the single run's bit for bit. */
static int pipelined(FILE *info, wgnn_context *ctx, wgnn_model *m, const float *pixels, int64_t B, int64_t H,
                     int64_t W, long long iters, const float *last, uint64_t nl, const float *pooled, uint64_t np,
                     char *err) {
    int rc = CLI_OK;
    float *pl = alloc_floats(nl, err), *pp = pooled && pl ? alloc_floats(np, err) : NULL;
    if (!pl || (pooled && !pp)) {
        free(pl);
        return CLI_FAIL;
    }
    bool same = true;
    wgnn_status s = WGNN_OK;
    size_t bl = (size_t)nl * sizeof *pl, bp = (size_t)np * sizeof *pp;
    double t0 = now_ms();
    long long submitted = 0, fetched = 0;
    double t_sub = 0, t_fetch = 0; /* host time in each call: recording vs waiting */
    while (s == WGNN_OK && fetched < iters) {
        double a = now_ms();
        if (submitted < iters && submitted - fetched < 2) { /* keep two in flight */
            if ((s = wgnn_model_encode_submit(m, pixels, B, H, W)) == WGNN_OK) submitted++;
            t_sub += now_ms() - a;
            continue;
        }
        s = wgnn_model_encode_fetch(m, pl, bl, pp, bp);
        t_fetch += now_ms() - a;
        fetched++; /* out of flight, whatever the outcome */
        if (s == WGNN_OK) same = same && !memcmp(pl, last, bl) && (!pp || !memcmp(pp, pooled, bp));
    }
    double t = now_ms() - t0;
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        for (; fetched < submitted; fetched++) wgnn_model_encode_fetch(m, NULL, 0, NULL, 0); /* drain */
    } else {
        fprintf(info, "pipelined: %lld runs in %.2f ms, %.3f ms a run (upload, submit and the outputs' read-back; "
                      "two runs in flight); outputs %s; host %.3f ms a run in submit (upload, recording), %.3f in "
                      "fetch (waiting, read-back)\n",
                iters, t, t / (double)iters, same ? "equal the single run's" : "DIFFER from the single run's",
                t_sub / (double)iters, t_fetch / (double)iters);
        if (!same) rc = set_err(err, "run: pipelined runs gave other outputs than the single run");
    }
    free(pl);
    free(pp);
    return rc;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* With --iters N > 1: N runs of the model's graph alone (wgnn_graph_run:
 * one submit and a wait), its input left on the GPU from the last encode
 * and its outputs not read back, which is what PyTorch's benchmark times
 * (bench/torch_models.py: input on the device, one call, a synchronize);
 * the median, and whether the outputs still equal the single run's. */
static int resident(FILE *info, wgnn_context *ctx, wgnn_model *m, long long iters, const float *last, uint64_t nl,
                    bool span, char *err) {
    wgnn_graph *gr = wgnn_model_graph(m);
    double *t = malloc((size_t)iters * sizeof *t);
    float *pl = alloc_floats(nl, err);
    int rc = CLI_OK;
    wgnn_status s = WGNN_OK;
    if (!t || !pl) {
        rc = t ? CLI_FAIL : set_err(err, "run: out of host memory");
        goto done;
    }
    for (long long i = 0; i < iters && s == WGNN_OK; i++) {
        double t0 = now_ms();
        s = wgnn_graph_run(gr, 0);
        t[i] = now_ms() - t0;
    }
    if (s == WGNN_OK) s = wgnn_model_read_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, pl, (size_t)nl * sizeof *pl);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto done;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    bool same = !memcmp(pl, last, (size_t)nl * sizeof *pl);
    fprintf(info, "resident: %lld runs of the graph alone, median %.3f ms, min %.3f ms a run (input left on the GPU, "
                  "outputs not read back: one submit and a wait, PyTorch's protocol); outputs %s\n",
            iters, t[iters / 2], t[0], same ? "equal the single run's" : "DIFFER from the single run's");
    if (!same) rc = set_err(err, "run: resident runs gave other outputs than the single run");
    if (rc == CLI_OK && span) { /* the same runs with a timestamp at each end of their one pass */
        for (long long i = 0; i < iters && s == WGNN_OK; i++) {
            uint64_t ns = 0;
            const wgnn_graph_prof *r;
            int n;
            if ((s = wgnn_graph_run(gr, WGNN_PROFILE_SPAN)) == WGNN_OK) s = wgnn_graph_profile(gr, &r, &n, &ns);
            t[i] = (double)ns / 1e6;
        }
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto done;
        }
        qsort(t, (size_t)iters, sizeof *t, cmp_double);
        fprintf(info, "GPU span of a resident run (its one compute pass, a timestamp at each end; no per-node "
                      "timestamps): median %.3f ms, min %.3f ms (%lld runs)\n",
                t[iters / 2], t[0], iters);
    }
done:
    free(t);
    free(pl);
    return rc;
}


/* Compares out with the reference file; prints a line; CLI_CHECK on mismatch. */
static int compare(FILE *info, const char *what, const char *path, const float *out, const wgnn_desc *d, double atol,
                   double rtol, char *err) {
    wgnn_npy ref;
    char e[ERR_LEN];
    if (wgnn_npy_load(path, &ref, e, sizeof e) != WGNN_OK) return set_err(err, "run: %s", e);
    bool same = ref.dtype == WGNN_F32 && ref.rank == d->rank;
    for (int i = 0; same && i < d->rank; i++) same = ref.dims[i] == d->dims[i];
    if (!same) {
        char a[128], b[128];
        dims_str(d->rank, d->dims, a, sizeof a);
        dims_str(ref.rank, ref.dims, b, sizeof b);
        wgnn_npy_free(&ref);
        return set_err(err, "run: %s: reference %s is %s %s, the output is float32 %s", what, path,
                       wgnn_dtype_name(ref.dtype), b, a);
    }
    const float *r = ref.data;
    double max_abs = 0;
    uint64_t bad = 0, first = 0;
    for (uint64_t i = 0; i < ref.numel; i++) {
        double diff = fabs((double)out[i] - r[i]);
        if (!(diff <= atol + rtol * fabs((double)r[i]))) {
            if (!bad) first = i;
            bad++;
        }
        if (diff > max_abs || diff != diff) max_abs = diff;
    }
    fprintf(info, "%s vs %s: max |diff| %.3g, %llu of %llu outside atol %g + rtol %g -> %s\n", what, path, max_abs,
            (unsigned long long)bad, (unsigned long long)ref.numel, atol, rtol, bad ? "MISMATCH" : "ok");
    if (bad) fprintf(info, "  first at flat index %llu: %.7g vs %.7g\n", (unsigned long long)first, out[first], r[first]);
    wgnn_npy_free(&ref);
    return bad ? CLI_CHECK : CLI_OK;
}

static void summary(FILE *info, const char *what, const float *x, const wgnn_desc *d) {
    uint64_t n = 1;
    for (int i = 0; i < d->rank; i++) n *= (uint64_t)d->dims[i];
    double sum = 0, sq = 0;
    for (uint64_t i = 0; i < n; i++) {
        sum += x[i];
        sq += (double)x[i] * x[i];
    }
    char s[128];
    dims_str(d->rank, d->dims, s, sizeof s);
    fprintf(info, "%s %s: mean %.6g, rms %.6g, first [%.6g %.6g %.6g %.6g]\n", what, s, sum / (double)n,
            sqrt(sq / (double)n), n > 0 ? x[0] : 0, n > 1 ? x[1] : 0, n > 2 ? x[2] : 0, n > 3 ? x[3] : 0);
}

int cmd_run(const global_opts *g, int argc, char **argv) {
    const char *model_dir = NULL, *input = NULL, *out_path = NULL, *pooled_path = NULL, *weights = "f32";
    const char *ref_path = NULL, *pooled_ref = NULL;
    str_list images = {0};
    long long iters = 1;
    bool profile = false;
    double atol = 1e-4, rtol = 1e-3;
    const opt_spec specs[] = {
        {"--model", OPT_STR, &model_dir, 0, 0, true},        {"--image", OPT_LIST, &images, 0, MAX_LIST, false},
        {"--input", OPT_STR, &input, 0, 0, false},           {"--out", OPT_STR, &out_path, 0, 0, false},
        {"--pooled-out", OPT_STR, &pooled_path, 0, 0, false}, {"--weights", OPT_STR, &weights, 0, 0, false},
        {"--iters", OPT_INT, &iters, 1, 100000, false},       {"--profile", OPT_FLAG, &profile, 0, 0, false},
        {"--ref", OPT_STR, &ref_path, 0, 0, false},           {"--pooled-ref", OPT_STR, &pooled_ref, 0, 0, false},
        {"--atol", OPT_NUM, &atol, 0, 0, false},              {"--rtol", OPT_NUM, &rtol, 0, 0, false},
    };
    parse_result pr = parse_opts("run", k_usage_run, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    if ((images.n > 0) == (input != NULL))
        return usage_error("run", k_usage_run, "give either --image (one or more) or --input");
    wgnn_model_options mo = {WGNN_MODEL_WEIGHTS_F32};
    if (strcmp(weights, "f16") == 0) mo.weights = WGNN_MODEL_WEIGHTS_F16;
    else if (strcmp(weights, "f32") != 0)
        return usage_error("run", k_usage_run, "--weights: '%s' is not f32 or f16", weights);
    if (!(atol >= 0) || !(rtol >= 0)) return usage_error("run", k_usage_run, "--atol and --rtol must be >= 0");
    const char *outs[2] = {out_path, pooled_path}, *out_opts[2] = {"--out", "--pooled-out"};
    if (check_outputs("run", k_usage_run, outs, out_opts, 2) != CLI_OK) return CLI_USAGE;

    char err[ERR_LEN] = "";
    FILE *info = stdout; /* stderr when an output goes to stdout */
    if (out_path) info = info_stream(out_path);
    if (pooled_path && info == stdout) info = info_stream(pooled_path);
    wgnn_context *ctx = NULL;
    wgnn_model *m = NULL;
    float *pixels = NULL, *last = NULL, *pooled = NULL;
    wgnn_npy npy = {0};
    double *wall = NULL;
    int64_t B = 0, C = 3, H = 0, W = 0;
    int rc = CLI_OK;

    /* inputs first: a bad image or file fails before the GPU is touched */
    if (input) {
        if ((rc = load_header(input, &npy, err)) != CLI_OK) goto cleanup;
        if (npy.dtype != WGNN_F32 || npy.rank != 4) {
            char s[128];
            dims_str(npy.rank, npy.dims, s, sizeof s);
            rc = set_err(err, "run: --input %s is %s %s; pixel_values must be float32 [B, C, H, W]", input,
                         wgnn_dtype_name(npy.dtype), s);
            goto cleanup;
        }
        if ((rc = load_data("run", input, "--input", &npy, err)) != CLI_OK) goto cleanup;
        B = npy.dims[0], C = npy.dims[1], H = npy.dims[2], W = npy.dims[3];
        pixels = npy.data;
    } else {
        char pp[2048];
        snprintf(pp, sizeof pp, "%s/preprocessor_config.json", model_dir);
        B = images.n;
        for (int i = 0; i < images.n; i++) {
            float *px = NULL;
            int64_t h = 0, w = 0;
            char e[ERR_LEN];
            wgnn_status s = wgnn_image_preprocess_file(images.v[i], pp, &px, &h, &w, e, sizeof e);
            if (s != WGNN_OK) {
                rc = set_err(err, "run: %s", e);
                goto cleanup;
            }
            if (i == 0) {
                H = h, W = w;
                pixels = malloc((size_t)B * 3 * (size_t)(H * W) * sizeof *pixels);
                if (!pixels) {
                    free(px);
                    rc = set_err(err, "run: out of host memory for %d images", images.n);
                    goto cleanup;
                }
            } else if (h != H || w != W) {
                free(px);
                rc = set_err(err, "run: --image %s preprocesses to %lldx%lld, the first image to %lldx%lld", images.v[i],
                             (long long)h, (long long)w, (long long)H, (long long)W);
                goto cleanup;
            }
            memcpy(pixels + (size_t)i * 3 * (size_t)(H * W), px, 3 * (size_t)(H * W) * sizeof *px);
            free(px);
        }
    }

    if ((rc = open_context(g, &ctx, err)) != CLI_OK) goto cleanup;
    double t0 = now_ms();
    wgnn_status s = wgnn_model_load(ctx, model_dir, &mo, &m);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    double t_load = now_ms() - t0;
    wgnn_model_info mi;
    wgnn_model_get_info(m, &mi);
    if (C != mi.num_channels) {
        rc = set_err(err, "run: the input has %lld channels, the model %d", (long long)C, mi.num_channels);
        goto cleanup;
    }
    fprintf(info, "model %s: %s, %d layers, hidden %d, %d heads, patch %d, %.2f M parameters, %.1f MB of weights (%s), loaded in %.0f ms\n",
            model_dir, mi.model_type, mi.num_layers, mi.hidden_size, mi.num_heads, mi.patch_size,
            (double)mi.n_params / 1e6, (double)mi.weight_bytes / 1e6, weights, t_load);

    /* the first run builds the graph for this shape */
    t0 = now_ms();
    if ((s = wgnn_model_encode(m, pixels, B, H, W, 0)) != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    double t_first = now_ms() - t0;
    wall = malloc((size_t)iters * 5 * sizeof *wall);
    if (!wall) {
        rc = set_err(err, "run: out of host memory");
        goto cleanup;
    }
    double *rec = wall + iters, *wait = wall + 2 * iters, *up = wall + 3 * iters, *ahead = wall + 4 * iters;
    for (long long i = 0; i < iters; i++) {
        t0 = now_ms();
        if ((s = wgnn_model_encode(m, pixels, B, H, W, profile && i == iters - 1)) != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        wall[i] = now_ms() - t0;
        wgnn_graph_stats rs;
        wgnn_graph_get_stats(wgnn_model_graph(m), &rs);
        rec[i] = rs.last_record_ms;
        wait[i] = rs.last_wait_ms;
        ahead[i] = rs.last_ahead_ms;
    }
    double wall_profiled = wall[iters - 1]; /* the last run is the profiled one */
    /* the host's parts of a run: the input's upload (the rest of the wall
     * time), recording (unless recorded ahead) and submitting, recording the
     * next run ahead (while the GPU works), waiting for the GPU */
    for (long long i = 0; i < iters; i++) up[i] = wall[i] - rec[i] - wait[i] - ahead[i];
    qsort(wall, (size_t)iters, sizeof *wall, cmp_double);
    qsort(rec, (size_t)iters, sizeof *rec, cmp_double);
    qsort(wait, (size_t)iters, sizeof *wait, cmp_double);
    qsort(up, (size_t)iters, sizeof *up, cmp_double);
    qsort(ahead, (size_t)iters, sizeof *ahead, cmp_double);
    wgnn_graph *gr = wgnn_model_graph(m);
    wgnn_graph_stats st;
    wgnn_graph_get_stats(gr, &st);
    fprintf(info, "input [%lld,%lld,%lld,%lld]: first run (graph build + run) %.2f ms; %lld runs: median %.3f ms, min %.3f ms per run "
            "(upload, one submit, wait); medians of its parts: upload %.3f ms, recording and submitting %.3f ms, "
            "recording the next run ahead %.3f ms, waiting %.3f ms\n",
            (long long)B, (long long)C, (long long)H, (long long)W, t_first, iters, wall[iters / 2], wall[0],
            up[iters / 2], rec[iters / 2], ahead[iters / 2], wait[iters / 2]);
    fprintf(info, "graph: %d nodes, %d dispatches per run; activations %.1f MB in %d pooled buffers (%.1f MB unplanned), "
            "scratch %.1f MB, io %.1f MB, weights %.1f MB\n",
            st.n_nodes, st.n_dispatches, (double)st.peak_bytes / 1e6, st.n_pool_buffers,
            (double)st.unplanned_bytes / 1e6, (double)st.scratch_bytes / 1e6, (double)st.io_bytes / 1e6,
            (double)st.constant_bytes / 1e6);

    if (profile) {
        uint64_t sum = 0, total = 0;
        if (print_profile(info, ctx, gr, "profile (last run)", &sum, &total) == WGNN_OK)
            fprintf(info, "GPU time: %.3f ms summed over nodes, %.3f ms first start to last end; wall %.3f ms "
                          "(median of all runs), %.3f ms (the profiled run); runtime overhead (the profiled "
                          "run's wall - GPU span) %.3f ms; peak GPU memory %.1f MB\n",
                    (double)sum / 1e6, (double)total / 1e6, wall[iters / 2], wall_profiled,
                    wall_profiled - (double)total / 1e6,
                    (double)(st.peak_bytes + st.scratch_bytes + st.io_bytes + st.constant_bytes + st.uniform_bytes) /
                        1e6);
        /* a GPU whose compute units wgnn does not know plans its large
         * products without waves (an H100 without them: ViT-B/16 13-20%
         * slower, docs/PERFORMANCE.md session 25) */
        wgnn_adapter_info ai;
        wgnn_context_adapter(ctx, &ai);
        if (wgnn_context_compute_units(ctx) == 0 && strcmp(ai.type, "CPU") != 0)
            fprintf(info, "note: wgnn does not know this GPU's compute units: WGNN_COMPUTE_UNITS=N (its SMs or CUs) "
                          "plans the GEMM in whole waves of them (README.md)\n");
    }

    wgnn_desc dl, dp;
    if ((s = wgnn_model_output_desc(m, WGNN_MODEL_LAST_HIDDEN_STATE, &dl)) != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    uint64_t nl = 1, np = 1;
    for (int i = 0; i < dl.rank; i++) nl *= (uint64_t)dl.dims[i];
    if (!(last = alloc_floats(nl, err))) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    if ((s = wgnn_model_read_output(m, WGNN_MODEL_LAST_HIDDEN_STATE, last, nl * sizeof(float))) != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    summary(info, "last_hidden_state", last, &dl);
    if (mi.has_pooler) {
        if ((s = wgnn_model_output_desc(m, WGNN_MODEL_POOLER_OUTPUT, &dp)) != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        for (int i = 0; i < dp.rank; i++) np *= (uint64_t)dp.dims[i];
        if (!(pooled = alloc_floats(np, err))) {
            rc = CLI_FAIL;
            goto cleanup;
        }
        if ((s = wgnn_model_read_output(m, WGNN_MODEL_POOLER_OUTPUT, pooled, np * sizeof(float))) != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        summary(info, "pooler_output", pooled, &dp);
    } else if (pooled_path || pooled_ref) {
        rc = set_err(err, "run: %s has no pooler output (--pooled-out / --pooled-ref)", model_dir);
        goto cleanup;
    }
    if (iters > 1 && (rc = pipelined(info, ctx, m, pixels, B, H, W, iters, last, nl, pooled, np, err)) != CLI_OK)
        goto cleanup;
    bool span = profile && wgnn_context_has_timestamps(ctx);
    if (iters > 1 && (rc = resident(info, ctx, m, iters, last, nl, span, err)) != CLI_OK) goto cleanup;
    if (ref_path && (rc = compare(info, "last_hidden_state", ref_path, last, &dl, atol, rtol, err)) != CLI_OK &&
        rc != CLI_CHECK)
        goto cleanup;
    int rc2 = CLI_OK;
    if (pooled_ref && (rc2 = compare(info, "pooler_output", pooled_ref, pooled, &dp, atol, rtol, err)) != CLI_OK &&
        rc2 != CLI_CHECK) {
        rc = rc2;
        goto cleanup;
    }
    if (rc == CLI_OK) rc = rc2;
    if (rc == CLI_CHECK) {
        set_err(err, "run: the outputs differ from the reference; nothing written");
        goto cleanup;
    }
    out_file o[2];
    int n_out = 0;
    if (out_path) o[n_out++] = (out_file){out_path, WGNN_F32, dl.rank, dl.dims, last};
    if (pooled_path) o[n_out++] = (out_file){pooled_path, WGNN_F32, dp.rank, dp.dims, pooled};
    if (n_out) rc = save_all(o, n_out, err);

cleanup:
    if (input) wgnn_npy_free(&npy);
    else free(pixels);
    free(last);
    free(pooled);
    free(wall);
    wgnn_model_destroy(m);
    wgnn_context_destroy(ctx);
    if (rc == CLI_CHECK) {
        fprintf(stderr, "wgnn: %s\n", err);
        return rc;
    }
    return report(rc, err);
}
