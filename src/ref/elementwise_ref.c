/* elementwise_ref.c - CPU references of the elementwise family, in double
 * precision: values are read exactly, computed in double and rounded once
 * to float32 (float16 results: to float32, then to float16, as PyTorch
 * computes half ops in float). Float arguments (alpha, negative_slope) are
 * first rounded to float32, as PyTorch does for float tensors. */
#include "ref/elementwise_ref.h"

#include <math.h>
#include <string.h>

/* ---- float16 ------------------------------------------------------------- */

uint16_t wgnn__ref_f16_bits(float f) {
    uint16_t sign = signbit(f) ? 0x8000u : 0u;
    if (isnan(f)) return (uint16_t)(sign | 0x7E00u);
    double a = fabs((double)f);
    if (a >= 65520.0) return (uint16_t)(sign | 0x7C00u); /* halfway past 65504 and up */
    if (a < 0x1p-14) return (uint16_t)(sign | (uint16_t)rint(a * 0x1p24)); /* 1024: the smallest normal */
    int e;
    double m = frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
    double mant = rint((2.0 * m - 1.0) * 1024.0); /* exact product; rint rounds half to even */
    int bexp = e - 1 + 15;
    if (mant == 1024.0) {
        mant = 0;
        bexp++;
    }
    return (uint16_t)(sign | (uint16_t)(bexp << 10) | (uint16_t)mant);
}

double wgnn__ref_f16_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    if (e == 31 && m) { /* NaN: payload kept, made quiet */
        uint32_t bits = (uint32_t)(h & 0x8000u) << 16 | 0x7FC00000u | (uint32_t)m << 13;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? INFINITY : ldexp(1024 + m, e - 25);
    return (h & 0x8000u) ? -v : v;
}

/* ---- element access and broadcasting ----------------------------------------- */

static double get(const void *p, wgnn_dtype t, uint64_t i) {
    switch (t) {
    case WGNN_F32: return ((const float *)p)[i];
    case WGNN_F16: return wgnn__ref_f16_value(((const uint16_t *)p)[i]);
    case WGNN_I32: return ((const int32_t *)p)[i];
    }
    return 0;
}

/* Stores a float result (float ops write float32 or float16 only). */
static void put(void *p, wgnn_dtype t, uint64_t i, double v) {
    if (t == WGNN_F16) ((uint16_t *)p)[i] = wgnn__ref_f16_bits((float)v);
    else ((float *)p)[i] = (float)v;
}

/* Offset into input `in` of output element i: in is aligned to out from the
 * right, and its size-1 dims broadcast. */
static uint64_t offset_of(const wgnn_desc *out, const wgnn_desc *in, uint64_t i) {
    uint64_t off = 0, stride = 1;
    for (int d = out->rank - 1, di = in->rank - 1; d >= 0; d--, di--) {
        uint64_t c = i % (uint64_t)out->dims[d];
        i /= (uint64_t)out->dims[d];
        if (di < 0) continue;
        if (in->dims[di] != 1) off += c * stride;
        stride *= (uint64_t)in->dims[di];
    }
    return off;
}

typedef double (*fn1)(double x, double arg);
typedef double (*fn2)(double a, double b, double arg);

static wgnn_status unary(wgnn__node *n, const void *const *in, void *const *out, fn1 f, double arg) {
    uint64_t numel = wgnn__desc_numel(&n->out[0]);
    for (uint64_t i = 0; i < numel; i++)
        put(out[0], n->out[0].dtype, i, f(get(in[0], n->in[0].dtype, i), arg));
    return WGNN_OK;
}

static wgnn_status binary(wgnn__node *n, const void *const *in, void *const *out, fn2 f, double arg) {
    const wgnn_desc *o = &n->out[0];
    uint64_t numel = wgnn__desc_numel(o);
    for (uint64_t i = 0; i < numel; i++) {
        double a = get(in[0], n->in[0].dtype, offset_of(o, &n->in[0], i));
        double b = get(in[1], n->in[1].dtype, offset_of(o, &n->in[1], i));
        put(out[0], o->dtype, i, f(a, b, arg));
    }
    return WGNN_OK;
}

static double float_arg(const wgnn__node *n) { return (double)(float)n->arg[0].f; }

/* ---- the ops ------------------------------------------------------------------- */

