// gemm_tail.wgsl - the last step of a GEMM on the tail plan
// (src/ops/gemm_split.c, wgnn__gemm_plan_tail): gemm.wgsl ran the whole
// output tiles below t_dp into C, epilogue and all, and the tiles from t_dp
// on (t_bm x t_bn, t_tx of them a row, row-major) in t_n K slices into X,
// [t_n][rows from t_m0 to m][ldc] (alpha applied). This sums a tail tile's
// slices in order and applies the bias and activation:
//   C(i, j) = act(sum_e X[(e*(m - t_m0) + i - t_m0)*ldc + j] + beta * bias(i, j))
// with C(i, j) = C[c_off + i*ldc + j], bias(i, j) = BIAS[bias_off +
// i*bias_rs + j*bias_cs]. The other tiles of C are left as they are.
// One thread per V values of a tile's row (V = 4 where n, ldc and c_off
// are multiples of 4, else 1). Prelude: struct Params, consts WG, V,
// HAS_BIAS, ACT, alias ET (f32 or vec4<f32>), fn act_e(ET) -> ET, fn
// bias_e(b, stride) -> ET (V bias values from BIAS[b], stride apart).
// Dispatch: ceil(t_tiles * t_bm * t_bn / (V * WG)) workgroups folded into x*y.

#include "common/act"
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> C: array<ET>;
@group(0) @binding(2) var<storage, read> X: array<ET>;
@group(0) @binding(3) var<storage, read> BIAS: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let q = wg_flat(wid, nwg) * WG + tid;
    let row_q = P.t_bn / V;      // threads a tile row
    let tile_q = P.t_bm * row_q; // threads a tile
    if (q >= P.t_tiles * tile_q) { return; }
    let tile = P.t_dp + q / tile_q;
    let i = (tile / P.t_tx) * P.t_bm + (q % tile_q) / row_q;
    let j = (tile % P.t_tx) * P.t_bn + (q % row_q) * V;
    if (i >= P.m || j >= P.n) { return; } // V = 4: n a multiple of 4, the quad whole
    let rows = P.m - P.t_m0;
    var v = ET(0.0);
    for (var e = 0u; e < P.t_n; e++) { v += X[((e * rows + i - P.t_m0) * P.ldc + j) / V]; }
    if (HAS_BIAS) { v += P.beta * bias_e(P.bias_off + i * P.bias_rs + j * P.bias_cs, P.bias_cs); }
    C[(P.c_off + i * P.ldc + j) / V] = act_e(v);
}
