// common/act.wgsl - activation functions on vec4<f32>, shared by the
// elementwise kernels (elementwise_ops.wgsl) and the GEMM epilogue
// (gemm.wgsl): `#include "common/act"`.

// erfc(z) for z >= 0 (Numerical Recipes' erfcc, a Chebyshev fit): relative
// error under 1.2e-7 in exact arithmetic for every z, ~1e-6 in float32 where
// exp's argument is large. No cancellation: gelu uses erfc for both signs.
fn act_erfc(z: vec4<f32>) -> vec4<f32> {
    let t = vec4(1.0) / (vec4(1.0) + 0.5 * z);
    var p = vec4(0.17087277);
    p = p * t - 0.82215223;
    p = p * t + 1.48851587;
    p = p * t - 1.13520398;
    p = p * t + 0.27886807;
    p = p * t - 0.18628806;
    p = p * t + 0.09678418;
    p = p * t + 0.37409196;
    p = p * t + 1.00002368;
    p = p * t - 1.26551223;
    return t * exp(p - z * z);
}

// NaN is found from the bits: NVIDIA's compiler folds !(x <= 0) into x > 0,
// which turned relu(NaN) into 0 on the H200.
fn act_is_nan(x: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(x) & vec4(0x7fffffffu)) > vec4(0x7f800000u);
}

fn act_relu(x: vec4<f32>) -> vec4<f32> {
    return select(vec4(0.0), x, (x > vec4(0.0)) | act_is_nan(x)); // NaN stays NaN
}

// gelu, approximate=none: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), with
// 1 + erf(x/sqrt2) = erfc(-x/sqrt2) = 2 - erfc(|x|/sqrt2) for x > 0.
fn act_gelu(x: vec4<f32>) -> vec4<f32> {
    let c = act_erfc(abs(x) * 0.70710678118654752);
    return 0.5 * x * select(c, vec4(2.0) - c, x > vec4(0.0));
}

// gelu, approximate=tanh: 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3),
// as x / (1 + exp(-2u)) (the same function; no tanh overflow, no 1 + tanh
// cancellation for negative x).
fn act_gelu_tanh(x: vec4<f32>) -> vec4<f32> {
    let u = 0.79788456080286536 * (x + 0.044715 * x * x * x);
    return x / (vec4(1.0) + exp(-2.0 * u));
}

// silu: x * sigmoid(x) (exp overflow -> x / inf = -0 for very negative x).
fn act_silu(x: vec4<f32>) -> vec4<f32> {
    return x / (vec4(1.0) + exp(-x));
}

// tanh as 1 - 2 / (exp(2x) + 1): exp overflow gives 1, underflow -1, no NaN;
// small |x|, where that cancels: x - x^3/3 + 2x^5/15.
fn act_tanh(x: vec4<f32>) -> vec4<f32> {
    let t = vec4(1.0) - vec4(2.0) / (exp(2.0 * x) + vec4(1.0));
    let x2 = x * x;
    let s = x * (vec4(1.0) + x2 * (vec4(-1.0 / 3.0) + x2 * (2.0 / 15.0)));
    return select(t, s, abs(x) < vec4(0.0625));
}

// The epilogue activation by code (the GEMM family's ACT: 0 none, 1 relu,
// 2 gelu, 3 gelu tanh, 4 silu, 5 tanh), for kernels that take it as a constant.
fn act_by(kind: u32, x: vec4<f32>) -> vec4<f32> {
    switch (kind) {
        case 1u: { return act_relu(x); }
        case 2u: { return act_gelu(x); }
        case 3u: { return act_gelu_tanh(x); }
        case 4u: { return act_silu(x); }
        case 5u: { return act_tanh(x); }
        default: { return x; }
    }
}
