// elementwise_ops.wgsl - the element operations and float16 conversions of
// the elementwise kernels (shaders/elementwise.wgsl, elementwise_vec.wgsl),
// which `#include "elementwise_ops"`; not a kernel itself.
//
// Values travel as raw 32-bit words, four at a time: float32 bits (float16
// storage is widened exactly on load and narrowed with round-to-nearest-even
// on store, both in integer arithmetic) or int32 bits (to_copy only). Every
// operation has the one signature
//     fn ew_NAME(a: vec4<u32>, b: vec4<u32>) -> vec4<u32>
// (b is unused by unary ops) and the host's prelude picks one with
//     fn ew_op(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> { return ew_NAME(a, b); }
// P.alpha carries the op's float argument: add's alpha (sub passes -alpha),
// leaky_relu's negative_slope.

// ---- float16 <-> float32 bits, exact integer arithmetic --------------------
// (pack2x16float's rounding is implementation-defined; these are not.)

// float16 bits (low 16 bits of each lane) -> float32 bits, exact: subnormal
// halves become normal floats, inf stays inf, NaN stays NaN (payload kept,
// made quiet, as x86's F16C and PyTorch do).
fn f16_to_f32_bits(h: vec4<u32>) -> vec4<u32> {
    let sign = (h & vec4(0x8000u)) << vec4(16u);
    let e = (h >> vec4(10u)) & vec4(0x1Fu);
    let m = h & vec4(0x3FFu);
    let normal = ((e + vec4(112u)) << vec4(23u)) | (m << vec4(13u));
    let special = vec4(0x7F800000u) | (m << vec4(13u)) | select(vec4(0u), vec4(0x400000u), m != vec4(0u));
    // subnormal: m * 2^-24 with m's top bit at p (0..9): exponent p - 24
    let p = vec4(31u) - countLeadingZeros(m);
    let sub = ((p + vec4(103u)) << vec4(23u)) | ((m << (vec4(23u) - p)) & vec4(0x7FFFFFu));
    var r = select(normal, special, e == vec4(31u));
    r = select(r, select(sub, vec4(0u), m == vec4(0u)), e == vec4(0u));
    return sign | r;
}

// float32 bits -> float16 bits (low 16 bits), round to nearest even:
// |x| >= 65520 gives inf, results below 2^-14 are subnormal halves (down to
// 2^-25, which ties to 0), NaN gives the canonical 0x7E00 with x's sign (as
// PyTorch's c10::Half).
fn f32_to_f16_bits(x: vec4<u32>) -> vec4<u32> {
    let sign = (x >> vec4(16u)) & vec4(0x8000u);
    let a = x & vec4(0x7FFFFFFFu);
    // normal half: rebias the exponent (127 -> 15), round at bit 13
    let n = a - vec4(0x38000000u);
    let nr = (n + vec4(0xFFFu) + ((n >> vec4(13u)) & vec4(1u))) >> vec4(13u);
    // subnormal half: the 24-bit significand shifted right by 126 - exponent
    // (14..24 in this range), rounded; 1024 carries into the smallest normal
    let e = a >> vec4(23u);
    let sh = min(vec4(126u) - min(e, vec4(126u)), vec4(31u));
    let m = (a & vec4(0x7FFFFFu)) | vec4(0x800000u);
    let q = m >> sh;
    let rem = m - (q << sh);
    let half = vec4(1u) << (max(sh, vec4(1u)) - vec4(1u));
    let up = (rem > half) | ((rem == half) & ((q & vec4(1u)) == vec4(1u)));
    let sr = q + select(vec4(0u), vec4(1u), up);
    var r = select(sr, nr, a >= vec4(0x38800000u));
    r = select(r, vec4(0u), a < vec4(0x33000000u));
    r = select(r, vec4(0x7C00u), a >= vec4(0x477FF000u));
    r = select(r, vec4(0x7E00u), a > vec4(0x7F800000u));
    return sign | r;
}

