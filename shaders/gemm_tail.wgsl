// gemm_tail.wgsl - the last step of a wave-balanced GEMM whose whole tiles
// ended in gemm.wgsl (its SKE; src/ops/gemm_split.c, plan_tail): for the
// output tiles (t_bm x t_bn, t_tx of them a row, row-major) from t_dp on,
// C holds K slice 0's sum (alpha and the bias applied) and X the t_n slices
// after it, [t_n][rows from t_m0 to m][ldc]. This adds them in slice order
// and applies the activation, in place:
//   C(i, j) = act(C(i, j) + sum_e X[(e*(m - t_m0) + i - t_m0)*ldc + j])
// with C(i, j) = C[c_off + i*ldc + j]. The other tiles are final already.
// One thread per V values of a tile's row (V = 4 where n, ldc and c_off
// are multiples of 4, else 1). Prelude: struct Params, consts WG, V, ACT,
// alias ET (f32 or vec4<f32>), fn act_e(ET) -> ET.
// Dispatch: ceil(t_tiles * t_bm * t_bn / (V * WG)) workgroups folded into x*y.

#include "common/act"
#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> C: array<ET>;
@group(0) @binding(2) var<storage, read> X: array<ET>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let q = wg_flat(wid, nwg) * WG + tid;
    let row_q = P.t_bn / V;            // threads a tile row
    let tile_q = P.t_bm * row_q;       // threads a tile
    if (q >= P.t_tiles * tile_q) { return; }
    let tile = P.t_dp + q / tile_q;
    let i = (tile / P.t_tx) * P.t_bm + (q % tile_q) / row_q;
    let j = (tile % P.t_tx) * P.t_bn + (q % row_q) * V;
    if (i >= P.m || j >= P.n) { return; } // V = 4: n a multiple of 4, the quad whole
    let o = (P.c_off + i * P.ldc + j) / V;
    var v = C[o];
    let rows = P.m - P.t_m0;
    for (var e = 0u; e < P.t_n; e++) { v += X[((e * rows + i - P.t_m0) * P.ldc + j) / V]; }
    C[o] = act_e(v);
}
