// batch_norm: inference batch normalization of input [N, C, S...] with
// running statistics, channel = dim 1:
//   y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]
// One V per thread (f32, or vec4<f32> when the per-channel size S is a
// multiple of 4, so a vec4 never straddles two channels).
// Prelude (src/ops/norm.c): struct Params (n_items V's, s = S in V units,
// c = C, eps), alias V, const WG.
// Bindings: 0 Params, 1 input, 2 out (read_write), 3 weight, 4 bias,
// 5 running_mean, 6 running_var.
// Dispatch: ceil(n_items / WG) workgroups, folded into x*y past 65535; a
// dispatch starts at a whole sample (the host splits over N when the tensor
// passes one storage binding).

#include "common/grid"

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> X: array<V>;
@group(0) @binding(2) var<storage, read_write> Y: array<V>;
@group(0) @binding(3) var<storage, read> W: array<f32>;
@group(0) @binding(4) var<storage, read> B: array<f32>;
@group(0) @binding(5) var<storage, read> MEAN: array<f32>;
@group(0) @binding(6) var<storage, read> VAR: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = wg_flat(wid, nwg) * WG + lid;
    if (i >= P.n_items) { return; }
    let ch = (i / P.s) % P.c;
    let a = W[ch] / sqrt(VAR[ch] + P.eps);
    Y[i] = (X[i] - V(MEAN[ch])) * a + V(B[ch]);
}