// ---- float ops (float32 bits in and out) -----------------------------------

#include "common/act"

fn ew_relu(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(act_relu(bitcast<vec4<f32>>(a))); // NaN stays NaN
}

fn ew_sigmoid(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    let x = bitcast<vec4<f32>>(a);
    return bitcast<vec4<u32>>(vec4(1.0) / (vec4(1.0) + exp(-x))); // exp overflow -> 1/inf = 0
}

// tanh: common/act.wgsl (also the GEMM epilogue's activation=tanh).
fn ew_tanh(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(act_tanh(bitcast<vec4<f32>>(a)));
}

fn ew_silu(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(act_silu(bitcast<vec4<f32>>(a)));
}

// gelu (approximate=none and tanh): common/act.wgsl.
fn ew_gelu(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(act_gelu(bitcast<vec4<f32>>(a)));
}

fn ew_gelu_tanh(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(act_gelu_tanh(bitcast<vec4<f32>>(a)));
}

fn ew_leaky_relu(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    let x = bitcast<vec4<f32>>(a);
    return bitcast<vec4<u32>>(select(x * P.alpha, x, x > vec4(0.0)));
}

fn ew_add(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(bitcast<vec4<f32>>(a) + P.alpha * bitcast<vec4<f32>>(b));
}

fn ew_mul(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(bitcast<vec4<f32>>(a) * bitcast<vec4<f32>>(b));
}

fn ew_div(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return bitcast<vec4<u32>>(bitcast<vec4<f32>>(a) / bitcast<vec4<f32>>(b));
}

// ---- to_copy: conversions between float (float32 bits) and int32 -----------

fn ew_copy(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return a;
}

// float -> int32, toward zero, in integer arithmetic: NaN gives 0, values
// past the int32 range (inf included) saturate to INT32_MIN / INT32_MAX.
fn ew_f2i(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    let neg = (a >> vec4(31u)) == vec4(1u);
    let x = a & vec4(0x7FFFFFFFu);
    let e = x >> vec4(23u);
    let m = (x & vec4(0x7FFFFFu)) | vec4(0x800000u);
    // |x| = m * 2^(e - 150); e in 127..157 here
    let mag = select(m >> (vec4(150u) - min(e, vec4(150u))), m << (e - vec4(150u)), e >= vec4(150u));
    var r = select(mag, vec4(0u) - mag, neg);
    r = select(r, vec4(0u), e < vec4(127u));
    r = select(r, select(vec4(0x7FFFFFFFu), vec4(0x80000000u), neg), e >= vec4(158u));
    return select(r, vec4(0u), x > vec4(0x7F800000u));
}

// int32 -> float32, round to nearest even, in integer arithmetic.
fn ew_i2f(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    let neg = (a >> vec4(31u)) == vec4(1u);
    let mag = select(a, vec4(0u) - a, neg); // INT32_MIN -> 2^31
    let p = vec4(31u) - countLeadingZeros(mag); // top bit (mag > 0)
    let sh = select(vec4(0u), p - vec4(23u), p > vec4(23u));
    let q = mag >> sh;
    let rem = mag - (q << sh);
    let half = select(vec4(0u), vec4(1u) << (max(sh, vec4(1u)) - vec4(1u)), sh > vec4(0u));
    let up = (sh > vec4(0u)) & ((rem > half) | ((rem == half) & ((q & vec4(1u)) == vec4(1u))));
    let qr = select(mag << (vec4(23u) - min(p, vec4(23u))), q + select(vec4(0u), vec4(1u), up), p > vec4(23u));
    // q holds the implicit bit at 23: adding it bumps the exponent field by
    // one (two when rounding carried to 2^24), hence p + 126.
    let bits = ((p + vec4(126u)) << vec4(23u)) + qr;
    return select(bits | (a & vec4(0x80000000u)), vec4(0u), mag == vec4(0u));
}
