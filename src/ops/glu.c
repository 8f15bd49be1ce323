/* glu.c - the row "swiglu": silu(x[..., :n]) * x[..., n:] over the last dim
 * of x [..., 2n] (a gated MLP's gate and up projections computed as one
 * matrix, then joined: Llama's, Qwen's), shaders/swiglu.wgsl. Not an aten
 * op: PyTorch writes it F.silu(gate) * up. float32. */
#include "op.h"

#include <math.h>
#include <stdio.h>

#define SWIGLU_PARAMS(X, S) X(S, u32, units) X(S, u32, n_units)
WGNN__PARAMS_STRUCT(swiglu_params, SWIGLU_PARAMS);
WGNN__PARAMS_CHECK(swiglu_params, SWIGLU_PARAMS)

static wgnn_status swiglu_check(wgnn__node *n) {
    const wgnn_desc *x = &n->in[0];
    char xs[160];
    wgnn__dims_str(x, xs, sizeof xs);
    if (x->dtype != WGNN_F32 || x->rank < 1 || x->dims[x->rank - 1] % 2 != 0)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "self is %s %s; it must be float32 [..., 2n] (gate then up along the last dim)",
                              wgnn_dtype_name(x->dtype), xs);
    n->n_out = 1;
    n->out[0] = *x;
    n->out[0].dims[x->rank - 1] /= 2;
    return WGNN_OK;
}

wgnn_status wgnn__plan_swiglu_rows(wgnn_context *ctx, wgnn__plan *p, wgnn__binding x, wgnn__binding y,
                                   uint64_t rows, uint64_t half) {
    uint64_t total = rows * half;
    bool v4 = half % 4 == 0;
    uint64_t units = v4 ? total / 4 : total, n_units = v4 ? half / 4 : half;
    if (total * 8u > ctx->limits.maxStorageBufferBindingSize || units > UINT32_MAX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "swiglu: self holds %llu bytes, past the device's maxStorageBufferBindingSize (%llu)",
                         (unsigned long long)(total * 8u),
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256), gx, gy;
    char pre[512];
    snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\n%s", WGNN__PARAMS_WGSL(SWIGLU_PARAMS), wg,
             v4 ? "alias XT = vec4<f32>;\nfn silu_t(x: XT) -> XT { return act_silu(x); }\n"
                : "alias XT = f32;\nfn silu_t(x: XT) -> XT { return act_silu(vec4<f32>(x)).x; }\n");
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "swiglu", pre, NULL, 0, &pipe);
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, (units + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                             "swiglu", &gx, &gy);
    if (s != WGNN_OK) return s;
    swiglu_params sp = {(uint32_t)units, (uint32_t)n_units};
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &sp, sizeof sp, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind_range(d, &x, 0, x.size);
    wgnn__plan_bind_range(d, &y, 0, y.size);
    return WGNN_OK;
}

static wgnn_status swiglu_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                               wgnn_tensor *const *out, wgnn__plan *p) {
    uint64_t half = (uint64_t)n->out[0].dims[n->out[0].rank - 1];
    return wgnn__plan_swiglu_rows(ctx, p, (wgnn__binding){in[0]->buf, 0, 0, 0}, (wgnn__binding){out[0]->buf, 0, 0, 0},
                                  out[0]->numel / half, half);
}

static wgnn_status swiglu_ref(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0];
    float *y = out[0];
    uint64_t half = (uint64_t)n->out[0].dims[n->out[0].rank - 1], rows = wgnn__desc_numel(&n->out[0]) / half;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t j = 0; j < half; j++) {
            double g = x[r * 2 * half + j], u = x[r * 2 * half + half + j];
            y[r * half + j] = (float)(g / (1 + exp(-g)) * u);
        }
    return WGNN_OK;
}

const wgnn__op wgnn__op_swiglu = {
    {"swiglu", "silu(self[..., :n]) * self[..., n:] (a gated MLP: gate and up as one matrix; not an aten op)",
     "self", "self [..., 2n] float32 -> [..., n]", 1, 1, 0, NULL},
    swiglu_check,
    swiglu_plan,
    swiglu_ref,
    false,
};
