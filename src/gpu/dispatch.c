/* dispatch.c - workgroup-count math and alignment checks. */
#include "internal.h"

#include <math.h>

uint32_t wgnn__clamp_workgroup_size(const wgnn_context *ctx, uint32_t want) {
    uint32_t m = ctx->limits.maxComputeInvocationsPerWorkgroup;
    if (ctx->limits.maxComputeWorkgroupSizeX < m) m = ctx->limits.maxComputeWorkgroupSizeX;
    if (want > m) want = m;
    return want ? want : 1;
}

wgnn_status wgnn__compute_1d_workgroup_count(wgnn_context *ctx, uint64_t n_items, uint32_t wg_size,
                                             const char *what, uint32_t *gx) {
    uint64_t groups = (n_items + wg_size - 1) / wg_size;
    if (groups > ctx->limits.maxComputeWorkgroupsPerDimension)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "%s: %llu workgroups pass maxComputeWorkgroupsPerDimension (%u)", what,
                         (unsigned long long)groups, ctx->limits.maxComputeWorkgroupsPerDimension);
    *gx = (uint32_t)(groups ? groups : 1);
    return WGNN_OK;
}

bool wgnn__grid_2d(uint64_t n_groups, uint32_t max_per_dim, uint32_t *gx, uint32_t *gy) {
    if (n_groups == 0) n_groups = 1;
    if (max_per_dim == 0) return false;
    if (n_groups <= max_per_dim) {
        *gx = (uint32_t)n_groups;
        *gy = 1;
        return true;
    }
    uint64_t x = (uint64_t)ceil(sqrt((double)n_groups));
    while (x * x < n_groups) x++; /* sqrt rounding */
    if (x > max_per_dim) return false;
    uint64_t y = (n_groups + x - 1) / x;
    if (y > max_per_dim) return false;
    *gx = (uint32_t)x;
    *gy = (uint32_t)y;
    return true;
}

wgnn_status wgnn__compute_2d_workgroup_count(wgnn_context *ctx, uint64_t n_groups, uint32_t max_per_dim,
                                             const char *what, uint32_t *gx, uint32_t *gy) {
    if (!wgnn__grid_2d(n_groups, max_per_dim, gx, gy))
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "%s: %llu workgroups do not fit a %u x %u grid", what,
                         (unsigned long long)n_groups, max_per_dim, max_per_dim);
    return WGNN_OK;
}

wgnn_status wgnn__check_vec4_aligned(wgnn_context *ctx, const char *op, const char *what, int64_t n) {
    if (n % 4 != 0)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: %s=%lld must be a multiple of 4", op, what, (long long)n);
    return WGNN_OK;
}

uint64_t wgnn__gcd_u64(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint64_t wgnn__lcm_u64(uint64_t a, uint64_t b) { return a / wgnn__gcd_u64(a, b) * b; }
