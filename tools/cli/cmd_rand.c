/* cmd_rand.c - `wgnn rand`: a float32 .npy of uniform random values. */
#include "args.h"
#include "commands.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const char k_usage_rand[] =
    "usage: wgnn rand --shape A,B,... --out FILE [options]\n"
    "  writes a float32 .npy of uniform random values in [min, max); FILE may also be\n"
    "  a device, a FIFO or /dev/stdout, written in place\n"
    "options:\n"
    "  --seed N            PRNG (splitmix64) seed, default 0\n"
    "  --min X, --max X    range, default -1 and 1\n"
    "  --mask-rows-inf R   also set rows 0, R, 2R, ... to -inf (a row spans the last dim),\n"
    "                      giving fully-masked rows for `wgnn sdpa --mask`\n";

int cmd_rand(const global_opts *g, int argc, char **argv) {
    (void)g;
    shape sh = {0};
    const char *out_path = NULL;
    long long seed = 0, mask_rows = 0;
    double lo = -1.0, hi = 1.0;
    const opt_spec specs[] = {
        {"--shape", OPT_SHAPE, &sh, 1, WGNN_MAX_RANK, true},
        {"--out", OPT_STR, &out_path, 0, 0, true},
        {"--seed", OPT_INT, &seed, 0, INT64_MAX, false},
        {"--min", OPT_NUM, &lo, 0, 0, false},
        {"--max", OPT_NUM, &hi, 0, 0, false},
        {"--mask-rows-inf", OPT_INT, &mask_rows, 1, INT64_MAX, false},
    };
    parse_result pr = parse_opts("rand", k_usage_rand, specs, NSPECS(specs), argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;
    if (lo > hi) return usage_error("rand", k_usage_rand, "--min %g is above --max %g", lo, hi);
    if (fabs(lo) > FLT_MAX || fabs(hi) > FLT_MAX)
        return usage_error("rand", k_usage_rand, "--min %g / --max %g: a bound past float32's range (+-%g)", lo, hi,
                           (double)FLT_MAX);
    if (check_outputs("rand", k_usage_rand, &out_path, (const char *const[]){"--out"}, 1) != CLI_OK) return CLI_USAGE;

    char err[ERR_LEN] = "";
    uint64_t n = 0, state = (uint64_t)seed;
    float *x = NULL;
    int rc = CLI_OK;
    if (!shape_numel(sh.rank, sh.dims, &n)) {
        rc = set_err(err, "rand: --shape has too many elements");
        goto cleanup;
    }
    if (!(x = alloc_floats(n, err))) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    fill_uniform(x, n, &state, lo, hi);
    if (mask_rows > 0) {
        uint64_t cols = (uint64_t)sh.dims[sh.rank - 1];
        for (uint64_t r = 0; r < n / cols; r += (uint64_t)mask_rows)
            for (uint64_t c = 0; c < cols; c++) x[r * cols + c] = -INFINITY;
    }
    if (save_npy(out_path, WGNN_F32, sh.rank, sh.dims, x, err, sizeof err) != WGNN_OK) {
        rc = CLI_FAIL;
        goto cleanup;
    }
    char ds[160];
    dims_str(sh.rank, sh.dims, ds, sizeof ds);
    fprintf(info_stream(out_path), "wrote %s (float32 %s)\n", out_path, ds);
cleanup:
    free(x);
    return report(rc, err);
}
