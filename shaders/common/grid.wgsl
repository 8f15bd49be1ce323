// common/grid.wgsl - index helpers shared by kernels (`#include "common/grid"`).
// Grids past maxComputeWorkgroupsPerDimension are folded into x * y by the
// host (wgnn__compute_2d_workgroup_count); this rebuilds the flat index.
fn wg_flat(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.y * nwg.x + wid.x;
}
