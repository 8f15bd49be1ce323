/* graph.c - record dispatches into one command buffer, submit, time. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WGNN__QUERY_CAP 4096u

static wgnn_status ensure_encoder(wgnn_context *ctx) {
    if (ctx->enc) return WGNN_OK;
    WGPUCommandEncoderDescriptor d = WGPU_COMMAND_ENCODER_DESCRIPTOR_INIT;
    ctx->enc = wgpuDeviceCreateCommandEncoder(ctx->device, &d);
    if (!ctx->enc) return wgnn__err(ctx, WGNN_ERR_GPU, "could not create a command encoder");
    ctx->n_passes = 0;
    return WGNN_OK;
}

wgnn_status wgnn__pass_begin(wgnn_context *ctx, WGPUComputePassEncoder *pass) {
    *pass = NULL;
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    s = ensure_encoder(ctx);
    if (s != WGNN_OK) return s;
    WGPUComputePassDescriptor d = WGPU_COMPUTE_PASS_DESCRIPTOR_INIT;
    WGPUPassTimestampWrites tw = WGPU_PASS_TIMESTAMP_WRITES_INIT;
    if (ctx->timing && ctx->qset && ctx->q_used + 2 <= ctx->q_cap) {
        tw.querySet = ctx->qset;
        tw.beginningOfPassWriteIndex = ctx->q_used;
        tw.endOfPassWriteIndex = ctx->q_used + 1;
        ctx->q_used += 2;
        d.timestampWrites = &tw;
    }
    *pass = wgpuCommandEncoderBeginComputePass(ctx->enc, &d);
    if (!*pass) return wgnn__err(ctx, WGNN_ERR_GPU, "could not begin a compute pass");
    ctx->n_passes++;
    return WGNN_OK;
}

void wgnn__pass_end(wgnn_context *ctx, WGPUComputePassEncoder pass) {
    (void)ctx;
    if (!pass) return;
    wgpuComputePassEncoderEnd(pass);
    wgpuComputePassEncoderRelease(pass);
}

wgnn_status wgnn__dispatch(wgnn_context *ctx, WGPUComputePassEncoder pass, const wgnn__pipe_entry *p,
                           const wgnn__binding *b, size_t n, uint32_t gx, uint32_t gy, uint32_t gz) {
    WGPUBindGroupEntry e[16];
    if (n > 16) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "too many bindings (%zu)", n);
    for (size_t i = 0; i < n; i++) {
        WGPUBindGroupEntry x = WGPU_BIND_GROUP_ENTRY_INIT;
        x.binding = (uint32_t)i;
        x.buffer = b[i].buf;
        x.offset = b[i].offset;
        x.size = b[i].size ? b[i].size : WGPU_WHOLE_SIZE;
        e[i] = x;
    }
    WGPUBindGroupDescriptor d = WGPU_BIND_GROUP_DESCRIPTOR_INIT;
    d.layout = p->layout;
    d.entryCount = n;
    d.entries = e;
    wgnn__scope_push(ctx);
    WGPUBindGroup bg = wgpuDeviceCreateBindGroup(ctx->device, &d);
    wgnn_status s = wgnn__scope_pop(ctx, "binding buffers");
    if (s != WGNN_OK) {
        if (bg) wgpuBindGroupRelease(bg);
        return s;
    }
    wgpuComputePassEncoderSetPipeline(pass, p->pipe);
    wgpuComputePassEncoderSetBindGroup(pass, 0, bg, 0, NULL);
    if (gx && gy && gz) wgpuComputePassEncoderDispatchWorkgroups(pass, gx, gy, gz);
    wgpuBindGroupRelease(bg); /* the encoder keeps its own reference */
    return WGNN_OK;
}

static void on_done(WGPUQueueWorkDoneStatus status, WGPUStringView message, void *u1, void *u2) {
    (void)message;
    (void)u2;
    *(WGPUQueueWorkDoneStatus *)u1 = status;
}

wgnn_status wgnn__flush(wgnn_context *ctx, bool wait) {
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    if (ctx->enc) {
        WGPUCommandEncoder enc = ctx->enc;
        ctx->enc = NULL;
        wgnn__scope_push(ctx);
        WGPUCommandBufferDescriptor cd = WGPU_COMMAND_BUFFER_DESCRIPTOR_INIT;
        WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, &cd);
        if (cb) {
            wgpuQueueSubmit(ctx->queue, 1, &cb);
            wgpuCommandBufferRelease(cb);
        }
        wgpuCommandEncoderRelease(enc);
        s = wgnn__scope_pop(ctx, "submitting recorded work");
        if (s != WGNN_OK) return s;
    }
    if (!wait) return WGNN_OK;
    WGPUQueueWorkDoneStatus done = WGPUQueueWorkDoneStatus_Error;
    WGPUQueueWorkDoneCallbackInfo ci = WGPU_QUEUE_WORK_DONE_CALLBACK_INFO_INIT;
    ci.mode = WGPUCallbackMode_WaitAnyOnly;
    ci.callback = on_done;
    ci.userdata1 = &done;
    s = wgnn__wait(ctx, wgpuQueueOnSubmittedWorkDone(ctx->queue, ci), "waiting for submitted work");
    if (s != WGNN_OK) return s;
    if (done != WGPUQueueWorkDoneStatus_Success)
        return wgnn__err(ctx, ctx->health != WGNN_OK ? ctx->health : WGNN_ERR_GPU,
                         "submitted work did not complete (status %d)%s%s", (int)done,
                         ctx->health != WGNN_OK ? ": " : "", ctx->health_msg);
    return wgnn__check_health(ctx);
}

