/* cmd_op.c - `wgnn op`: any op of the table on .npy files.
 *
 * Generic over the table (include/wgnn.h, "Ops by name"): the headers of
 * the inputs are read first and wgnn_op_shapes checks them with the
 * arguments, so a wrong shape or argument is refused before any data is
 * read; then the data goes up, the op runs, the outputs come back, are
 * checked against wgnn_op_ref (--check) and are written all or none. */
#include "args.h"
#include "commands.h"
#include "optable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char k_usage_op[] =
    "usage: wgnn [global options] op NAME --in FILE [--in FILE ...] [--arg KEY=VALUE ...]\n"
    "                                     --out FILE [--out FILE ...] [--check]\n"
    "       wgnn op --list          every op, its inputs and arguments\n"
    "       wgnn op NAME --help     one op: inputs, shape rules, arguments\n"
    "  runs one op of the table (PyTorch's aten names and semantics) on the GPU\n"
    "options:\n"
    "  --in FILE         an input .npy (float32, float16, int32; rank 0 allowed), one per\n"
    "                    input in the op's order; trailing optional inputs are left out\n"
    "  --arg KEY=VALUE   an argument of the op (`wgnn op NAME --help` lists them)\n"
    "  --out FILE        one per output, in order; written only when every step (and --check)\n"
    "                    succeeded, all of them or none\n"
    "  --check           compare with the CPU reference (float32: |gpu-ref| <= 1e-4 + 1e-3*|ref|,\n"
    "                    float16: 2e-3 + 2e-3*|ref|, int32: equal); exit 3 on mismatch\n"
    "Shapes, dtypes and arguments are checked from the .npy headers before any data is read.\n"
    "exit status: 0 ok, 1 failure (a file, the GPU, inputs or values the op refuses),\n"
    "2 usage error (unknown op, option or argument; wrong number of --in or --out), 3 --check mismatch\n";

static const char k_usage_op_one[] =
    "usage: wgnn [global options] op %s --in FILE ... [--arg KEY=VALUE ...] --out FILE ... [--check]\n";

/* Is path this program's stdout (e.g. --out /dev/stdout)? */
static bool is_stdout(const char *path) {
    struct stat o, so;
    return stat(path, &o) == 0 && fstat(STDOUT_FILENO, &so) == 0 && o.st_dev == so.st_dev && o.st_ino == so.st_ino;
}

typedef struct op_run {
    const char *name;
    str_list in_path, args, out_path;
    bool check;
    wgnn_npy npy[MAX_LIST];
    wgnn_desc din[MAX_LIST], dout[MAX_LIST];
    int n_out;
    wgnn_tensor *tin[MAX_LIST], *tout[MAX_LIST];
    void *host_out[MAX_LIST];
} op_run;

static void op_run_release(op_run *r) {
    for (int i = 0; i < MAX_LIST; i++) {
        free(r->host_out[i]);
        wgnn_tensor_destroy(r->tout[i]);
        wgnn_tensor_destroy(r->tin[i]);
        wgnn_npy_free(&r->npy[i]);
    }
}

