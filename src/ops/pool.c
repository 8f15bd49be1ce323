/* pool.c - the spatial family's per-plane rows: max_pool2d,
 * upsample_nearest2d, upsample_bilinear2d (float32, NCHW).
 *
 * Each output element reads a small window of one input plane, so every
 * op is one thread per output element over [planes, Ho, Wo] (planes = N*C):
 * shaders/max_pool2d.wgsl, and shaders/upsample2d.wgsl with the mode
 * (nearest, bilinear, bilinear with align_corners) as a prelude const. Both
 * take one Params struct. Planes are split over dispatches (offset
 * bindings) where the input or output passes one storage binding. Source
 * indices are computed in float32 exactly as aten does (the scale is the
 * host's float in/out), so they match PyTorch's CPU and CUDA kernels. */
#include "conv.h"

#include "ref/spatial_ref.h"

#include <stdio.h>
#include <string.h>

#define PLANE_PARAMS(X, S)                                                  \
    X(S, u32x4, dims)    /* H, W, Ho, Wo */                                 \
    X(S, i32x4, win)     /* max_pool2d: stride h, w, padding h, w */        \
    X(S, u32x4, win2)    /* max_pool2d: dilation h, w, kernel h, w */       \
    X(S, f32, scale_h)   /* upsample: aten's source-index scales */         \
    X(S, f32, scale_w)                                                      \
    X(S, u32, n_items)   /* output elements of this dispatch */             \
    X(S, u32, x_off)     /* element offset of the first plane in X's window */ \
    X(S, u32, y_off)                                                        \
    X(S, u32, neg_inf)   /* max_pool2d: 0xff800000 (a WGSL constant cannot be infinite) */
WGNN__PARAMS_STRUCT(plane_params, PLANE_PARAMS);
WGNN__PARAMS_CHECK(plane_params, PLANE_PARAMS)

#define I31 2147483647LL

/* ---- checks -------------------------------------------------------------------- */

static wgnn_status max_pool2d_check(wgnn__node *n) {
    wgnn_status s = wgnn__spatial_need_f32(n, 0, "self");
    if (s == WGNN_OK) s = wgnn__spatial_input(n, "self", true);
    if (s != WGNN_OK) return s;
    int64_t k[2], st[2], pd[2], dl[2];
    if ((s = wgnn__pair_arg(n, WGNN__POOL_KERNEL, 1, NULL, k)) != WGNN_OK) return s;
    if ((s = wgnn__pair_arg(n, WGNN__POOL_STRIDE, 1, k, st)) != WGNN_OK) return s; /* empty: kernel_size */
    if ((s = wgnn__pair_arg(n, WGNN__POOL_PADDING, 0, NULL, pd)) != WGNN_OK) return s;
    if ((s = wgnn__pair_arg(n, WGNN__POOL_DILATION, 1, NULL, dl)) != WGNN_OK) return s;
    if (pd[0] > k[0] / 2 || pd[1] > k[1] / 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "padding=%lld,%lld must be at most half of kernel_size=%lld,%lld (as PyTorch)",
                              (long long)pd[0], (long long)pd[1], (long long)k[0], (long long)k[1]);
    wgnn__conv2d_geom g;
    wgnn__conv2d_geom_of(n, &g);
    const wgnn_desc *x = &n->in[0];
    if (g.ho < 1 || g.wo < 1) {
        char xs[160];
        wgnn__dims_str(x, xs, sizeof xs);
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                              "self %s gives an output of %lld x %lld, too small (kernel_size=%lld,%lld with "
                              "dilation=%lld,%lld spans %lld x %lld; padded input %lld x %lld)",
                              xs, (long long)g.ho, (long long)g.wo, (long long)k[0], (long long)k[1], (long long)dl[0],
                              (long long)dl[1], (long long)(dl[0] * (k[0] - 1) + 1), (long long)(dl[1] * (k[1] - 1) + 1),
                              (long long)(g.h + 2 * g.ph), (long long)(g.w + 2 * g.pw));
    }
    n->n_out = 1;
    n->out[0] = *x;
    n->out[0].dims[x->rank - 2] = g.ho;
    n->out[0].dims[x->rank - 1] = g.wo;
    return WGNN_OK;
}

