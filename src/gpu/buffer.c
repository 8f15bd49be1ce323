/* buffer.c - GPU buffers, optional-binding dummies, the uniform arena. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Arena slots: one per dispatch, WGNN__PARAMS_MAX bytes rounded up to the
 * device's uniform offset alignment. 1024 slots: the pending work is
 * submitted at the latest every 1024 dispatches. */
#define WGNN__UNI_SLOTS 1024u

wgnn_status wgnn__buffer_create(wgnn_context *ctx, uint64_t size, WGPUBufferUsage usage, const char *what,
                                WGPUBuffer *out) {
    *out = NULL;
    uint64_t padded = (size + 3u) & ~(uint64_t)3u;
    if (padded < size || padded == 0) padded = 4;
    if (padded > ctx->limits.maxBufferSize)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "%s: %llu bytes pass the device's maxBufferSize (%llu bytes)", what,
                         (unsigned long long)size, (unsigned long long)ctx->limits.maxBufferSize);
    WGPUBufferDescriptor d = WGPU_BUFFER_DESCRIPTOR_INIT;
    d.label = wgnn__sv(what);
    d.size = padded;
    d.usage = usage;
    wgnn__scope_push(ctx);
    WGPUBuffer b = wgpuDeviceCreateBuffer(ctx->device, &d);
    char msg[256];
    snprintf(msg, sizeof msg, "creating a %llu-byte buffer for %s", (unsigned long long)padded, what);
    wgnn_status s = wgnn__scope_pop(ctx, msg);
    if (s != WGNN_OK || !b) {
        if (b) wgpuBufferRelease(b);
        return s != WGNN_OK ? s : wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "%s: no buffer returned", msg);
    }
    *out = b;
    return WGNN_OK;
}

WGPUBuffer wgnn__make_optional_binding(wgnn_context *ctx, WGPUBuffer buf, bool writable) {
    return buf ? buf : writable ? ctx->dummy_rw : ctx->dummy;
}

WGPUBuffer wgnn__data_error_buffer(wgnn_context *ctx) { return ctx->data_err; }

static uint32_t slot_size(const wgnn_context *ctx) {
    uint32_t a = ctx->uni_align;
    return (WGNN__PARAMS_MAX + a - 1) / a * a;
}

wgnn_status wgnn__uniform_reserve(wgnn_context *ctx, uint32_t n) {
    if (!ctx->uni_align) {
        uint32_t a = ctx->limits.minUniformBufferOffsetAlignment;
        ctx->uni_align = a < 16 ? 16 : a;
    }
    uint64_t need = (uint64_t)n * slot_size(ctx);
    if (ctx->uni_used + need <= ctx->uni_cap) return WGNN_OK;
    if (ctx->uni_used) { /* submit what the arena holds, then reuse it */
        wgnn_status s = wgnn__flush(ctx, false);
        if (s != WGNN_OK) return s;
    }
    if (need <= ctx->uni_cap) return WGNN_OK;
    uint64_t cap = (uint64_t)WGNN__UNI_SLOTS * slot_size(ctx);
    while (cap < need) cap *= 2;
    if (cap > UINT32_MAX) return wgnn__err(ctx, WGNN_ERR_LIMIT, "%u dispatches in one op: too many", n);
    WGPUBuffer b = NULL;
    wgnn_status s =
        wgnn__buffer_create(ctx, cap, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst, "uniform arena", &b);
    if (s != WGNN_OK) return s;
    unsigned char *h = realloc(ctx->uni_host, (size_t)cap);
    if (!h) {
        wgpuBufferRelease(b);
        return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory for the uniform arena");
    }
    if (ctx->uni) wgpuBufferRelease(ctx->uni); /* submitted work keeps its own reference */
    ctx->uni = b;
    ctx->uni_host = h;
    ctx->uni_cap = (uint32_t)cap;
    ctx->uni_used = 0;
    return WGNN_OK;
}

uint32_t wgnn__uniform_push(wgnn_context *ctx, const void *data, uint32_t size) {
    uint32_t off = ctx->uni_used;
    uint32_t slot = slot_size(ctx);
    memset(ctx->uni_host + off, 0, slot);
    memcpy(ctx->uni_host + off, data, size);
    ctx->uni_used += slot;
    return off;
}
