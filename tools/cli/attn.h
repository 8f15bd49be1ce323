/* attn.h - attention problems shared by sdpa, bench sdpa and demo. */
#ifndef WGNN_CLI_ATTN_H
#define WGNN_CLI_ATTN_H

#include "args.h"

/* Host arrays of one attention problem (mask may be NULL). */
typedef struct host_attn {
    const float *q, *k, *v, *mask;
} host_attn;

/* Device side: the tensors and the options sdpa runs with. */
typedef struct attn {
    wgnn_tensor *q, *k, *v, *mask, *out;
    wgnn_sdpa_options opts;
} attn;

typedef struct check_result {
    double max_abs, max_rel;
    uint64_t n_bad;
    bool pass;
    double atol, rtol;
} check_result;

void attn_release(attn *a);
/* Compares the GPU output of a with wgnn_ref_sdpa on the host inputs h. */
int check_against_ref(const attn *a, const host_attn *h, const float *gpu, check_result *r, char *err);
void print_check(FILE *f, const check_result *r);
/* Downloads a's output into a fresh float32 host array (float16 outputs are
 * widened, exactly). */
int download_out(wgnn_context *ctx, const attn *a, float **out, char *err);
/* Uploads n floats as a tensor of dtype dt (float16: rounded, and the host
 * copy rounded the same way so a reference sees what the GPU sees). */
int upload_as(wgnn_context *ctx, wgnn_dtype dt, int rank, const int64_t *dims, float *data, uint64_t n,
              wgnn_tensor **out, char *err);
/* Random q, k, v in [-1, 1) (and a mask in [-1, 0) when with_mask) for
 * [B, H, S_q, S_kv, D], on the host (into store[4], caller frees) and on the
 * device. */
int random_problem(wgnn_context *ctx, const int64_t s5[5], bool with_mask, wgnn_sdpa_impl impl, wgnn_dtype dt,
                   float *store[4], host_attn *h, attn *a, char *err);
/* warmup untimed runs, then iters timed ones (iters >= 1). */
int time_sdpa(wgnn_context *ctx, const attn *a, int warmup, int iters, timing *t, char *err);
double sdpa_tflops(const int64_t s5[5], double ms);

#endif /* WGNN_CLI_ATTN_H */