static wgnn_status upsample_check(wgnn__node *n) {
    wgnn_status s = wgnn__spatial_need_f32(n, 0, "self");
    if (s == WGNN_OK) s = wgnn__spatial_input(n, "self", false);
    if (s != WGNN_OK) return s;
    const wgnn__arg *os = &n->arg[WGNN__UP_SIZE];
    if (os->n != 2)
        return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT, "output_size has %d values; it must be 2 (Ho,Wo)", os->n);
    for (int i = 0; i < 2; i++)
        if (os->i[i] < 1 || os->i[i] > I31)
            return wgnn__node_err(n, WGNN_ERR_INVALID_ARGUMENT,
                                  "output_size=%lld,%lld: each value must be >= 1 and < 2^31", (long long)os->i[0],
                                  (long long)os->i[1]);
    n->n_out = 1;
    n->out[0] = n->in[0];
    n->out[0].dims[2] = os->i[0];
    n->out[0].dims[3] = os->i[1];
    return WGNN_OK;
}

/* ---- plans ---------------------------------------------------------------------- */

/* One kernel over [planes, Ho, Wo], split over planes where a window does
 * not fit one binding. q holds everything but n_items and the offsets. */
static wgnn_status plan_planes(wgnn_context *ctx, wgnn__plan *p, const char *what, const char *kernel,
                               const char *mode, const wgnn_tensor *x, wgnn_tensor *y, plane_params q) {
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 256);
    char pre[1024];
    snprintf(pre, sizeof pre, "%sconst WG: u32 = %uu;\n%s", WGNN__PARAMS_WGSL(PLANE_PARAMS), wg, mode);
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, kernel, pre, NULL, 0, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t in_unit = (uint64_t)q.dims[0] * q.dims[1], out_unit = (uint64_t)q.dims[2] * q.dims[3];
    uint64_t planes = x->numel / in_unit;
    uint64_t units[2] = {in_unit, out_unit};
    uint64_t per = wgnn__units_per_window(ctx, units, 2, planes);
    if (per == 0)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "%s: one %s plane (%llu bytes) does not fit one storage binding "
                         "(maxStorageBufferBindingSize %llu bytes, less minStorageBufferOffsetAlignment %u)",
                         what, in_unit > out_unit ? "input" : "output",
                         (unsigned long long)((in_unit > out_unit ? in_unit : out_unit) * 4u),
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize,
                         ctx->limits.minStorageBufferOffsetAlignment);
    wgnn__binding xb = {x->buf, 0, 0, 0}, yb = {y->buf, 0, 0, 0};
    for (uint64_t p0 = 0; p0 < planes; p0 += per) {
        uint64_t cnt = planes - p0 < per ? planes - p0 : per;
        uint64_t items = cnt * out_unit;
        uint32_t gx, gy;
        s = wgnn__compute_2d_workgroup_count(ctx, (items + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                             what, &gx, &gy);
        if (s != WGNN_OK) return s;
        q.n_items = (uint32_t)items;
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &q, sizeof q, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        plane_params *qd = (plane_params *)d->params; /* the window offsets are known once bound */
        qd->x_off = wgnn__bind_window(ctx, d, &xb, p0 * in_unit, cnt * in_unit);
        qd->y_off = wgnn__bind_window(ctx, d, &yb, p0 * out_unit, cnt * out_unit);
    }
    return WGNN_OK;
}

static wgnn_status max_pool2d_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                   wgnn_tensor *const *out, wgnn__plan *p) {
    wgnn__conv2d_geom g;
    wgnn__conv2d_geom_of(n, &g);
    plane_params q;
    memset(&q, 0, sizeof q);
    q.dims[0] = (uint32_t)g.h, q.dims[1] = (uint32_t)g.w, q.dims[2] = (uint32_t)g.ho, q.dims[3] = (uint32_t)g.wo;
    q.win[0] = (int32_t)g.sh, q.win[1] = (int32_t)g.sw, q.win[2] = (int32_t)g.ph, q.win[3] = (int32_t)g.pw;
    q.win2[0] = (uint32_t)g.dh, q.win2[1] = (uint32_t)g.dw, q.win2[2] = (uint32_t)g.kh, q.win2[3] = (uint32_t)g.kw;
    q.neg_inf = 0xff800000u;
    return plan_planes(ctx, p, "max_pool2d", "max_pool2d", "", in[0], out[0], q);
}

