/* quant.c - the row "linear_q8": a linear layer on int8 weights with one
 * float32 scale per output (weight-only quantization, as the seed's
 * quantized_linear), shaders/linear_q8.wgsl.
 *
 * Few rows (decoding) read the int8 words directly (shaders/linear_q8.wgsl);
 * from Q8_GEMM_ROWS rows on (prefill) W is dequantized once into a float32
 * scratch buffer (shaders/dequant_q8.wgsl) and linear's GEMM runs on it.
 *
 * Weight format: W int8 [N, K] as int32 [N, K/4], each word four signed
 * bytes, k ascending from the low byte (numpy: w8.view(np.int32) of a C
 * order int8 array); the output is
 *     y[m, j] = sum_k x[m, k] * W[j, k] * scale[j] + bias[j].
 * Quantizing (done by the caller, e.g. src/models/qwen3.c) with
 * scale[j] = max_k |w[j, k]| / 127 and W = round(w / scale) keeps every
 * weight within scale / 2 of its float value. */
#include "gemm.h"
#include "op.h"
#include "ref/gemm_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define Q8_PARAMS(X, S) X(S, u32, m) X(S, u32, n) X(S, u32, k4) X(S, u32, bias_rs) X(S, u32, x_rs) X(S, f32, eps)
WGNN__PARAMS_STRUCT(q8_params, Q8_PARAMS);
WGNN__PARAMS_CHECK(q8_params, Q8_PARAMS)
#define DQ_PARAMS(X, S) X(S, u32, n) X(S, u32, k4)
WGNN__PARAMS_STRUCT(dq_params, DQ_PARAMS);
WGNN__PARAMS_CHECK(dq_params, DQ_PARAMS)

enum { Q8_ACT, Q8_PRE, Q8_EPS };

/* Rows past which the weights are dequantized once into scratch and the
 * GEMM runs (prefill); below, the GEMV-like kernel reads int8 directly. */
#define Q8_GEMM_ROWS 16u

/* Workgroups the GEMV must still have at two columns a thread (x reused
 * across both); with fewer, one column a thread keeps more SMs busy (132 on
 * an H200, about 8 workgroups of 256 resident on each). A guess: tune it. */
#define Q8_NC_GROUPS 2048u

/* Many rows: W -> float32 scratch (scale applied), then linear's GEMM on
 * it. *done false (nothing planned) when the scratch would pass a binding. */
static wgnn_status plan_dequant_gemm(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                     wgnn_tensor *const *out, wgnn__plan *p, uint64_t rows, bool *done) {
    uint64_t nn = (uint64_t)n->in[1].dims[0], k4 = (uint64_t)n->in[1].dims[1], k = 4 * k4;
    *done = false;
    if (nn * k * 4u > ctx->limits.maxStorageBufferBindingSize || nn * k4 > UINT32_MAX) return WGNN_OK;
    int sc = wgnn__plan_scratch(p, nn * k * 4u);
    if (sc < 0) return WGNN_OK;
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256), gx, gy;
    char pre[512];
    snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\n", WGNN__PARAMS_WGSL(DQ_PARAMS), wg);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "dequant_q8", pre, NULL, 0, &pipe);
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, (nn * k4 + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                             "linear_q8", &gx, &gy);
    if (s != WGNN_OK) return s;
    dq_params dp = {(uint32_t)nn, (uint32_t)k4};
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &dp, sizeof dp, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind(d, in[1]->buf, 0, 0);
    wgnn__plan_bind(d, in[2]->buf, 0, 0);
    wgnn__plan_bind_scratch(d, (uint32_t)sc, 0, 0);
    bool bias;
    int gw = wgnn__linear_norm_input(n, 3, Q8_PRE, &bias);
    wgnn__gemm g = {.m = (uint32_t)rows, .n = (uint32_t)nn, .k = (uint32_t)k, .batch = 1,
                    .a = {in[0]->buf, -1, 0, 0}, .b = {NULL, sc, 0, 0}, .c = {out[0]->buf, -1, 0, 0},
                    .bias = bias ? (wgnn__gemm_operand){in[3]->buf, -1, 0, 0} : (wgnn__gemm_operand){NULL, -1, 0, 0},
                    .lda = k, .ldb = k, .ldc = nn, .bias_rs = bias && n->in[3].rank > 1 ? nn : 0, .bias_cs = 1,
                    .trans_b = true, .alpha = 1, .beta = 1, .act = (wgnn__act)n->arg[Q8_ACT].i[0],
                    .pre = (wgnn__pre)n->arg[Q8_PRE].i[0], .eps = (float)n->arg[Q8_EPS].f,
                    .prew = gw >= 0 ? in[gw]->buf : NULL};
    if (g.pre == WGNN__PRE_SWIGLU) g.lda = 2 * k;
    *done = true;
    return wgnn__gemm_plan(ctx, p, &g);
}

