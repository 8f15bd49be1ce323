// elementwise: the strided kernel of the elementwise family (src/ops/elementwise.c):
// out = op(self[, other]) with NumPy broadcasting. The output is contiguous;
// each input is read through its own strides per output dim (0 on a
// broadcast dim), so any pair of shapes that broadcast runs here, as does the
// tail (< 8 elements) of the contiguous kernel elementwise_vec.
//
// Each thread computes four consecutive output elements [e, e + 4), e =
// P.base + 4 * thread: so a float16 output is written as whole u32 words and
// no two threads share one (P.base is even).
//
// Bindings: 0 Params; 1 self, 2 other (a dummy for unary ops), 3 out; all
// array<u32>: float32 / int32 one element a word, float16 two (element i in
// word i / 2, low half when i is even).
// Prelude (from the host): struct Params; const RANK (1..8, dims after the
// host merged the dims it could), NB (inputs: 1 or 2), A_F16, B_F16, O_F16
// (which bindings hold float16); fn ew_op (see elementwise_ops.wgsl).
// Dispatch: ceil((P.count - P.base) / (4 * WG)) workgroups, folded into x * y
// by the host (wg_flat); threads past P.count return.
#include "common/grid"
#include "elementwise_ops"

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> A: array<u32>;
@group(0) @binding(2) var<storage, read> B: array<u32>;
@group(0) @binding(3) var<storage, read_write> O: array<u32>;

fn pick(lo: vec4<u32>, hi: vec4<u32>, i: u32) -> u32 {
    if (i < 4u) { return lo[i]; }
    return hi[i & 3u];
}

// Offsets into self and other of output element e, and e's index along the
// innermost dim: vec3(off_a, off_b, inner).
fn offsets(e: u32) -> vec3<u32> {
    var rem = e;
    var r = vec3<u32>(0u);
    for (var d = 0u; d < RANK; d++) {
        let i = RANK - 1u - d;
        let n = pick(P.shape_lo, P.shape_hi, i);
        let c = rem % n;
        rem = rem / n;
        r.x += c * pick(P.sa_lo, P.sa_hi, i);
        r.y += c * pick(P.sb_lo, P.sb_hi, i);
        if (d == 0u) { r.z = c; }
    }
    return r;
}

// One element's word: float32 / int32 bits, or float16 bits in the low half.
fn load_a(o: u32) -> u32 {
    if (A_F16) { return (A[o >> 1u] >> ((o & 1u) * 16u)) & 0xFFFFu; }
    return A[o];
}

fn load_b(o: u32) -> u32 {
    if (B_F16) { return (B[o >> 1u] >> ((o & 1u) * 16u)) & 0xFFFFu; }
    return B[o];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    _ = &B; // in the layout for unary ops too: the host binds a dummy there
    let e0 = P.base + 4u * (wg_flat(wid, nwg) * WG + lid);
    if (e0 >= P.count) { return; }
    let inner_n = pick(P.shape_lo, P.shape_hi, RANK - 1u);
    let inner_sa = pick(P.sa_lo, P.sa_hi, RANK - 1u);
    let inner_sb = pick(P.sb_lo, P.sb_hi, RANK - 1u);
    var o = offsets(e0);
    var a = vec4<u32>(0u);
    var b = vec4<u32>(0u);
    for (var k = 0u; k < 4u; k++) {
        if (e0 + k >= P.count) { break; }
        a[k] = load_a(o.x);
        if (NB == 2u) { b[k] = load_b(o.y); }
        if (o.z + 1u < inner_n) {
            o += vec3(inner_sa, inner_sb, 1u);
        } else if (k < 3u) {
            o = offsets(e0 + k + 1u);
        }
    }
    if (A_F16) { a = f16_to_f32_bits(a); }
    if (NB == 2u && B_F16) { b = f16_to_f32_bits(b); }
    let r = ew_op(a, b);
    if (O_F16) {
        let h = f32_to_f16_bits(r);
        let w = e0 >> 1u;
        O[w] = h.x | (h.y << 16u); // past the end only the buffer's padding half
        if (e0 + 2u < P.count) { O[w + 1u] = h.z | (h.w << 16u); }
    } else {
        for (var k = 0u; k < 4u; k++) {
            if (e0 + k < P.count) { O[e0 + k] = r[k]; }
        }
    }
}