wgnn_status wgnn_context_sync(wgnn_context *ctx) {
    if (!ctx) return WGNN_ERR_INVALID_ARGUMENT;
    return wgnn__flush(ctx, true);
}

/* ---- timing -------------------------------------------------------------- */

wgnn_status wgnn_timing_begin(wgnn_context *ctx) {
    if (!ctx) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__flush(ctx, false); /* earlier work stays out of the window */
    if (s != WGNN_OK) return s;
    if (ctx->has_timestamps && !ctx->qset) {
        WGPUQuerySetDescriptor d = WGPU_QUERY_SET_DESCRIPTOR_INIT;
        d.type = WGPUQueryType_Timestamp;
        d.count = WGNN__QUERY_CAP;
        wgnn__scope_push(ctx);
        ctx->qset = wgpuDeviceCreateQuerySet(ctx->device, &d);
        s = wgnn__scope_pop(ctx, "creating the timestamp query set");
        if (s != WGNN_OK) {
            if (ctx->qset) wgpuQuerySetRelease(ctx->qset);
            ctx->qset = NULL;
            return s;
        }
        ctx->q_cap = WGNN__QUERY_CAP;
    }
    ctx->q_used = 0;
    ctx->timing = true;
    return WGNN_OK;
}

typedef struct map_result {
    WGPUMapAsyncStatus status;
    char msg[256];
} map_result;

static void on_map(WGPUMapAsyncStatus status, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    map_result *r = u1;
    r->status = status;
    wgnn__strview(r->msg, sizeof r->msg, message);
}

wgnn_status wgnn__read_buffer(wgnn_context *ctx, WGPUBuffer src, uint64_t size, void *dst, size_t dst_bytes) {
    WGPUBuffer staging = NULL;
    uint64_t padded = (size + 3u) & ~(uint64_t)3u;
    wgnn_status s = wgnn__buffer_create(ctx, padded, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                        "readback staging", &staging);
    if (s != WGNN_OK) return s;
    s = ensure_encoder(ctx);
    if (s != WGNN_OK) goto cleanup;
    wgpuCommandEncoderCopyBufferToBuffer(ctx->enc, src, 0, staging, 0, padded);
    s = wgnn__flush(ctx, false);
    if (s != WGNN_OK) goto cleanup;
    map_result r = {0};
    WGPUBufferMapCallbackInfo ci = WGPU_BUFFER_MAP_CALLBACK_INFO_INIT;
    ci.mode = WGPUCallbackMode_WaitAnyOnly;
    ci.callback = on_map;
    ci.userdata1 = &r;
    s = wgnn__wait(ctx, wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, (size_t)padded, ci), "reading back");
    if (s != WGNN_OK) goto cleanup;
    if (r.status != WGPUMapAsyncStatus_Success) {
        s = wgnn__check_health(ctx);
        if (s == WGNN_OK)
            s = wgnn__err(ctx, WGNN_ERR_GPU, "reading back: mapping failed (status %d): %s", (int)r.status, r.msg);
        goto cleanup;
    }
    const void *p = wgpuBufferGetConstMappedRange(staging, 0, (size_t)padded);
    if (!p) {
        s = wgnn__err(ctx, WGNN_ERR_GPU, "reading back: no mapped range");
        wgpuBufferUnmap(staging);
        goto cleanup;
    }
    memcpy(dst, p, dst_bytes < size ? dst_bytes : (size_t)size);
    wgpuBufferUnmap(staging);
    s = wgnn__check_health(ctx);
cleanup:
    if (staging) {
        wgpuBufferDestroy(staging);
        wgpuBufferRelease(staging);
    }
    return s;
}

wgnn_status wgnn_timing_end(wgnn_context *ctx, double *ms, int *gpu_timed) {
    if (!ctx || !ms || !gpu_timed) return WGNN_ERR_INVALID_ARGUMENT;
    *ms = 0;
    *gpu_timed = 0;
    bool was = ctx->timing;
    uint32_t n = ctx->q_used;
    ctx->timing = false;
    if (!was) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "wgnn_timing_end without wgnn_timing_begin");
    if (!ctx->qset || n == 0) return wgnn__flush(ctx, true);
    WGPUBuffer resolve = NULL;
    uint64_t *ts = NULL;
    wgnn_status s = wgnn__buffer_create(ctx, (uint64_t)n * 8u, WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc,
                                        "timestamp resolve", &resolve);
    if (s != WGNN_OK) goto cleanup;
    s = ensure_encoder(ctx);
    if (s != WGNN_OK) goto cleanup;
    wgpuCommandEncoderResolveQuerySet(ctx->enc, ctx->qset, 0, n, resolve, 0);
    ts = malloc((size_t)n * 8u);
    if (!ts) {
        s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory reading timestamps");
        goto cleanup;
    }
    s = wgnn__read_buffer(ctx, resolve, (uint64_t)n * 8u, ts, (size_t)n * 8u);
    if (s != WGNN_OK) goto cleanup;
    double total = 0;
    for (uint32_t i = 0; i + 1 < n; i += 2)
        if (ts[i + 1] > ts[i]) total += (double)(ts[i + 1] - ts[i]);
    *ms = total / 1e6;
    *gpu_timed = 1;
cleanup:
    free(ts);
    if (resolve) {
        wgpuBufferDestroy(resolve);
        wgpuBufferRelease(resolve);
    }
    return s;
}
