/* cmd_bench_op.c - `wgnn bench op`: any op of the table timed on random
 * inputs of the given dtypes and shapes. Generic over the table: no op is
 * named here; GB/s counts the bytes of the inputs and outputs, and the
 * caller who knows an op's FLOP count passes it (--flops) for TFLOP/s. */
#include "args.h"
#include "commands.h"
#include "optable.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_usage_bench_op[] =
    "usage: wgnn [global options] bench op NAME --in-shape SPEC [--in-shape SPEC ...] [--arg KEY=VALUE ...]\n"
    "                                           [--iters N] [--warmup N] [--flops N] [--json] [--check]\n"
    "  times one op of the table (`wgnn op --list`) on random inputs\n"
    "options:\n"
    "  --in-shape SPEC   one input, in the op's order: DTYPE:DIMS[{LO,HI}] with DTYPE f32, f16\n"
    "                    or i32, DIMS comma-separated (none: a scalar), values uniform in\n"
    "                    [LO, HI) (default [-1, 1), int32 [0, 10)); e.g. f32:4096,4096,\n"
    "                    f16:3072,768, 'i32:128{0,1000}' (quoted: a shell expands braces)\n"
    "  --arg KEY=VALUE   an argument of the op (`wgnn op NAME --help` lists them)\n"
    "  --iters N         timed runs, default 20 (median, min and max are reported)\n"
    "  --warmup N        untimed runs before them, default 3\n"
    "  --flops N         the op's floating-point operations per run: also report TFLOP/s\n"
    "  --json            print one JSON object on one line (with \"error\" on failure)\n"
    "  --check           compare the last outputs with the CPU reference (wgnn_op_ref, which\n"
    "                    can be slow on large shapes); exit 3 on mismatch\n"
    "GB/s counts the bytes of every input and output once per run. GPU timestamps time each\n"
    "run where the adapter has them; otherwise host wall time around the run and a sync\n"
    "(\"timer\" says which).\n";

/* One --in-shape: the desc and the range its values are drawn from. */
typedef struct in_spec {
    wgnn_desc d;
    double lo, hi;
} in_spec;

static bool parse_dtype(const char *s, size_t len, wgnn_dtype *out) {
    static const struct {
        const char *name;
        wgnn_dtype dt;
    } k[] = {{"f32", WGNN_F32}, {"float32", WGNN_F32}, {"f16", WGNN_F16},
             {"float16", WGNN_F16}, {"i32", WGNN_I32}, {"int32", WGNN_I32}};
    for (size_t i = 0; i < NSPECS(k); i++)
        if (strlen(k[i].name) == len && strncmp(k[i].name, s, len) == 0) {
            *out = k[i].dt;
            return true;
        }
    return false;
}

/* "f32:4096,4096", "f16:3072,768", "i32:128{0,1000}", "f32:" (a scalar) */
static bool parse_in_spec(const char *s, in_spec *o) {
    memset(o, 0, sizeof *o);
    const char *colon = strchr(s, ':');
    if (!colon || !parse_dtype(s, (size_t)(colon - s), &o->d.dtype)) return false;
    const char *dims = colon + 1, *brace = strchr(dims, '{');
    size_t dl = brace ? (size_t)(brace - dims) : strlen(dims);
    char buf[256];
    if (dl >= sizeof buf) return false;
    memcpy(buf, dims, dl);
    buf[dl] = '\0';
    if (dl > 0) {
        shape sh;
        if (!parse_shape(buf, 1, WGNN_MAX_RANK, &sh)) return false;
        o->d.rank = sh.rank;
        memcpy(o->d.dims, sh.dims, sizeof sh.dims);
    }
    bool ints = o->d.dtype == WGNN_I32;
    o->lo = ints ? 0 : -1;
    o->hi = ints ? 10 : 1;
    if (!brace) return true;
    /* "{LO,HI}" and nothing after it */
    const char *comma = strchr(brace, ','), *end = strchr(brace, '}');
    if (!comma || !end || comma > end || end[1] != '\0') return false;
    char a[64], b[64];
    size_t al = (size_t)(comma - brace - 1), bl = (size_t)(end - comma - 1);
    if (al >= sizeof a || bl >= sizeof b) return false;
    memcpy(a, brace + 1, al);
    a[al] = '\0';
    memcpy(b, comma + 1, bl);
    b[bl] = '\0';
    if (ints) {
        long long lo, hi;
        if (!parse_int(a, INT32_MIN, INT32_MAX, &lo) || !parse_int(b, INT32_MIN, INT32_MAX, &hi) || lo >= hi)
            return false;
        o->lo = (double)lo;
        o->hi = (double)hi;
        return true;
    }
    double limit = o->d.dtype == WGNN_F16 ? 65504.0 : 3.4e38;
    if (!parse_num(a, &o->lo) || !parse_num(b, &o->hi) || o->lo > o->hi || fabs(o->lo) > limit ||
        fabs(o->hi) > limit)
        return false;
    return true;
}

