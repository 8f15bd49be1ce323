// common/f16.wgsl - float16 storage without the shader-f16 feature
// (`#include "common/f16"`): a float16 tensor is bound as array<u32>, two
// IEEE halves per word, element i in word i / 2 (low half when i is even).
// Arithmetic stays f32. A kernel that writes float16 writes whole words,
// two elements per thread, so no two threads share a word.
fn f16_get(w: u32, i: u32) -> f32 {
    let v = unpack2x16float(w);
    return select(v.x, v.y, (i & 1u) == 1u);
}
fn f16_pair(lo: f32, hi: f32) -> u32 {
    return pack2x16float(vec2<f32>(lo, hi));
}
