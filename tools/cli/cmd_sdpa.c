/* cmd_sdpa.c - `wgnn sdpa`: attention on .npy files, headers checked first. */
#include "args.h"
#include "attn.h"
#include "commands.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char k_usage_sdpa[] =
    "usage: wgnn [global options] sdpa --q Q.npy --k K.npy --v V.npy --out OUT.npy [options]\n"
    "  out = softmax(q . k^T * scale + mask) . v, computed on the GPU\n"
    "  q [..., H, S_q, D], k and v [..., H, S_kv, D], mask [..., H, S_q, S_kv];\n"
    "  float32, D a multiple of 4\n"
    "options:\n"
    "  --q FILE, --k FILE, --v FILE   inputs: .npy files, or pipes such as <(cat q.npy)\n"
    "  --mask FILE       additive float32 mask (-inf masks an entry)\n"
    "  --scale S         default 1/sqrt(D)\n"
    "  --impl NAME       auto (default), three-pass, fused or channel\n"
    "  --out FILE        written only when every step (and --check) succeeded; a regular\n"
    "                    file is replaced whole, a device, FIFO or /dev/stdout written in place\n"
    "  --check           compare with the CPU reference (atol 1e-4, rtol 1e-3); exit 3 on mismatch\n";

int cmd_sdpa(const global_opts *g, int argc, char **argv) {
    const char *path[4] = {NULL, NULL, NULL, NULL}, *out_path = NULL; /* q, k, v, mask */
    double scale = NAN;
    wgnn_sdpa_impl impl = WGNN_SDPA_AUTO;
    bool check = false;
    const opt_spec specs[] = {
        {"--q", OPT_STR, &path[0], 0, 0, true},          {"--k", OPT_STR, &path[1], 0, 0, true},
        {"--v", OPT_STR, &path[2], 0, 0, true},          {"--mask", OPT_STR, &path[3], 0, 0, false},
        {"--scale", OPT_NUM, &scale, 0, 0, false},       {"--impl", OPT_IMPL, &impl, 0, 0, false},
        {"--out", OPT_STR, &out_path, 0, 0, true},       {"--check", OPT_FLAG, &check, 0, 0, false},
    };
    parse_result pr = parse_opts("sdpa", k_usage_sdpa, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    if (check_outputs("sdpa", k_usage_sdpa, &out_path, (const char *const[]){"--out"}, 1) != CLI_OK) return CLI_USAGE;

    static const char *const names[4] = {"q", "k", "v", "mask"};
    char err[ERR_LEN] = "";
    FILE *info = info_stream(out_path);
    wgnn_npy npy[4];
    wgnn_context *ctx = NULL;
    attn a = {0};
    float *gpu = NULL, *wide[3] = {NULL, NULL, NULL};
    uint16_t *half_out = NULL;
    int rc = CLI_OK, n_in = path[3] ? 4 : 3;
    memset(npy, 0, sizeof npy);

    /* Headers first: the library checks the shapes on tensors that hold no
     * data yet, so a wrong-shaped 4 GiB input is refused before it is read.
     * A pipe's header cannot be read ahead of its data: a pipe is read whole
     * here, once. */
    for (int i = 0; i < n_in; i++) {
        if ((rc = load_header(path[i], &npy[i], err)) != CLI_OK) goto cleanup;
        if (npy[i].rank == 0) {
            rc = set_err(err, "sdpa: %s (%s) is a scalar: %s must have rank >= 3", names[i], path[i], names[i]);
            goto cleanup;
        }
    }
    if ((rc = open_context(g, &ctx, err)) != CLI_OK) goto cleanup;
    wgnn_tensor **t[4] = {&a.q, &a.k, &a.v, &a.mask};
    for (int i = 0; i < n_in; i++) {
        wgnn_status s = wgnn_tensor_create(ctx, npy[i].dtype, npy[i].rank, npy[i].dims, t[i]);
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
    }
    a.opts.mask = a.mask;
    a.opts.impl = impl;
    a.opts.has_scale = !isnan(scale);
    a.opts.scale = a.opts.has_scale ? (float)scale : 0.0f;

    uint64_t scratch = 0;
    wgnn_sdpa_impl routed = impl;
    wgnn_status s = wgnn_sdpa_scratch_bytes(ctx, a.q, a.k, a.v, &a.opts, &scratch, &routed);
    if (s == WGNN_OK) s = wgnn_tensor_create(ctx, npy[0].dtype, npy[0].rank, npy[0].dims, &a.out);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    for (int i = 0; i < n_in; i++) {
        if ((rc = load_data("sdpa", path[i], names[i], &npy[i], err)) != CLI_OK) goto cleanup;
        s = wgnn_tensor_upload(ctx, *t[i], npy[i].data, (size_t)npy[i].nbytes);
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        if (!check) wgnn_npy_free(&npy[i]); /* only --check needs the host copy */
    }
    s = wgnn_sdpa(ctx, a.q, a.k, a.v, &a.opts, a.out);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    if ((rc = download_out(ctx, &a, &gpu, err)) != CLI_OK) goto cleanup;
    fprintf(info, "impl: %s%s, scratch %" PRIu64 " bytes\n", impl_name(routed),
            impl == WGNN_SDPA_AUTO ? " (auto)" : "", scratch);
    if (check) {
        /* sdpa succeeded: inputs are float32, or q, k, v float16 (widened
         * here, exactly) with a float32 mask. */
        for (int i = 0; i < 3 && npy[0].dtype == WGNN_F16; i++) {
            if (!(wide[i] = alloc_floats(npy[i].numel, err))) {
                rc = CLI_FAIL;
                goto cleanup;
            }
            wgnn_f16_to_f32(npy[i].data, wide[i], (size_t)npy[i].numel);
        }
        host_attn h = {wide[0] ? wide[0] : npy[0].data, wide[1] ? wide[1] : npy[1].data,
                       wide[2] ? wide[2] : npy[2].data, path[3] ? npy[3].data : NULL};
        check_result r;
        if ((rc = check_against_ref(&a, &h, gpu, &r, err)) != CLI_OK) goto cleanup;
        print_check(info, &r);
        if (!r.pass) {
            fprintf(stderr, "wgnn: sdpa: --check failed; %s not written\n", out_path);
            rc = CLI_CHECK;
            goto cleanup;
        }
    }
    const void *save = gpu;
    if (npy[0].dtype == WGNN_F16) { /* back to the halves the GPU wrote, exactly */
        if (!(half_out = malloc((size_t)npy[0].numel * sizeof *half_out))) {
            rc = set_err(err, "out of host memory");
            goto cleanup;
        }
        wgnn_f32_to_f16(gpu, half_out, (size_t)npy[0].numel);
        save = half_out;
    }
    if (save_npy(out_path, npy[0].dtype, npy[0].rank, npy[0].dims, save, err, sizeof err) != WGNN_OK) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    char ds[160];
    dims_str(npy[0].rank, npy[0].dims, ds, sizeof ds);
    fprintf(info, "wrote %s (%s %s)\n", out_path, wgnn_dtype_name(npy[0].dtype), ds);
cleanup:
    free(half_out);
    for (int i = 0; i < 3; i++) free(wide[i]);
    free(gpu);
    attn_release(&a);
    wgnn_context_destroy(ctx);
    for (int i = 0; i < 4; i++) wgnn_npy_free(&npy[i]);
    return report(rc, err);
}