/* Fills a host tensor of s's desc with uniform values in [lo, hi). */
static void fill_random(const in_spec *s, void *data, uint64_t *state) {
    uint64_t n = desc_numel(&s->d);
    if (s->d.dtype == WGNN_I32) {
        uint64_t span = (uint64_t)((int64_t)s->hi - (int64_t)s->lo);
        for (uint64_t i = 0; i < n; i++)
            ((int32_t *)data)[i] = (int32_t)((int64_t)s->lo + (int64_t)(splitmix64(state) % span));
    } else if (s->d.dtype == WGNN_F16) {
        for (uint64_t i = 0; i < n; i++) {
            float x;
            fill_uniform(&x, 1, state, s->lo, s->hi);
            wgnn_f32_to_f16(&x, (uint16_t *)data + i, 1);
        }
    } else {
        fill_uniform(data, n, state, s->lo, s->hi);
    }
}

typedef struct bench_op {
    const char *name;
    char cmd[128];
    str_list specs, args;
    long long iters, warmup;
    double flops;
    bool json, check;
    int n_in, n_out;
    in_spec in[MAX_LIST];
    wgnn_desc dout[MAX_LIST];
    bool have_out; /* dout holds the output descs */
    wgnn_host_tensor hin[MAX_LIST], hout[MAX_LIST];
    wgnn_tensor *tin[MAX_LIST], *tout[MAX_LIST];
    /* results */
    char adapter[256];
    timing t;
    uint64_t bytes;
    bool checked, pass;
    double max_abs;
} bench_op;

static wgnn_status run_once(wgnn_context *ctx, void *user) {
    bench_op *b = user;
    return wgnn_op(ctx, b->name, (const wgnn_tensor *const *)b->tin, b->n_in, b->args.v, b->args.n, b->tout,
                   b->n_out);
}

