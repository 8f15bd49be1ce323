/* spatial_ref.c - CPU references of the spatial family in double precision,
 * index rules as aten computes them (float source indices included). */
#include "ref/spatial_ref.h"

#include "ops/conv.h"

#include <math.h>

float wgnn__upsample_scale(int64_t in, int64_t out, bool align_corners) {
    if (align_corners) return out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
    return (float)in / (float)out;
}

wgnn_status wgnn__ref_conv2d(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0], *w = in[1], *b = n->n_in > 2 ? in[2] : NULL;
    float *y = out[0];
    wgnn__conv2d_geom g;
    wgnn__conv2d_geom_of(n, &g);
    int64_t cg = g.c / g.groups, og = g.o / g.groups;
    for (int64_t s = 0; s < g.n; s++)
        for (int64_t o = 0; o < g.o; o++) {
            int64_t grp = o / og;
            for (int64_t oy = 0; oy < g.ho; oy++)
                for (int64_t ox = 0; ox < g.wo; ox++) {
                    double acc = b ? (double)b[o] : 0.0;
                    for (int64_t ci = 0; ci < cg; ci++) {
                        const float *xp = x + ((s * g.c) + grp * cg + ci) * g.h * g.w;
                        const float *wp = w + (o * cg + ci) * g.kh * g.kw;
                        for (int64_t ky = 0; ky < g.kh; ky++) {
                            int64_t iy = oy * g.sh - g.ph + ky * g.dh;
                            if (iy < 0 || iy >= g.h) continue;
                            for (int64_t kx = 0; kx < g.kw; kx++) {
                                int64_t ix = ox * g.sw - g.pw + kx * g.dw;
                                if (ix < 0 || ix >= g.w) continue;
                                acc += (double)xp[iy * g.w + ix] * (double)wp[ky * g.kw + kx];
                            }
                        }
                    }
                    y[((s * g.o + o) * g.ho + oy) * g.wo + ox] = (float)acc;
                }
        }
    return WGNN_OK;
}

/* Padding never wins (it is -inf); NaN propagates, as aten's
 * `val > max || isnan(val)`. */
wgnn_status wgnn__ref_max_pool2d(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0];
    float *y = out[0];
    wgnn__conv2d_geom g;
    wgnn__conv2d_geom_of(n, &g);
    for (int64_t pl = 0; pl < g.n * g.c; pl++) {
        const float *xp = x + pl * g.h * g.w;
        for (int64_t oy = 0; oy < g.ho; oy++)
            for (int64_t ox = 0; ox < g.wo; ox++) {
                float m = -INFINITY;
                for (int64_t ky = 0; ky < g.kh; ky++) {
                    int64_t iy = oy * g.sh - g.ph + ky * g.dh;
                    if (iy < 0 || iy >= g.h) continue;
                    for (int64_t kx = 0; kx < g.kw; kx++) {
                        int64_t ix = ox * g.sw - g.pw + kx * g.dw;
                        if (ix < 0 || ix >= g.w) continue;
                        float v = xp[iy * g.w + ix];
                        if (v > m || isnan(v)) m = v;
                    }
                }
                y[(pl * g.ho + oy) * g.wo + ox] = m;
            }
    }
    return WGNN_OK;
}

/* The plane count and sizes of an upsample node (self [N, C, H, W]). */
static void up_dims(const wgnn__node *n, int64_t *planes, int64_t *h, int64_t *w, int64_t *ho, int64_t *wo) {
    const wgnn_desc *x = &n->in[0];
    *planes = x->dims[0] * x->dims[1];
    *h = x->dims[2];
    *w = x->dims[3];
    *ho = n->arg[WGNN__UP_SIZE].i[0];
    *wo = n->arg[WGNN__UP_SIZE].i[1];
}

/* aten's nearest_idx: min(floor(dst * (float)(in / out)), in - 1). */
static int64_t nearest_src(int64_t dst, int64_t in, float scale) {
    int64_t s = (int64_t)floorf((float)dst * scale);
    return s < in - 1 ? s : in - 1;
}

wgnn_status wgnn__ref_upsample_nearest2d(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0];
    float *y = out[0];
    int64_t planes, h, w, ho, wo;
    up_dims(n, &planes, &h, &w, &ho, &wo);
    float sh = wgnn__upsample_scale(h, ho, false), sw = wgnn__upsample_scale(w, wo, false);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oy = 0; oy < ho; oy++) {
            int64_t iy = nearest_src(oy, h, sh);
            for (int64_t ox = 0; ox < wo; ox++)
                y[(pl * ho + oy) * wo + ox] = x[(pl * h + iy) * w + nearest_src(ox, w, sw)];
        }
    return WGNN_OK;
}

/* aten's compute_source_index_and_lambda (float math): the two source
 * indices and the weight of the second. */
static void linear_src(int64_t dst, int64_t in, int64_t out, float scale, bool align, int64_t *i0, int64_t *i1,
                       float *l1) {
    if (in == out) {
        *i0 = *i1 = dst;
        *l1 = 0;
        return;
    }
    float r = align ? scale * (float)dst : scale * ((float)dst + 0.5f) - 0.5f;
    if (!align && r < 0) r = 0;
    int64_t f = (int64_t)floorf(r);
    *i0 = f < in - 1 ? f : in - 1;
    float l = r - (float)*i0;
    *l1 = l < 0 ? 0 : (l > 1 ? 1 : l);
    *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
}

wgnn_status wgnn__ref_upsample_bilinear2d(wgnn__node *n, const void *const *in, void *const *out) {
    const float *x = in[0];
    float *y = out[0];
    int64_t planes, h, w, ho, wo;
    up_dims(n, &planes, &h, &w, &ho, &wo);
    bool align = n->arg[WGNN__UP_ALIGN].i[0] != 0;
    float sh = wgnn__upsample_scale(h, ho, align), sw = wgnn__upsample_scale(w, wo, align);
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * h * w;
        for (int64_t oy = 0; oy < ho; oy++) {
            int64_t y0, y1;
            float ly;
            linear_src(oy, h, ho, sh, align, &y0, &y1, &ly);
            for (int64_t ox = 0; ox < wo; ox++) {
                int64_t x0, x1;
                float lx;
                linear_src(ox, w, wo, sw, align, &x0, &x1, &lx);
                double hy = 1.0 - (double)ly, hx = 1.0 - (double)lx;
                double v = hy * (hx * xp[y0 * w + x0] + (double)lx * xp[y0 * w + x1]) +
                           (double)ly * (hx * xp[y1 * w + x0] + (double)lx * xp[y1 * w + x1]);
                y[(pl * ho + oy) * wo + ox] = (float)v;
            }
        }
    }
    return WGNN_OK;
}
