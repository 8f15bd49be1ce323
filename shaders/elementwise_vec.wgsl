// elementwise_vec: the contiguous kernel of the elementwise family
// (src/ops/elementwise.c), for inputs of the output's own shape (no
// broadcasting): out[i] = op(self[i][, other[i]]), eight elements a unit,
// 16-byte loads and stores. Elements past the last whole unit are left to
// the strided kernel (shaders/elementwise.wgsl), in a second dispatch.
//
// A workgroup covers WG * UNROLL consecutive units; thread t loads units
// t, t + WG, ... of them, all before it computes and stores any. Where
// every operand is 32-bit, it loads vec4 t, t + WG, ... of the units'
// 2 WG UNROLL vec4 instead (one contiguous run a warp instruction).
//
// Bindings: 0 Params; 1 self, 2 other (a dummy for unary ops), 3 out; all
// array<vec4<u32>>: a unit is two vec4 of float32 / int32 words, or one vec4
// of eight float16 halves (element 2k in the low half of word k).
// Prelude (from the host): struct Params; const NB (1 or 2), A_F16, B_F16,
// O_F16, UNROLL; fn ew_op (see elementwise_ops.wgsl).
// Dispatch: ceil(P.count / (WG * UNROLL)) workgroups (P.count: units), folded
// into x * y by the host (wg_flat); units past P.count are skipped.
#include "common/grid"
#include "elementwise_ops"

override WG: u32 = 256u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> A: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> B: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> O: array<vec4<u32>>;

// Eight elements as float32 / int32 words.
struct Unit {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

fn halves(w: vec2<u32>) -> vec4<u32> {
    return vec4(w.x & 0xFFFFu, w.x >> 16u, w.y & 0xFFFFu, w.y >> 16u);
}

fn load_a(u: u32) -> Unit {
    if (A_F16) {
        let w = A[u];
        return Unit(f16_to_f32_bits(halves(w.xy)), f16_to_f32_bits(halves(w.zw)));
    }
    return Unit(A[2u * u], A[2u * u + 1u]);
}

fn load_b(u: u32) -> Unit {
    if (B_F16) {
        let w = B[u];
        return Unit(f16_to_f32_bits(halves(w.xy)), f16_to_f32_bits(halves(w.zw)));
    }
    return Unit(B[2u * u], B[2u * u + 1u]);
}

fn store(u: u32, r: Unit) {
    if (O_F16) {
        let lo = f32_to_f16_bits(r.lo);
        let hi = f32_to_f16_bits(r.hi);
        O[u] = vec4(lo.x | (lo.y << 16u), lo.z | (lo.w << 16u), hi.x | (hi.y << 16u), hi.z | (hi.w << 16u));
    } else {
        O[2u * u] = r.lo;
        O[2u * u + 1u] = r.hi;
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    _ = &B; // in the layout for unary ops too: the host binds a dummy there
    if (!A_F16 && !B_F16 && !O_F16) {
        // All float32 / int32: the workgroup's units as 2 WG UNROLL vec4,
        // vec4 v0 + j WG for thread lid, so a warp's load or store is one
        // contiguous run (a unit's two vec4 a lane would be 32 bytes apart
        // from lane to lane: relu on 256 MiB 0.231 ms on an H100, where
        // softmax moves the same bytes in 0.185).
        let v0 = wg_flat(wid, nwg) * (2u * WG * UNROLL) + lid;
        let nv = 2u * P.count;
        var x: array<vec4<u32>, 2u * UNROLL>;
        var y: array<vec4<u32>, 2u * UNROLL>;
        for (var j = 0u; j < 2u * UNROLL; j++) {
            let v = v0 + j * WG;
            if (v < nv) {
                x[j] = A[v];
                if (NB == 2u) { y[j] = B[v]; }
            }
        }
        for (var j = 0u; j < 2u * UNROLL; j++) {
            let v = v0 + j * WG;
            if (v < nv) { O[v] = ew_op(x[j], y[j]); }
        }
        return;
    }
    let u0 = wg_flat(wid, nwg) * (WG * UNROLL) + lid;
    var a: array<Unit, UNROLL>;
    var b: array<Unit, UNROLL>;
    for (var j = 0u; j < UNROLL; j++) {
        let u = u0 + j * WG;
        if (u < P.count) {
            a[j] = load_a(u);
            if (NB == 2u) { b[j] = load_b(u); }
        }
    }
    for (var j = 0u; j < UNROLL; j++) {
        let u = u0 + j * WG;
        if (u < P.count) { store(u, Unit(ew_op(a[j].lo, b[j].lo), ew_op(a[j].hi, b[j].hi))); }
    }
}
