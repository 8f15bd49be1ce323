// common/lanes_sum.wgsl - the GEMV kernels' (gemv, gemv4, linear_q8) last
// step (`#include "common/lanes_sum"`): a column's LANES consecutive lanes
// each hold MR partial sums (acc), and with RMS MR sums of squares (ss);
// lanes_sum adds them up through workgroup memory, so that afterwards lane 0
// of the column reads row r's totals at RED[r * WG + tid] and
// RED_SS[r * WG + tid]. Call it from uniform control flow (it has barriers).
// with_ss false leaves RED_SS as it is (linear_q8's columns after the
// first: their sums of squares are the first column's, already summed).
// Needs consts WG, LANES, MR, RMS.

var<workgroup> RED: array<f32, WG * MR>;
var<workgroup> RED_SS: array<f32, select(1u, WG * MR, RMS)>;

fn lanes_sum(acc: ptr<function, array<f32, MR>>, ss: ptr<function, array<f32, MR>>, tid: u32, lane: u32,
             with_ss: bool) {
    let sums = RMS && with_ss;
    for (var r = 0u; r < MR; r++) {
        RED[r * WG + tid] = (*acc)[r];
        if (sums) { RED_SS[r * WG + tid] = (*ss)[r]; }
    }
    workgroupBarrier();
    for (var s = LANES / 2u; s > 0u; s >>= 1u) {
        if (lane < s) {
            for (var r = 0u; r < MR; r++) {
                RED[r * WG + tid] += RED[r * WG + tid + s];
                if (sums) { RED_SS[r * WG + tid] += RED_SS[r * WG + tid + s]; }
            }
        }
        workgroupBarrier();
    }
}
