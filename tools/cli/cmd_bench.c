/* cmd_bench.c - `wgnn bench sdpa`: sdpa timed on random inputs; `wgnn bench
 * op` (any op of the table) lives in cmd_bench_op.c. */
#include "args.h"
#include "attn.h"
#include "commands.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char k_usage_bench[] =
    "usage: wgnn [global options] bench sdpa --shape B,H,S_q,S_kv,D [options]\n"
    "       wgnn [global options] bench op NAME --in-shape SPEC [--in-shape SPEC ...] [options]\n"
    "                                           (`wgnn bench op --help`)\n"
    "  times sdpa on random inputs; TFLOP/s counts 4*B*H*S_q*S_kv*D flops\n"
    "options:\n"
    "  --mask          add a random additive mask in [-1, 0]\n"
    "  --impl NAME     auto (default), three-pass, fused or channel\n"
    "  --iters N       timed runs, default 20\n"
    "  --warmup N      untimed runs before them, default 3\n"
    "  --json          print one JSON object on one line (with \"error\" on failure)\n"
    "  --check         compare the last output with the CPU reference (O(S^2 D) on the CPU);\n"
    "                  exit 3 on mismatch\n"
    "  --f16           float16 q, k, v and out (fused only; f16 storage, f32 arithmetic)\n";

typedef struct bench_args {
    shape sh; /* B, H, S_q, S_kv, D */
    bool mask, json, check, f16;
    wgnn_sdpa_impl impl;
    long long iters, warmup;
} bench_args;

typedef struct bench_result {
    char adapter[256];
    wgnn_sdpa_impl routed;
    uint64_t scratch;
    timing t;
    bool checked;
    check_result chk;
} bench_result;

static int bench_sdpa_run(const global_opts *g, const bench_args *b, bench_result *res, char *err) {
    wgnn_context *ctx = NULL;
    float *store[4] = {NULL, NULL, NULL, NULL}, *gpu = NULL;
    host_attn h;
    attn a = {0};
    int rc = open_context(g, &ctx, err);
    if (rc != CLI_OK) goto cleanup;
    wgnn_adapter_info ai;
    wgnn_context_adapter(ctx, &ai);
    snprintf(res->adapter, sizeof res->adapter, "%s", ai.name);
    if ((rc = random_problem(ctx, b->sh.dims, b->mask, b->impl, b->f16 ? WGNN_F16 : WGNN_F32, store, &h, &a, err)) !=
        CLI_OK)
        goto cleanup;
    wgnn_status s = wgnn_sdpa_scratch_bytes(ctx, a.q, a.k, a.v, &a.opts, &res->scratch, &res->routed);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    if ((rc = time_sdpa(ctx, &a, (int)b->warmup, (int)b->iters, &res->t, err)) != CLI_OK) goto cleanup;
    if (b->check) {
        if ((rc = download_out(ctx, &a, &gpu, err)) != CLI_OK) goto cleanup;
        if ((rc = check_against_ref(&a, &h, gpu, &res->chk, err)) != CLI_OK) goto cleanup;
        res->checked = true;
    }
cleanup:
    free(gpu);
    attn_release(&a);
    for (int i = 3; i >= 0; i--) free(store[i]);
    wgnn_context_destroy(ctx);
    return rc;
}

static void bench_json_head(const bench_args *b) {
    printf("{\"op\":\"sdpa\",\"shape\":[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "],\"mask\":%s",
           b->sh.dims[0], b->sh.dims[1], b->sh.dims[2], b->sh.dims[3], b->sh.dims[4], b->mask ? "true" : "false");
    printf(",\"dtype\":\"%s\"", b->f16 ? "float16" : "float32");
}

int cmd_bench(const global_opts *g, int argc, char **argv) {
    bench_args b = {.impl = WGNN_SDPA_AUTO, .iters = 20, .warmup = 3};
    if (argc < 1) return usage_error("bench", k_usage_bench, "missing what to time (sdpa, or op NAME)");
    if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
        fputs(k_usage_bench, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[0], "op") == 0) return cmd_bench_op(g, argc - 1, argv + 1);
    if (strcmp(argv[0], "sdpa") != 0)
        return usage_error("bench", k_usage_bench, "unknown op '%s' (bench times: sdpa, op NAME)", argv[0]);
    const opt_spec specs[] = {
        {"--shape", OPT_SHAPE, &b.sh, 5, 5, true},       {"--mask", OPT_FLAG, &b.mask, 0, 0, false},
        {"--impl", OPT_IMPL, &b.impl, 0, 0, false},      {"--iters", OPT_INT, &b.iters, 1, 1000000, false},
        {"--warmup", OPT_INT, &b.warmup, 0, 1000000, false}, {"--json", OPT_FLAG, &b.json, 0, 0, false},
        {"--check", OPT_FLAG, &b.check, 0, 0, false},    {"--f16", OPT_FLAG, &b.f16, 0, 0, false},
    };
    parse_result pr = parse_opts("bench sdpa", k_usage_bench, specs, NSPECS(specs), argc - 1, argv + 1, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;

    char err[ERR_LEN] = "";
    bench_result r = {.routed = b.impl};
    int rc = bench_sdpa_run(g, &b, &r, err);
    if (rc != CLI_OK) {
        if (b.json) {
            bench_json_head(&b);
            printf(",\"impl\":\"%s\",\"error\":", impl_name(b.impl));
            json_str(err);
            printf("}\n");
        }
        return report(rc, err);
    }
    double tflops = sdpa_tflops(b.sh.dims, r.t.median);
    if (b.json) {
        bench_json_head(&b);
        printf(",\"impl\":\"%s\",\"impl_requested\":\"%s\",\"iters\":%lld,\"warmup\":%lld,\"median_ms\":",
               impl_name(r.routed), impl_name(b.impl), b.iters, b.warmup);
        json_num(r.t.median);
        printf(",\"min_ms\":");
        json_num(r.t.min);
        printf(",\"max_ms\":");
        json_num(r.t.max);
        printf(",\"tflops\":");
        json_num(tflops);
        printf(",\"scratch_bytes\":%" PRIu64 ",\"timer\":\"%s\",\"adapter\":", r.scratch, r.t.timer);
        json_str(r.adapter);
        if (r.checked) {
            printf(",\"max_abs_err\":");
            json_num(r.chk.max_abs);
            printf(",\"max_rel_err\":");
            json_num(r.chk.max_rel);
            printf(",\"check\":\"%s\"", r.chk.pass ? "PASS" : "FAIL");
        }
        printf("}\n");
    } else {
        char ds[96];
        dims_str(5, b.sh.dims, ds, sizeof ds);
        printf("sdpa %s%s%s impl=%s median %.4f ms (min %.4f, max %.4f, %lld iters) %.4f TFLOP/s scratch %" PRIu64
               " bytes timer=%s adapter=\"%s\"",
               ds, b.mask ? " +mask" : "", b.f16 ? " float16" : "", impl_name(r.routed), r.t.median, r.t.min, r.t.max, b.iters, tflops,
               r.scratch, r.t.timer, r.adapter);
        if (r.checked) printf(" max_abs_err=%.3g check=%s", r.chk.max_abs, r.chk.pass ? "PASS" : "FAIL");
        printf("\n");
    }
    return r.checked && !r.chk.pass ? CLI_CHECK : CLI_OK;
}