static double relu(double x, double arg) {
    (void)arg;
    return x > 0 || isnan(x) ? x : 0.0;
}
static double sigmoid(double x, double arg) {
    (void)arg;
    return 1.0 / (1.0 + exp(-x));
}
static double tanh_(double x, double arg) {
    (void)arg;
    return tanh(x);
}
static double silu(double x, double arg) {
    (void)arg;
    return x / (1.0 + exp(-x));
}
/* 0.5 x (1 + erf(x/sqrt2)), written with erfc: the same function, without
 * the cancellation of 1 + erf for negative x. */
static double gelu(double x, double arg) {
    (void)arg;
    return 0.5 * x * erfc(-x * 0.70710678118654752440);
}
/* 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), likewise free of cancellation. */
static double gelu_tanh(double x, double arg) {
    (void)arg;
    double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return x / (1.0 + exp(-2.0 * u));
}
static double leaky_relu(double x, double slope) { return x > 0 ? x : x * slope; }
static double add(double a, double b, double alpha) { return a + alpha * b; }
static double sub(double a, double b, double alpha) { return a - alpha * b; }
static double mul(double a, double b, double arg) {
    (void)arg;
    return a * b;
}
static double div_(double a, double b, double arg) {
    (void)arg;
    return a / b;
}

wgnn_status wgnn__ref_relu(wgnn__node *n, const void *const *in, void *const *out) {
    return unary(n, in, out, relu, 0);
}
wgnn_status wgnn__ref_sigmoid(wgnn__node *n, const void *const *in, void *const *out) {
    return unary(n, in, out, sigmoid, 0);
}
wgnn_status wgnn__ref_tanh(wgnn__node *n, const void *const *in, void *const *out) {
    return unary(n, in, out, tanh_, 0);
}
wgnn_status wgnn__ref_silu(wgnn__node *n, const void *const *in, void *const *out) {
    return unary(n, in, out, silu, 0);
}
wgnn_status wgnn__ref_gelu(wgnn__node *n, const void *const *in, void *const *out) {
    return unary(n, in, out, n->arg[0].i[0] == 1 ? gelu_tanh : gelu, 0);
}
wgnn_status wgnn__ref_leaky_relu(wgnn__node *n, const void *const *in, void *const *out) {
    return unary(n, in, out, leaky_relu, float_arg(n));
}
wgnn_status wgnn__ref_add(wgnn__node *n, const void *const *in, void *const *out) {
    return binary(n, in, out, add, float_arg(n));
}
wgnn_status wgnn__ref_sub(wgnn__node *n, const void *const *in, void *const *out) {
    return binary(n, in, out, sub, float_arg(n));
}
wgnn_status wgnn__ref_mul(wgnn__node *n, const void *const *in, void *const *out) {
    return binary(n, in, out, mul, 0);
}
wgnn_status wgnn__ref_div(wgnn__node *n, const void *const *in, void *const *out) {
    return binary(n, in, out, div_, 0);
}

/* float -> int32 truncates toward zero; NaN gives 0 and values past the
 * int32 range saturate (PyTorch leaves both undefined). int32 -> float
 * rounds to nearest even; float16 -> float32 is exact; same dtype copies
 * the bits. */
wgnn_status wgnn__ref_to_copy(wgnn__node *n, const void *const *in, void *const *out) {
    wgnn_dtype ti = n->in[0].dtype, to = n->out[0].dtype;
    uint64_t numel = wgnn__desc_numel(&n->in[0]);
    if (ti == to) {
        memcpy(out[0], in[0], (size_t)numel * wgnn_dtype_size(ti));
        return WGNN_OK;
    }
    for (uint64_t i = 0; i < numel; i++) {
        double v = get(in[0], ti, i); /* exact */
        if (to == WGNN_I32) {
            int32_t r = isnan(v) ? 0 : v >= 2147483648.0 ? INT32_MAX : v < -2147483648.0 ? INT32_MIN : (int32_t)v;
            ((int32_t *)out[0])[i] = r;
        } else {
            float f = (float)v; /* rounds int32 to nearest even; float16 -> float32 exact */
            if (to == WGNN_F32) ((float *)out[0])[i] = f;
            else ((uint16_t *)out[0])[i] = wgnn__ref_f16_bits(f); /* int32 past 2^24 is past 65520 anyway */
        }
    }
    return WGNN_OK;
}