static wgnn_status q8_check(wgnn__node *n) {
    bool has_bias;
    int gw = wgnn__linear_norm_input(n, 3, Q8_PRE, &has_bias);
    const wgnn_desc *x = &n->in[0], *w = &n->in[1], *sc = &n->in[2], *b = has_bias ? &n->in[3] : NULL;
    char xs[160], ws[160], ss[160];
    wgnn__dims_str(x, xs, sizeof xs);
    wgnn__dims_str(w, ws, sizeof ws);
    wgnn__dims_str(sc, ss, sizeof ss);
    if (x->dtype != WGNN_F32 || x->rank < 1)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "input is %s %s; it must be float32 [..., K]",
                              wgnn_dtype_name(x->dtype), xs);
    if (w->dtype != WGNN_I32 || w->rank != 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "weight is %s %s; it must be int32 [N, K/4]: int8 weights packed four to a word",
                              wgnn_dtype_name(w->dtype), ws);
    bool glu = n->arg[Q8_PRE].i[0] == WGNN__PRE_SWIGLU;
    int64_t k = x->dims[x->rank - 1] / (glu ? 2 : 1);
    if (k % 4 != 0 || w->dims[1] * 4 != k || (glu && x->dims[x->rank - 1] % 2 != 0))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "input %s has K=%lld%s but weight %s holds %lld int8 per row: K must be a multiple of 4 "
                              "and equal 4 * weight.dims[1]",
                              xs, (long long)k, glu ? " (half its last dim: prologue=swiglu)" : "", ws,
                              (long long)(w->dims[1] * 4));
    if (!(n->arg[Q8_EPS].f >= 0) || !isfinite(n->arg[Q8_EPS].f))
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "eps %g must be finite and >= 0", n->arg[Q8_EPS].f);
    wgnn_status s = wgnn__linear_norm_weight_check(n, gw, 3, k, "K");
    if (s != WGNN_OK) return s;
    if (sc->dtype != WGNN_F32 || sc->rank != 1 || sc->dims[0] != w->dims[0])
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "scale is %s %s; it must be float32 [N] = [%lld]",
                              wgnn_dtype_name(sc->dtype), ss, (long long)w->dims[0]);
    n->n_out = 1;
    n->out[0] = *x;
    n->out[0].dims[x->rank - 1] = w->dims[0];
    if (b) {
        if (b->dtype != WGNN_F32 || !wgnn__linear_bias_ok(b, &n->out[0], w->dims[0])) {
            char bs[160], os[160];
            wgnn__dims_str(b, bs, sizeof bs);
            wgnn__dims_str(&n->out[0], os, sizeof os);
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "bias is %s %s; it must be float32 [N] = [%lld] or of the output's shape %s",
                                  wgnn_dtype_name(b->dtype), bs, (long long)w->dims[0], os);
        }
    }
    return WGNN_OK;
}

