/* cmd_demo.c - `wgnn demo`: ViT-B/16 attention through each implementation. */
#include "args.h"
#include "attn.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>

const char k_usage_demo[] =
    "usage: wgnn [global options] demo [--iters N]\n"
    "  ViT-B/16 attention [B,H,S_q,S_kv,D] = [1,12,197,197,64] on random inputs through\n"
    "  fused, three-pass and auto; each is checked against the CPU reference and timed.\n"
    "  Exit 0 only if every check passes.\n"
    "options:\n"
    "  --iters N   timed runs per implementation, default 10\n";

int cmd_demo(const global_opts *g, int argc, char **argv) {
    long long iters = 10; /* about 1.5 s in all on lavapipe with 2 cores */
    const opt_spec specs[] = {{"--iters", OPT_INT, &iters, 1, 1000000, false}};
    parse_result pr = parse_opts("demo", k_usage_demo, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;

    static const int64_t vit[5] = {1, 12, 197, 197, 64}; /* ViT-B/16: 196 patches + CLS, 12 heads of 64 */
    static const wgnn_sdpa_impl impls[] = {WGNN_SDPA_FUSED, WGNN_SDPA_THREE_PASS, WGNN_SDPA_AUTO};
    char err[ERR_LEN] = "";
    wgnn_context *ctx = NULL;
    float *store[4] = {NULL, NULL, NULL, NULL}, *gpu = NULL;
    host_attn h;
    attn a = {0};
    bool all_pass = true;
    const char *timer = "";
    int rc = open_context(g, &ctx, err);
    if (rc != CLI_OK) goto cleanup;
    wgnn_adapter_info ai;
    wgnn_context_adapter(ctx, &ai);
    printf("adapter: %s (%s, %s)\n", ai.name, ai.backend, ai.type);
    if ((rc = random_problem(ctx, vit, false, WGNN_SDPA_AUTO, WGNN_F32, store, &h, &a, err)) != CLI_OK) goto cleanup;
    printf("sdpa [B,H,S_q,S_kv,D] = [1,12,197,197,64] (ViT-B/16), random inputs, median of %lld runs\n\n", iters);
    printf("%-20s %12s %10s %12s  %s\n", "impl", "median ms", "TFLOP/s", "max_abs_err", "check");
    for (size_t i = 0; i < NSPECS(impls); i++) {
        wgnn_sdpa_impl routed = impls[i];
        uint64_t scratch = 0;
        timing t;
        check_result r;
        char label[48];
        a.opts.impl = impls[i];
        wgnn_status s = wgnn_sdpa_scratch_bytes(ctx, a.q, a.k, a.v, &a.opts, &scratch, &routed);
        if (s == WGNN_OK) s = wgnn_sdpa(ctx, a.q, a.k, a.v, &a.opts, a.out);
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        free(gpu);
        gpu = NULL;
        if ((rc = download_out(ctx, &a, &gpu, err)) != CLI_OK) goto cleanup;
        if ((rc = check_against_ref(&a, &h, gpu, &r, err)) != CLI_OK) goto cleanup;
        if ((rc = time_sdpa(ctx, &a, 1, (int)iters, &t, err)) != CLI_OK) goto cleanup;
        all_pass = all_pass && r.pass;
        if (impls[i] == WGNN_SDPA_AUTO) snprintf(label, sizeof label, "auto -> %s", impl_name(routed));
        else snprintf(label, sizeof label, "%s", impl_name(routed));
        printf("%-20s %12.3f %10.4f %12.3g  %s\n", label, t.median, sdpa_tflops(vit, t.median), r.max_abs,
               r.pass ? "PASS" : "FAIL");
        timer = t.timer;
    }
    printf("\ntimer: %s; check: |gpu - ref| <= %g + %g * |ref|\n", timer, CHECK_ATOL, CHECK_RTOL);
    printf("%s\n", all_pass ? "all checks passed" : "some checks FAILED");
    rc = all_pass ? CLI_OK : CLI_CHECK;
cleanup:
    free(gpu);
    attn_release(&a);
    for (int i = 3; i >= 0; i--) free(store[i]);
    wgnn_context_destroy(ctx);
    return report(rc, err);
}
