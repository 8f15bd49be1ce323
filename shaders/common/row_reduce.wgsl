// common/row_reduce.wgsl - a value reduced over the L lanes that share a row
// (`#include "common/row_reduce"`; reduce_rows, gemm_reduce_ln). A
// workgroup of WG threads holds R = WG / L rows; the row's lanes are
// consecutive invocations (lid = row * L + lane) unless the caller passes
// other (rl, lane) pairs with SG = 0. Needs consts WG, L, R, SG (the
// adapter's fixed subgroup size, or 0: no subgroups) and fn lanes_reduce(v,
// mx) (subgroup shuffles over min(L, SG) lanes where SG > 0, from the
// host's prelude).

const SG1: u32 = max(SG, 1u); // a divisor also where SG = 0 (dead code, still checked)

var<workgroup> red: array<f32, WG>;

fn comb(a: f32, b: f32, mx: bool) -> f32 {
    if (mx) { return max(a, b); }
    return a + b;
}

// v reduced (max, or sum) over the L lanes of a row; every lane gets it.
// Called by all threads of the workgroup (it has barriers).
fn row_reduce(v: f32, lid: u32, rl: u32, lane: u32, mx: bool) -> f32 {
    if (L == 1u) { return v; }
    if (SG > 0u) { // contiguous rows only: a row's lanes are consecutive lids
        let x = lanes_reduce(v, mx); // over min(L, SG) lanes
        if (L <= SG) { return x; }
        let per = L / SG1; // subgroups a row
        workgroupBarrier(); // red's last readers are done
        if (lid % SG1 == 0u) { red[lid / SG1] = x; }
        workgroupBarrier();
        let first = rl * per;
        var t = red[first];
        for (var k = 1u; k < per; k++) { t = comb(t, red[first + k], mx); }
        return t;
    }
    workgroupBarrier();
    red[lane * R + rl] = v;
    workgroupBarrier();
    for (var s = L / 2u; s > 0u; s = s / 2u) {
        if (lane < s) { red[lane * R + rl] = comb(red[lane * R + rl], red[(lane + s) * R + rl], mx); }
        workgroupBarrier();
    }
    return red[rl];
}