static wgnn_status q8_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                           wgnn_tensor *const *out, wgnn__plan *p) {
    uint64_t rows = wgnn__desc_numel(&n->in[0]) / (uint64_t)n->in[0].dims[n->in[0].rank - 1];
    uint64_t nn = (uint64_t)n->in[1].dims[0], k4 = (uint64_t)n->in[1].dims[1];
    uint32_t prol = (uint32_t)n->arg[Q8_PRE].i[0];
    uint64_t x_rs = prol == WGNN__PRE_SWIGLU ? 2 * k4 : k4;
    uint64_t lim = ctx->limits.maxStorageBufferBindingSize;
    const char *names[3] = {"input", "weight", "output"};
    uint64_t sizes[3] = {in[0]->nbytes, in[1]->nbytes, out[0]->nbytes};
    for (int i = 0; i < 3; i++)
        if (sizes[i] > lim)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "linear_q8: the %s holds %llu bytes, past the device's maxStorageBufferBindingSize (%llu)",
                             names[i], (unsigned long long)sizes[i], (unsigned long long)lim);
    if (rows * x_rs > UINT32_MAX || nn * k4 > UINT32_MAX || rows * nn > UINT32_MAX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "linear_q8: more than 2^32 elements in one operand");
    if (rows >= Q8_GEMM_ROWS && rows <= UINT32_MAX) {
        bool done;
        wgnn_status s = plan_dequant_gemm(ctx, n, in, out, p, rows, &done);
        if (s != WGNN_OK || done) return s;
    }
    /* MR rows of x per workgroup: decoding's few rows in one block, else
     * blocks of 8 (W is read once per block) */
    uint32_t mr = rows <= 4 ? (uint32_t)rows : 8u;
    /* lanes a row of W: each walks it in about two steps of U 16-byte
     * loads (four words each; U in flight a lane, WGNN_GEMV_UNROLL), and
     * no more lanes than words */
    uint32_t unroll = ctx->knobs.gemv_unroll ? ctx->knobs.gemv_unroll : 1u, wg;
    uint32_t lanes = wgnn__gemv_lanes(ctx, k4, 8u * unroll, &wg);
    while (lanes > 1 && lanes > k4) lanes /= 2;
    /* NC columns a thread (x, and the norm's weight, loaded once for NC
     * rows of W) where N leaves Q8_NC_GROUPS workgroups even so: fewer
     * threads would starve the GPU. Four for a few rows (registers: MR *
     * NC accumulators and NC * 16 dequantized weights): Qwen3-0.6B's q8
     * lm_head (151936 columns, rms_norm_weight) 128 -> 104 us on the H200,
     * where 8 and the layer products' 1 -> 2 or 4 gained nothing (session
     * 16, call 7); WGNN_Q8_NC forces a count. */
    uint32_t nj = wg / lanes, nc = nn >= (uint64_t)nj * 2u * Q8_NC_GROUPS ? 2u : 1u;
    if (mr <= 4 && nn >= (uint64_t)nj * 4u * Q8_NC_GROUPS) nc = 4u;
    if (ctx->knobs.q8_nc) nc = ctx->knobs.q8_nc;
    /* whole rows 16-byte aligned: W read as vec4<u32>, one load a step */
    bool v16 = k4 % 4 == 0;
    uint64_t row_blocks = (rows + mr - 1) / mr;
    if (row_blocks > ctx->limits.maxComputeWorkgroupsPerDimension)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "linear_q8: %llu rows need more row blocks than a grid dim holds",
                         (unsigned long long)rows);
    char pre[1536];
    bool bias;
    int gw = wgnn__linear_norm_input(n, 3, Q8_PRE, &bias);
    snprintf(pre, sizeof pre,
             "%sconst WG: u32 = %uu;\nconst LANES: u32 = %uu;\nconst MR: u32 = %uu;\nconst NC: u32 = %uu;\n"
             "const U: u32 = %uu;\nconst HAS_BIAS: bool = %s;\nconst ACT: u32 = %uu;\nconst PRE: u32 = %uu;\n%s%s",
             WGNN__PARAMS_WGSL(Q8_PARAMS), wg, lanes, mr, nc, unroll, bias ? "true" : "false",
             (unsigned)n->arg[Q8_ACT].i[0], prol,
             v16 ? "alias WQ = vec4<u32>;\n"
                   "fn ldq(i: u32) -> vec4<u32> { return W[i / 4u]; }\n"
                   "fn ld1(i: u32) -> u32 { return W[i / 4u][i % 4u]; }\n"
                 : "alias WQ = u32;\n"
                   "fn ldq(i: u32) -> vec4<u32> { return vec4<u32>(W[i], W[i + 1u], W[i + 2u], W[i + 3u]); }\n"
                   "fn ld1(i: u32) -> u32 { return W[i]; }\n",
             gw >= 0 ? "@group(0) @binding(6) var<storage, read> NW: array<vec4<f32>>;\n"
                       "fn norm_w(i: u32) -> vec4<f32> { return NW[i]; }\n"
                     : "fn norm_w(i: u32) -> vec4<f32> { return vec4<f32>(1.0); }\n");
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "linear_q8", pre, NULL, 0, &pipe);
    uint32_t gx, gy;
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, (nn + nj * nc - 1) / (nj * nc),
                                             ctx->limits.maxComputeWorkgroupsPerDimension, "linear_q8", &gx, &gy);
    if (s != WGNN_OK) return s;
    q8_params qp = {(uint32_t)rows, (uint32_t)nn, (uint32_t)k4, bias && n->in[3].rank > 1 ? (uint32_t)nn : 0u,
                    (uint32_t)x_rs, (float)n->arg[Q8_EPS].f};
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &qp, sizeof qp, gx, gy, (uint32_t)row_blocks);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind(d, in[0]->buf, 0, 0);
    wgnn__plan_bind(d, in[1]->buf, 0, 0);
    wgnn__plan_bind(d, in[2]->buf, 0, 0);
    wgnn__plan_bind(d, out[0]->buf, 0, 0);
    wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, bias ? in[3]->buf : NULL, false), 0, 0);
    if (gw >= 0) wgnn__plan_bind(d, in[gw]->buf, 0, 0);
    return WGNN_OK;
}