static wgnn_status upsample_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                 wgnn_tensor *const *out, wgnn__plan *p, int mode) {
    static const char *const modes[3] = {"const MODE: u32 = 0u;\n", "const MODE: u32 = 1u;\n",
                                         "const MODE: u32 = 2u;\n"};
    const wgnn_tensor *x = in[0];
    int64_t ho = n->arg[WGNN__UP_SIZE].i[0], wo = n->arg[WGNN__UP_SIZE].i[1];
    bool align = mode == 2;
    plane_params q;
    memset(&q, 0, sizeof q);
    q.dims[0] = (uint32_t)x->dims[2], q.dims[1] = (uint32_t)x->dims[3];
    q.dims[2] = (uint32_t)ho, q.dims[3] = (uint32_t)wo;
    q.scale_h = wgnn__upsample_scale(x->dims[2], ho, align);
    q.scale_w = wgnn__upsample_scale(x->dims[3], wo, align);
    return plan_planes(ctx, p, n->op->info.name, "upsample2d", modes[mode], x, out[0], q);
}

static wgnn_status upsample_nearest2d_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                           wgnn_tensor *const *out, wgnn__plan *p) {
    return upsample_plan(ctx, n, in, out, p, 0);
}

static wgnn_status upsample_bilinear2d_plan(wgnn_context *ctx, const wgnn__node *n, const wgnn_tensor *const *in,
                                            wgnn_tensor *const *out, wgnn__plan *p) {
    return upsample_plan(ctx, n, in, out, p, n->arg[WGNN__UP_ALIGN].i[0] ? 2 : 1);
}

/* ---- rows ------------------------------------------------------------------------- */

static const wgnn_op_arg_info k_max_pool2d_args[] = {
    {"kernel_size", "int[]", NULL, "window size: one value (both dims) or h,w; >= 1"},
    {"stride", "int[]", "", "step of the window: one value or h,w; unset or empty: kernel_size"},
    {"padding", "int[]", "0,0", "implicit -inf on both sides: one value or h,w; at most half of kernel_size"},
    {"dilation", "int[]", "1,1", "spacing of the window taps: one value or h,w; >= 1"},
    {"ceil_mode", "bool", "false", "round the output size up (a last window must still start inside the input "
                                   "or its left padding)"},
};

const wgnn__op wgnn__op_max_pool2d = {
    {"max_pool2d", "2-D max pooling (torch.nn.functional.max_pool2d, values only); NaN propagates", "self",
     "self [N, C, H, W] or [C, H, W] -> [N, C, Ho, Wo], Ho = floor_or_ceil((H + 2*padding - dilation*(k-1) - 1) / "
     "stride) + 1; float32",
     1, 1, 5, k_max_pool2d_args},
    max_pool2d_check,
    max_pool2d_plan,
    wgnn__ref_max_pool2d,
    false,
};

static const wgnn_op_arg_info k_upsample_nearest2d_args[] = {
    {"output_size", "int[]", NULL, "Ho,Wo (each >= 1)"},
};

const wgnn__op wgnn__op_upsample_nearest2d = {
    {"upsample_nearest2d",
     "nearest-neighbour resize (F.interpolate mode 'nearest' with size=): src = min(floor(dst * in/out), in-1)",
     "self", "self [N, C, H, W] -> [N, C, Ho, Wo]; float32", 1, 1, 1, k_upsample_nearest2d_args},
    upsample_check,
    upsample_nearest2d_plan,
    wgnn__ref_upsample_nearest2d,
    false,
};

static const wgnn_op_arg_info k_upsample_bilinear2d_args[] = {
    {"output_size", "int[]", NULL, "Ho,Wo (each >= 1)"},
    {"align_corners", "bool", "false", "true: corner pixels' centres align (src = dst*(in-1)/(out-1)); false: "
                                       "src = (dst+0.5)*in/out - 0.5, clamped at 0"},
};

const wgnn__op wgnn__op_upsample_bilinear2d = {
    {"upsample_bilinear2d", "bilinear resize (F.interpolate mode 'bilinear' with size=)", "self",
     "self [N, C, H, W] -> [N, C, Ho, Wo]; float32", 1, 1, 2, k_upsample_bilinear2d_args},
    upsample_check,
    upsample_bilinear2d_plan,
    wgnn__ref_upsample_bilinear2d,
    false,
};