static int run_op(const global_opts *g, op_run *r, char *cmd, char *err) {
    int n_in = r->in_path.n, rc = CLI_OK;
    wgnn_context *ctx = NULL;
    wgnn_status s;
    /* Headers only (a pipe is read whole): the shapes and the arguments are
     * checked before any data is read. */
    for (int i = 0; i < n_in; i++) {
        if ((rc = load_header(r->in_path.v[i], &r->npy[i], err)) != CLI_OK) return rc;
        memset(&r->din[i], 0, sizeof r->din[i]);
        r->din[i].dtype = r->npy[i].dtype;
        r->din[i].rank = r->npy[i].rank;
        memcpy(r->din[i].dims, r->npy[i].dims, sizeof r->din[i].dims);
    }
    char msg[ERR_LEN] = "";
    s = wgnn_op_shapes(r->name, r->din, n_in, r->args.v, r->args.n, r->dout, MAX_LIST, &r->n_out, msg, sizeof msg);
    if (s != WGNN_OK) return set_err(err, "%s", msg[0] ? msg : wgnn_status_str(s));
    if (r->n_out != r->out_path.n) {
        fprintf(stderr, "wgnn: %s: gives %d output%s; %d --out given\n", cmd, r->n_out, r->n_out == 1 ? "" : "s",
                r->out_path.n);
        return CLI_USAGE;
    }
    FILE *info = stdout;
    for (int i = 0; i < r->n_out; i++)
        if (is_stdout(r->out_path.v[i])) info = stderr;

    if ((rc = open_context(g, &ctx, err)) != CLI_OK) goto cleanup;
    for (int i = 0; i < n_in && s == WGNN_OK; i++)
        s = wgnn_tensor_create(ctx, r->din[i].dtype, r->din[i].rank, r->din[i].dims, &r->tin[i]);
    for (int i = 0; i < r->n_out && s == WGNN_OK; i++)
        s = wgnn_tensor_create(ctx, r->dout[i].dtype, r->dout[i].rank, r->dout[i].dims, &r->tout[i]);
    for (int i = 0; i < n_in && s == WGNN_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "input %d", i);
        if ((rc = load_data(cmd, r->in_path.v[i], name, &r->npy[i], err)) != CLI_OK) goto cleanup;
        s = wgnn_tensor_upload(ctx, r->tin[i], r->npy[i].data, (size_t)r->npy[i].nbytes);
        if (!r->check) wgnn_npy_free(&r->npy[i]); /* only --check needs the host copy */
    }
    if (s == WGNN_OK)
        s = wgnn_op(ctx, r->name, (const wgnn_tensor *const *)r->tin, n_in, r->args.v, r->args.n, r->tout, r->n_out);
    for (int i = 0; i < r->n_out && s == WGNN_OK; i++) {
        uint64_t bytes = wgnn_tensor_nbytes(r->tout[i]);
        if (bytes > SIZE_MAX || !(r->host_out[i] = malloc((size_t)bytes))) {
            rc = set_err(err, "%s: out of host memory for output %d", cmd, i);
            goto cleanup;
        }
        s = wgnn_tensor_download(ctx, r->tout[i], r->host_out[i], (size_t)bytes);
    }
    if (s != WGNN_OK) {
        rc = ctx_err(err, ctx, s);
        goto cleanup;
    }
    if (r->check) {
        wgnn_host_tensor hin[MAX_LIST], hout[MAX_LIST];
        op_cmp cmp[MAX_LIST];
        for (int i = 0; i < n_in; i++) hin[i] = (wgnn_host_tensor){r->din[i], r->npy[i].data};
        for (int i = 0; i < r->n_out; i++) hout[i] = (wgnn_host_tensor){r->dout[i], r->host_out[i]};
        if ((rc = op_check(r->name, hin, n_in, &r->args, hout, r->n_out, r->out_path.v, info, cmp, err)) != CLI_OK)
            goto cleanup;
        for (int i = 0; i < r->n_out; i++)
            if (!cmp[i].pass) {
                fprintf(stderr, "wgnn: %s: --check failed; no output written\n", cmd);
                rc = CLI_CHECK;
                goto cleanup;
            }
    }
    out_file of[MAX_LIST];
    for (int i = 0; i < r->n_out; i++)
        of[i] = (out_file){r->out_path.v[i], r->dout[i].dtype, r->dout[i].rank, r->dout[i].dims, r->host_out[i]};
    if ((rc = save_all(of, r->n_out, err)) != CLI_OK) goto cleanup;
    for (int i = 0; i < r->n_out; i++) {
        char ds[200];
        desc_str(&r->dout[i], ds, sizeof ds);
        fprintf(info, "wrote %s (%s)\n", r->out_path.v[i], ds);
    }
cleanup:
    /* tensors before their context */
    for (int i = 0; i < MAX_LIST; i++) {
        wgnn_tensor_destroy(r->tout[i]);
        wgnn_tensor_destroy(r->tin[i]);
        r->tout[i] = r->tin[i] = NULL;
    }
    wgnn_context_destroy(ctx);
    return rc;
}

int cmd_op(const global_opts *g, int argc, char **argv) {
    if (argc < 1) return usage_error("op", k_usage_op, "missing the op's name (`wgnn op --list` lists the ops)");
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(k_usage_op, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[0], "--list") == 0) {
        if (argc > 1) return usage_error("op", k_usage_op, "--list takes nothing else ('%s')", argv[1]);
        op_print_list(stdout);
        return CLI_OK;
    }
    if (argv[0][0] == '-')
        return usage_error("op", k_usage_op, "the op's name comes first: wgnn op NAME %s ...", argv[0]);
    const wgnn_op_info *info = op_lookup(argv[0]);
    if (!info) return CLI_USAGE;

    op_run *r = calloc(1, sizeof *r);
    char *help = op_help_text(info, k_usage_op_one);
    char cmd[128], err[ERR_LEN] = "";
    int rc;
    if (!r || !help) {
        rc = set_err(err, "out of host memory");
        goto cleanup;
    }
    r->name = info->name;
    snprintf(cmd, sizeof cmd, "op %s", info->name);
    const opt_spec specs[] = {
        {"--in", OPT_LIST, &r->in_path, 0, MAX_LIST, false}, /* counted against the row below */
        {"--arg", OPT_LIST, &r->args, 0, MAX_LIST, false},
        {"--out", OPT_LIST, &r->out_path, 0, MAX_LIST, true},
        {"--check", OPT_FLAG, &r->check, 0, 0, false},
    };
    parse_result pr = parse_opts(cmd, help, specs, NSPECS(specs), argc - 1, argv + 1, false, NULL);
    if (pr != PARSE_OK) {
        rc = pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
        goto cleanup;
    }
    if ((rc = op_check_usage(cmd, info, r->in_path.n, "--in", &r->args)) != CLI_OK) goto cleanup;
    const char *out_opts[MAX_LIST];
    for (int i = 0; i < r->out_path.n; i++) out_opts[i] = "--out";
    if ((rc = check_outputs(cmd, help, r->out_path.v, out_opts, r->out_path.n)) != CLI_OK)
        goto cleanup;
    rc = run_op(g, r, cmd, err);
cleanup:
    if (r) op_run_release(r);
    free(r);
    free(help);
    return report(rc, err);
}