static int bench_op_run(const global_opts *g, bench_op *b, char *err) {
    wgnn_context *ctx = NULL;
    wgnn_desc din[MAX_LIST];
    char msg[ERR_LEN] = "";
    for (int i = 0; i < b->n_in; i++) din[i] = b->in[i].d;
    wgnn_status s = wgnn_op_shapes(b->name, din, b->n_in, b->args.v, b->args.n, b->dout, MAX_LIST, &b->n_out, msg,
                                   sizeof msg);
    if (s != WGNN_OK) return set_err(err, "%s", msg[0] ? msg : wgnn_status_str(s));
    b->have_out = true;
    b->bytes = 0;
    for (int i = 0; i < b->n_in; i++) b->bytes += desc_nbytes(&din[i]);
    for (int i = 0; i < b->n_out; i++) b->bytes += desc_nbytes(&b->dout[i]);

    int rc = open_context(g, &ctx, err);
    if (rc != CLI_OK) goto cleanup;
    wgnn_adapter_info ai;
    wgnn_context_adapter(ctx, &ai);
    snprintf(b->adapter, sizeof b->adapter, "%s", ai.name);
    for (int i = 0; i < b->n_in + b->n_out; i++) { /* before any host copy is made */
        char what[160];
        const wgnn_desc *d = i < b->n_in ? &din[i] : &b->dout[i - b->n_in];
        snprintf(what, sizeof what, "%s: %s %d", b->cmd, i < b->n_in ? "input" : "output", i < b->n_in ? i : i - b->n_in);
        if ((rc = check_fits_device(ctx, what, d->dtype, d->rank, d->dims, err)) != CLI_OK) goto cleanup;
    }
    uint64_t seed = 0x5eed;
    for (int i = 0; i < b->n_in && s == WGNN_OK; i++) {
        uint64_t bytes = desc_nbytes(&din[i]);
        b->hin[i].desc = din[i];
        if (bytes > SIZE_MAX || !(b->hin[i].data = malloc((size_t)bytes))) {
            rc = set_err(err, "%s: out of host memory for input %d", b->cmd, i);
            goto cleanup;
        }
        fill_random(&b->in[i], b->hin[i].data, &seed);
        s = tensor_from_host(ctx, din[i].dtype, din[i].rank, din[i].dims, b->hin[i].data, bytes, &b->tin[i]);
        if (!b->check) {
            free(b->hin[i].data);
            b->hin[i].data = NULL;
        }
    }
    for (int i = 0; i < b->n_out && s == WGNN_OK; i++)
        s = wgnn_tensor_create(ctx, b->dout[i].dtype, b->dout[i].rank, b->dout[i].dims, &b->tout[i]);
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    if ((rc = time_runs(ctx, run_once, b, (int)b->warmup, (int)b->iters, &b->t, err)) != CLI_OK) goto cleanup;
    if (b->check) {
        for (int i = 0; i < b->n_out && s == WGNN_OK; i++) {
            uint64_t bytes = desc_nbytes(&b->dout[i]);
            b->hout[i].desc = b->dout[i];
            if (bytes > SIZE_MAX || !(b->hout[i].data = malloc((size_t)bytes))) {
                rc = set_err(err, "%s: out of host memory for output %d", b->cmd, i);
                goto cleanup;
            }
            s = wgnn_tensor_download(ctx, b->tout[i], b->hout[i].data, (size_t)bytes);
        }
        if (s != WGNN_OK) {
            rc = ctx_err(err, ctx, s);
            goto cleanup;
        }
        op_cmp cmp[MAX_LIST];
        if ((rc = op_check(b->name, b->hin, b->n_in, &b->args, b->hout, b->n_out, NULL, NULL, cmp, err)) != CLI_OK)
            goto cleanup;
        b->checked = b->pass = true;
        for (int i = 0; i < b->n_out; i++) {
            b->pass = b->pass && cmp[i].pass;
            if (isnan(cmp[i].max_abs) || isnan(b->max_abs)) b->max_abs = NAN;
            else if (cmp[i].max_abs > b->max_abs) b->max_abs = cmp[i].max_abs;
        }
    }
cleanup:
    for (int i = 0; i < MAX_LIST; i++) {
        wgnn_tensor_destroy(b->tout[i]);
        wgnn_tensor_destroy(b->tin[i]);
        free(b->hout[i].data);
        free(b->hin[i].data);
        b->tout[i] = b->tin[i] = NULL;
        b->hout[i].data = b->hin[i].data = NULL;
    }
    wgnn_context_destroy(ctx);
    return rc;
}

static void json_head(const bench_op *b) {
    printf("{\"op\":");
    json_str(b->name);
    printf(",\"inputs\":[");
    for (int i = 0; i < b->n_in; i++) {
        if (i) putchar(',');
        desc_json(&b->in[i].d);
    }
    printf("],\"args\":[");
    for (int i = 0; i < b->args.n; i++) {
        if (i) putchar(',');
        json_str(b->args.v[i]);
    }
    printf("]");
    if (b->have_out) {
        printf(",\"outputs\":[");
        for (int i = 0; i < b->n_out; i++) {
            if (i) putchar(',');
            desc_json(&b->dout[i]);
        }
        printf("]");
    }
}

static double per_second(double amount, double ms) { return ms > 0 ? amount / (ms / 1e3) : 0.0; }

