// gemm_reduce_ln.wgsl - gemm_reduce.wgsl's pass that also writes each
// output row's LayerNorm (src/ops/gemm.c; linear's and addmm's layer_norm
// argument: a transformer block's x + proj(h) and the next norm of x in one
// pass):
//   C(i, :) = act(sum_s P[s][i][:] + beta * bias(i, :)) + res(i, :)   (common/split_sum)
//   Y(i, :) = (C(i, :) - mean) / sqrt(var + eps) * LW + LB
// with the row's mean and biased variance over its n values (two passes
// over registers: the mean, then the variance of C - mean), as torch's
// layer_norm. Rows in quads: n, ldc = n, ldr and the offsets multiples of
// 4; Y(i, j) = Y[y_off + i*n + j].
// L consecutive threads share a row, R = WG / L rows a workgroup; a thread
// keeps its quads j4 = lane + k*L (k < K) in registers, so that each
// partial is read once and C and Y are written once.
// Prelude: struct Params (the reduce's, with n_groups, y_off, eps, count);
// consts WG, L, R, K, SG, V = 4, HAS_BIAS, HAS_RES, ACT; alias ET =
// vec4<f32>; fns act_e, bias_e, lanes_reduce (see reduce_rows.wgsl).
// Bindings: 0 Params, 1 PART, 2 C, 3 BIAS, 4 RES, 5 Y, 6 LW, 7 LB.
// Dispatch: P.n_groups = ceil(m / R) workgroups folded into x*y.

#include "common/act"
#include "common/grid"
#include "common/row_reduce"
#include "common/split_sum"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> PART: array<ET>;
@group(0) @binding(2) var<storage, read_write> C: array<ET>;
@group(0) @binding(3) var<storage, read> BIAS: array<f32>;
@group(0) @binding(4) var<storage, read> RES: array<ET>;
@group(0) @binding(5) var<storage, read_write> Y: array<ET>;
@group(0) @binding(6) var<storage, read> LW: array<ET>;
@group(0) @binding(7) var<storage, read> LB: array<ET>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wg_flat(wid, nwg);
    if (g >= P.n_groups) { return; } // uniform per workgroup: barriers stay uniform
    let rl = lid / L;
    let lane = lid % L;
    let i = g * R + rl;
    let nq = P.n / 4u;
    let nk = select(0u, (nq - lane + L - 1u) / L, i < P.m && lane < nq); // this thread's quads
    var c: array<ET, K>;
    var s = 0.0;
    for (var k = 0u; k < K; k++) {
        if (k < nk) {
            let jq = lane + k * L;
            c[k] = split_sum(i * nq + jq, i, jq * 4u);
            C[(P.c_off + i * P.n) / 4u + jq] = c[k];
            s += (c[k].x + c[k].y) + (c[k].z + c[k].w);
        }
    }
    let mean = row_reduce(s, lid, rl, lane, false) / P.count;
    var q = 0.0;
    for (var k = 0u; k < K; k++) {
        if (k < nk) {
            c[k] = c[k] - ET(mean);
            q += dot(c[k], c[k]);
        }
    }
    let rstd = 1.0 / sqrt(row_reduce(q, lid, rl, lane, false) / P.count + P.eps);
    for (var k = 0u; k < K; k++) {
        if (k < nk) {
            let jq = lane + k * L;
            Y[P.y_off / 4u + i * nq + jq] = c[k] * rstd * LW[jq] + LB[jq];
        }
    }
}