static wgnn_status q8_ref(wgnn__node *n, const void *const *in, void *const *out) {
    bool has_bias;
    int gw = wgnn__linear_norm_input(n, 3, Q8_PRE, &has_bias);
    const float *x = in[0], *sc = in[2], *bias = has_bias ? in[3] : NULL;
    const int8_t *w = in[1]; /* little-endian words: byte order is k order */
    int pre = (int)n->arg[Q8_PRE].i[0];
    uint64_t k = (uint64_t)n->in[1].dims[1] * 4u, nn = (uint64_t)n->in[1].dims[0];
    uint64_t rows = wgnn__desc_numel(&n->in[0]) / (pre == WGNN__PRE_SWIGLU ? 2 * k : k);
    float *xp = NULL;
    if (pre) {
        xp = wgnn__ref_prologue(x, rows, k, pre, n->arg[Q8_EPS].f, gw >= 0 ? in[gw] : NULL);
        if (!xp) return wgnn__node_err(n, WGNN_ERR_OUT_OF_MEMORY, "out of host memory");
        x = xp;
    }
    float *y = out[0];
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t j = 0; j < nn; j++) {
            double acc = 0;
            for (uint64_t i = 0; i < k; i++) acc += (double)x[r * k + i] * (double)w[j * k + i];
            acc *= sc[j];
            if (bias) acc += bias[n->in[3].rank > 1 ? r * nn + j : j];
            y[r * nn + j] = (float)acc;
        }
    free(xp);
    wgnn__ref_act(y, rows * nn, (int)n->arg[Q8_ACT].i[0]);
    return WGNN_OK;
}

static const wgnn_op_arg_info k_q8_args[] = {
    {"activation", WGNN__ACT_NAMES, "none", "applied to the result, bias included, as linear's"},
    {"prologue", "none|rms_norm|swiglu|rms_norm_weight", "none",
     "done to the input first, as linear's (rms_norm_weight: the norm's weight [K] is the last input; int8 rows "
     "keep their precision where the weight is not folded into them)"},
    {"eps", "float", "1e-6", "rms_norm's epsilon"},
};

const wgnn__op wgnn__op_linear_q8 = {
    {"linear_q8",
     "input . (weight * scale)^T + bias on int8 weights with a float32 scale per output (weight-only quantization)",
     "input, weight, scale, [bias], [norm_weight]",
     "input [..., K] float32 (K % 4 == 0; [..., 2K] with prologue=swiglu), weight int32 [N, K/4] (int8 [N, K] packed four to a word, k ascending "
     "from the low byte: numpy's w8.view(np.int32)), scale float32 [N], bias float32 [N] or of the output's "
     "shape -> [..., N] float32",
     3, 5, 3, k_q8_args},
    q8_check,
    q8_plan,
    q8_ref,
    false,
};