static void print_result(const bench_op *b) {
    double gbps = per_second((double)b->bytes, b->t.median) / 1e9;
    double tflops = per_second(b->flops, b->t.median) / 1e12;
    if (b->json) {
        json_head(b);
        printf(",\"iters\":%lld,\"warmup\":%lld,\"median_ms\":", b->iters, b->warmup);
        json_num(b->t.median);
        printf(",\"min_ms\":");
        json_num(b->t.min);
        printf(",\"max_ms\":");
        json_num(b->t.max);
        printf(",\"bytes\":%" PRIu64 ",\"gbps\":", b->bytes);
        json_num(gbps);
        if (b->flops > 0) {
            printf(",\"flops\":");
            json_num(b->flops);
            printf(",\"tflops\":");
            json_num(tflops);
        }
        printf(",\"timer\":\"%s\",\"adapter\":", b->t.timer);
        json_str(b->adapter);
        if (b->checked) {
            printf(",\"max_abs_err\":");
            json_num(b->max_abs);
            printf(",\"check\":\"%s\"", b->pass ? "PASS" : "FAIL");
        }
        printf("}\n");
        return;
    }
    printf("%s", b->name);
    for (int i = 0; i < b->n_in; i++) {
        char ds[200];
        desc_str(&b->in[i].d, ds, sizeof ds);
        printf("%s%s", i ? ", " : " ", ds);
    }
    for (int i = 0; i < b->args.n; i++) printf(" %s", b->args.v[i]);
    printf(" ->");
    for (int i = 0; i < b->n_out; i++) {
        char ds[200];
        desc_str(&b->dout[i], ds, sizeof ds);
        printf("%s%s", i ? ", " : " ", ds);
    }
    printf(" median %.4f ms (min %.4f, max %.4f, %lld iters) %.3f GB/s (%" PRIu64 " bytes)", b->t.median, b->t.min,
           b->t.max, b->iters, gbps, b->bytes);
    if (b->flops > 0) printf(" %.4f TFLOP/s", tflops);
    printf(" timer=%s adapter=\"%s\"", b->t.timer, b->adapter);
    if (b->checked) printf(" max_abs_err=%.3g check=%s", b->max_abs, b->pass ? "PASS" : "FAIL");
    printf("\n");
}

int cmd_bench_op(const global_opts *g, int argc, char **argv) {
    if (argc < 1)
        return usage_error("bench op", k_usage_bench_op, "missing the op's name (`wgnn op --list` lists the ops)");
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(k_usage_bench_op, stdout);
        return CLI_OK;
    }
    if (argv[0][0] == '-')
        return usage_error("bench op", k_usage_bench_op, "the op's name comes first: wgnn bench op NAME %s ...",
                           argv[0]);
    const wgnn_op_info *info = op_lookup(argv[0]);
    if (!info) return CLI_USAGE;
    bench_op *b = calloc(1, sizeof *b);
    char err[ERR_LEN] = "";
    if (!b) return report(set_err(err, "out of host memory"), err);
    b->name = info->name;
    b->iters = 20;
    b->warmup = 3;
    snprintf(b->cmd, sizeof b->cmd, "bench op %s", info->name);
    const char *flops = NULL;
    const opt_spec specs[] = {
        {"--in-shape", OPT_LIST, &b->specs, 0, MAX_LIST, false}, /* counted against the row */
        {"--arg", OPT_LIST, &b->args, 0, MAX_LIST, false},
        {"--iters", OPT_INT, &b->iters, 1, 1000000, false},
        {"--warmup", OPT_INT, &b->warmup, 0, 1000000, false},
        {"--flops", OPT_STR, &flops, 0, 0, false},
        {"--json", OPT_FLAG, &b->json, 0, 0, false},
        {"--check", OPT_FLAG, &b->check, 0, 0, false},
    };
    int rc = CLI_OK;
    parse_result pr = parse_opts(b->cmd, k_usage_bench_op, specs, NSPECS(specs), argc - 1, argv + 1, false, NULL);
    if (pr != PARSE_OK) {
        rc = pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
        goto cleanup;
    }
    if (flops && !(parse_num(flops, &b->flops) && b->flops > 0)) {
        rc = usage_error(b->cmd, k_usage_bench_op, "bad value '%s' for --flops: expected a number > 0", flops);
        goto cleanup;
    }
    b->n_in = b->specs.n;
    for (int i = 0; i < b->n_in; i++)
        if (!parse_in_spec(b->specs.v[i], &b->in[i])) {
            fprintf(stderr,
                    "wgnn: %s: bad --in-shape '%s': expected DTYPE:DIMS[{LO,HI}] (f32:4096,4096, f16:3072,768, "
                    "i32:128{0,1000})\n",
                    b->cmd, b->specs.v[i]);
            rc = CLI_USAGE;
            goto cleanup;
        }
    if ((rc = op_check_usage(b->cmd, info, b->n_in, "--in-shape", &b->args)) != CLI_OK) goto cleanup;
    rc = bench_op_run(g, b, err);
    if (rc != CLI_OK) {
        if (b->json) {
            json_head(b);
            printf(",\"error\":");
            json_str(err);
            printf("}\n");
        }
        goto cleanup;
    }
    print_result(b);
    if (b->checked && !b->pass) rc = CLI_CHECK;
cleanup:
    free(b);
    return report(rc, err);
}
