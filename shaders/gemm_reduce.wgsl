// gemm_reduce.wgsl - the second step of a split-K GEMM (src/ops/gemm.c):
// the S partial products of K slices, P[s][i][j] (alpha applied), summed in
// slice order, then the bias and activation epilogue of gemm.wgsl:
//   C(i, j) = act(sum_s P[s*m*n + i*n + j] + beta * bias(i, j))
// C(i, j) = C[c_off + i*ldc + j], bias(i, j) = BIAS[bias_off + i*bias_rs + j*bias_cs].
// One thread per output element. Prelude: struct Params, consts WG,
// HAS_BIAS, ACT. Dispatch: ceil(m*n / WG) workgroups folded into x*y.

#include "common/act"
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> PART: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<storage, read> BIAS: array<f32>;
@group(0) @binding(4) var<storage, read> RES: array<f32>;

fn act(x: f32) -> f32 { return act_by(ACT, vec4<f32>(x)).x; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let e = wg_flat(wid, nwg) * WG + tid;
    let mn = P.m * P.n;
    if (e >= mn) { return; }
    var v = 0.0;
    for (var s = 0u; s < P.s; s++) { v += PART[s * mn + e]; }
    let i = e / P.n;
    let j = e % P.n;
    if (HAS_BIAS) { v += P.beta * BIAS[P.bias_off + i * P.bias_rs + j * P.bias_cs]; }
    v = act(v);
    if (HAS_RES) { v += RES[P.res_off + i * P.ldr + j]; }
    C[P.c_off + i * P.ldc + j] = v;
}
