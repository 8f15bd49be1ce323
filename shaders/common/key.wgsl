// common/key.wgsl - float bits as u32 keys that order like the floats
// (`#include "common/key"`), for argmax and sample: a larger float has a
// larger key; -0.0 and +0.0 share one key; every NaN has the largest key
// (0xffffffff: above +inf, as torch.argmax ranks NaN). No key is 0 (so 0
// can stand for "below everything").
fn float_key(b: u32) -> u32 {
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u) { return 0xffffffffu; } // NaN
    if (a == 0u) { return 0x80000000u; }         // -0 == +0
    if (b != a) { return ~b; }                   // negative: larger magnitude, smaller key
    return b | 0x80000000u;
}

// The float of a key (not NaN's).
fn key_float(k: u32) -> f32 {
    if ((k & 0x80000000u) != 0u) { return bitcast<f32>(k & 0x7fffffffu); }
    return bitcast<f32>(~k);
}
