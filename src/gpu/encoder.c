/* encoder.c - plans (dispatch descriptions) into one command buffer, one
 * submit; readback; timestamps.
 *
 * Recorded work is bounded: it is submitted once it holds 1024 dispatches
 * (the uniform arena's slots) or 1 GiB of scratch buffers, and every eighth
 * submit without a wait is waited for, so a caller that records forever
 * without syncing runs in bounded memory. Error scopes wrap each op's
 * recording and each submit: one round trip per op, not per dispatch. A
 * scope never spans two calls: Dawn keeps error scopes per thread, and a
 * context may be used from another thread in the next call. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WGNN__QUERY_CAP 4096u
#define WGNN__FLUSH_DISPATCHES 1024u
#define WGNN__FLUSH_SCRATCH (1ull << 30)
#define WGNN__UNWAITED_FLUSHES 8u

/* ---- plans ------------------------------------------------------------------ */

wgnn__dispatch *wgnn__plan_add(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe, const void *params,
                               uint32_t params_size, uint32_t gx, uint32_t gy, uint32_t gz) {
    if (params_size > WGNN__PARAMS_MAX) {
        wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "params block of %u bytes is past %u", params_size,
                  WGNN__PARAMS_MAX);
        return NULL;
    }
    if (p->n == p->cap) {
        uint32_t nc = p->cap ? p->cap * 2 : 4;
        wgnn__dispatch *nd = realloc(p->d, (size_t)nc * sizeof *nd);
        if (!nd) {
            wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory planning dispatches");
            return NULL;
        }
        p->d = nd;
        p->cap = nc;
    }
    wgnn__dispatch *d = &p->d[p->n++];
    memset(d, 0, sizeof *d);
    d->pipe = pipe;
    d->params_size = params_size;
    if (params_size) memcpy(d->params, params, params_size);
    d->grid[0] = gx;
    d->grid[1] = gy;
    d->grid[2] = gz;
    return d;
}

void wgnn__plan_bind(wgnn__dispatch *d, WGPUBuffer buf, uint64_t offset, uint64_t size) {
    if (d->n_b >= WGNN__MAX_BIND) return; /* kernels have fewer; plan_encode rejects a NULL buffer */
    d->b[d->n_b++] = (wgnn__binding){buf, offset, size, 0};
}

void wgnn__plan_bind_scratch(wgnn__dispatch *d, uint32_t scratch_index, uint64_t offset, uint64_t size) {
    if (d->n_b >= WGNN__MAX_BIND) return;
    d->b[d->n_b++] = (wgnn__binding){NULL, offset, size, scratch_index + 1};
}

void wgnn__plan_bind_range(wgnn__dispatch *d, const wgnn__binding *b, uint64_t offset, uint64_t size) {
    if (d->n_b >= WGNN__MAX_BIND) return;
    d->b[d->n_b++] = (wgnn__binding){b->buf, b->offset + offset, size, b->scratch};
}

int wgnn__plan_scratch(wgnn__plan *p, uint64_t bytes) {
    if (p->n_scratch >= WGNN__MAX_SCRATCH) return -1;
    p->scratch[p->n_scratch] = bytes;
    return (int)p->n_scratch++;
}

uint64_t wgnn__plan_scratch_bytes(const wgnn__plan *p) {
    uint64_t t = 0;
    for (uint32_t i = 0; i < p->n_scratch; i++) t += (p->scratch[i] + 3u) & ~(uint64_t)3u;
    return t;
}

void wgnn__plan_free(wgnn__plan *p) {
    free(p->d);
    memset(p, 0, sizeof *p);
}

/* ---- recording ---------------------------------------------------------------- */

/* A scratch buffer of at least size bytes: a cached one of up to twice the
 * size (or 1 MiB more), else a new one. */
static WGPUBuffer scratch_take(wgnn_context *ctx, uint64_t size, const char *label) {
    int best = -1;
    for (int i = 0; i < WGNN__SCRATCH_CACHE; i++) {
        uint64_t have = ctx->scratch_cache[i].size;
        if (ctx->scratch_cache[i].buf && have >= size && (have <= 2 * size || have <= size + (1u << 20)) &&
            (best < 0 || have < ctx->scratch_cache[best].size))
            best = i;
    }
    if (best >= 0) {
        WGPUBuffer b = ctx->scratch_cache[best].buf;
        ctx->scratch_cache[best].buf = NULL;
        ctx->scratch_cache[best].size = 0;
        return b;
    }
    WGPUBufferDescriptor bd = WGPU_BUFFER_DESCRIPTOR_INIT;
    bd.label = wgnn__sv(label);
    bd.size = size;
    bd.usage = WGPUBufferUsage_Storage;
    return wgpuDeviceCreateBuffer(ctx->device, &bd); /* errors: the pending scope */
}

/* Keeps b (size bytes) for later plans, evicting the smallest kept one. */
static void scratch_give(wgnn_context *ctx, WGPUBuffer b, uint64_t size) {
    int slot = -1;
    for (int i = 0; i < WGNN__SCRATCH_CACHE; i++) {
        if (!ctx->scratch_cache[i].buf) {
            slot = i;
            break;
        }
        if (slot < 0 || ctx->scratch_cache[i].size < ctx->scratch_cache[slot].size) slot = i;
    }
    if (ctx->scratch_cache[slot].buf) {
        if (ctx->scratch_cache[slot].size >= size) {
            wgpuBufferRelease(b);
            return;
        }
        wgpuBufferRelease(ctx->scratch_cache[slot].buf);
    }
    ctx->scratch_cache[slot].buf = b;
    ctx->scratch_cache[slot].size = size;
}

static wgnn_status ensure_encoder(wgnn_context *ctx) {
    if (ctx->enc) return WGNN_OK;
    WGPUCommandEncoderDescriptor d = WGPU_COMMAND_ENCODER_DESCRIPTOR_INIT;
    ctx->enc = wgpuDeviceCreateCommandEncoder(ctx->device, &d);
    if (!ctx->enc) return wgnn__err(ctx, WGNN_ERR_GPU, "could not create a command encoder");
    return WGNN_OK;
}

static WGPUComputePassEncoder pass_begin(wgnn_context *ctx) {
    WGPUComputePassDescriptor d = WGPU_COMPUTE_PASS_DESCRIPTOR_INIT;
    WGPUPassTimestampWrites tw = WGPU_PASS_TIMESTAMP_WRITES_INIT;
    if (ctx->timing && ctx->qset && ctx->q_used + 2 <= ctx->q_cap) {
        tw.querySet = ctx->qset;
        tw.beginningOfPassWriteIndex = ctx->q_used;
        tw.endOfPassWriteIndex = ctx->q_used + 1;
        ctx->q_used += 2;
        d.timestampWrites = &tw;
    }
    return wgpuCommandEncoderBeginComputePass(ctx->enc, &d);
}

WGPUBindGroup wgnn__bind_group(wgnn_context *ctx, const wgnn__dispatch *d, WGPUBuffer uni, uint64_t uni_offset,
                               const WGPUBuffer *scratch, const uint64_t *scratch_size,
                               uint64_t (*whole_size)(void *user, WGPUBuffer buf, uint64_t offset), void *user) {
    WGPUBindGroupEntry e[WGNN__MAX_BIND + 1];
    uint32_t n = 0;
    if (d->params_size) {
        WGPUBindGroupEntry x = WGPU_BIND_GROUP_ENTRY_INIT;
        x.binding = 0;
        x.buffer = uni;
        x.offset = uni_offset;
        x.size = (d->params_size + 15u) & ~15u;
        e[n++] = x;
    }
    for (uint32_t j = 0; j < d->n_b; j++) {
        const wgnn__binding *b = &d->b[j];
        WGPUBindGroupEntry x = WGPU_BIND_GROUP_ENTRY_INIT;
        x.binding = n;
        x.offset = b->offset;
        x.size = b->size ? b->size : WGPU_WHOLE_SIZE;
        if (b->scratch) {
            x.buffer = scratch[b->scratch - 1];
            uint64_t want = scratch_size[b->scratch - 1] ? (scratch_size[b->scratch - 1] + 3u) & ~(uint64_t)3u : 4u;
            if (!b->size && b->offset < want) x.size = want - b->offset;
        } else {
            x.buffer = b->buf;
            if (!b->size && whole_size) {
                uint64_t c = whole_size(user, b->buf, b->offset);
                if (c) x.size = c;
            }
        }
        e[n++] = x;
    }
    WGPUBindGroupDescriptor bgd = WGPU_BIND_GROUP_DESCRIPTOR_INIT;
    bgd.layout = d->pipe->layout;
    bgd.entryCount = n;
    bgd.entries = e;
    return wgpuDeviceCreateBindGroup(ctx->device, &bgd);
}

wgnn_status wgnn__plan_encode(wgnn_context *ctx, const wgnn__plan *p) {
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK || p->n == 0) return s;
    const char *label = p->label ? p->label : "op";
    for (uint32_t i = 0; i < p->n_scratch; i++)
        if (p->scratch[i] > ctx->limits.maxBufferSize || p->scratch[i] > ctx->limits.maxStorageBufferBindingSize)
            return wgnn__err(ctx, WGNN_ERR_LIMIT,
                             "%s: a %llu-byte scratch buffer passes the device's maxStorageBufferBindingSize "
                             "(%llu bytes)",
                             label, (unsigned long long)p->scratch[i],
                             (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    for (uint32_t i = 0; i < p->n; i++) {
        const wgnn__dispatch *d = &p->d[i];
        if (!d->pipe) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: dispatch %u has no pipeline", label, i);
        for (uint32_t j = 0; j < d->n_b; j++)
            if (!d->b[j].buf && (d->b[j].scratch == 0 || d->b[j].scratch > p->n_scratch))
                return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: dispatch %u binding %u has no buffer", label, i,
                                 j);
    }
    s = wgnn__uniform_reserve(ctx, p->n); /* may submit earlier work */
    if (s != WGNN_OK) return s;
    wgnn__scope_push(ctx);
    s = ensure_encoder(ctx);

    WGPUBuffer scratch[WGNN__MAX_SCRATCH] = {0};
    uint64_t scratch_size[WGNN__MAX_SCRATCH] = {0};
    uint64_t scratch_bytes = 0;
    for (uint32_t i = 0; i < p->n_scratch; i++) {
        scratch_size[i] = p->scratch[i] ? (p->scratch[i] + 3u) & ~(uint64_t)3u : 4u;
        scratch[i] = scratch_take(ctx, scratch_size[i], label);
        scratch_bytes += scratch_size[i];
        if (!scratch[i]) s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "%s: no scratch buffer", label);
    }
    WGPUComputePassEncoder pass = s == WGNN_OK ? pass_begin(ctx) : NULL;
    if (s == WGNN_OK && !pass) s = wgnn__err(ctx, WGNN_ERR_GPU, "%s: could not begin a compute pass", label);
    for (uint32_t i = 0; s == WGNN_OK && i < p->n; i++) {
        const wgnn__dispatch *d = &p->d[i];
        uint64_t uoff = d->params_size ? wgnn__uniform_push(ctx, d->params, d->params_size) : 0;
        WGPUBindGroup bg = wgnn__bind_group(ctx, d, ctx->uni, uoff, scratch, p->scratch, NULL, NULL);
        if (!bg) {
            s = wgnn__err(ctx, WGNN_ERR_GPU, "%s: could not create a bind group", label);
            break;
        }
        wgpuComputePassEncoderSetPipeline(pass, d->pipe->pipe);
        wgpuComputePassEncoderSetBindGroup(pass, 0, bg, 0, NULL);
        if (d->grid[0] && d->grid[1] && d->grid[2])
            wgpuComputePassEncoderDispatchWorkgroups(pass, d->grid[0], d->grid[1], d->grid[2]);
        wgpuBindGroupRelease(bg); /* the pass keeps its own reference */
    }
    if (pass) {
        wgpuComputePassEncoderEnd(pass);
        wgpuComputePassEncoderRelease(pass);
    }
    for (uint32_t i = 0; i < p->n_scratch; i++) /* the command buffer keeps its own references */
        if (scratch[i]) {
            if (s == WGNN_OK) scratch_give(ctx, scratch[i], wgpuBufferGetSize(scratch[i]));
            else wgpuBufferRelease(scratch[i]);
        }
    wgnn_status sp = wgnn__scope_pop(ctx, label);
    if (s == WGNN_OK) s = sp;
    if (s != WGNN_OK) return s;
    ctx->pending_dispatches += p->n;
    ctx->pending_scratch += scratch_bytes;
    if (ctx->pending_dispatches >= WGNN__FLUSH_DISPATCHES || ctx->pending_scratch >= WGNN__FLUSH_SCRATCH)
        return wgnn__flush(ctx, false);
    return WGNN_OK;
}

/* ---- submit and wait -------------------------------------------------------- */

static void on_done(WGPUQueueWorkDoneStatus status, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    wgnn__cb *r = u1;
    r->fired = 1;
    r->status = (int)status;
    wgnn__strview(r->msg, sizeof r->msg, message);
}

static wgnn_status wait_idle(wgnn_context *ctx) {
    wgnn__cb *r = wgnn__cb_new();
    if (!r) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory waiting for the GPU");
    WGPUQueueWorkDoneCallbackInfo ci = WGPU_QUEUE_WORK_DONE_CALLBACK_INFO_INIT;
    ci.mode = WGPUCallbackMode_WaitAnyOnly;
    ci.callback = on_done;
    ci.userdata1 = r;
    wgnn_status s = wgnn__cb_wait(ctx, wgpuQueueOnSubmittedWorkDone(ctx->queue, ci), r, "waiting for submitted work");
    if (s != WGNN_OK) return s; /* r is parked */
    ctx->unwaited_flushes = 0;
    if (r->status != (int)WGPUQueueWorkDoneStatus_Success)
        s = wgnn__err(ctx, ctx->health != WGNN_OK ? ctx->health : WGNN_ERR_GPU,
                      "submitted work did not complete (status %d)%s%s", r->status, ctx->health != WGNN_OK ? ": " : "",
                      ctx->health_msg);
    wgnn__cb_free(r);
    return s != WGNN_OK ? s : wgnn__check_health(ctx);
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
        if (ctx->uni_used) wgpuQueueWriteBuffer(ctx->queue, ctx->uni, 0, ctx->uni_host, ctx->uni_used);
        if (cb) {
            wgpuQueueSubmit(ctx->queue, 1, &cb);
            wgpuCommandBufferRelease(cb);
        }
        wgpuCommandEncoderRelease(enc);
        ctx->uni_used = 0;
        ctx->pending_dispatches = 0;
        ctx->pending_scratch = 0;
        ctx->unwaited_flushes++;
        s = wgnn__scope_pop(ctx, "submitting recorded work");
        if (s != WGNN_OK) return s;
        if (ctx->unwaited_flushes >= WGNN__UNWAITED_FLUSHES) wait = true;
    }
    if (!wait) {
        wgpuInstanceProcessEvents(ctx->instance); /* lets Dawn reclaim finished work */
        return WGNN_OK;
    }
    return wait_idle(ctx);
}

wgnn_status wgnn_context_sync(wgnn_context *ctx) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    /* submits, waits (the map), and reports data errors */
    return wgnn__leave(ctx, wgnn__read_buffer(ctx, NULL, 0, NULL, 0));
}

void wgnn__finish_submit(wgnn_context *ctx, WGPUCommandEncoder enc) {
    WGPUCommandBufferDescriptor cd = WGPU_COMMAND_BUFFER_DESCRIPTOR_INIT;
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, &cd);
    if (cb) {
        wgpuQueueSubmit(ctx->queue, 1, &cb);
        wgpuCommandBufferRelease(cb);
    }
    wgpuCommandEncoderRelease(enc);
}

/* ---- readback ------------------------------------------------------------------ */

void wgnn__on_map(WGPUMapAsyncStatus status, WGPUStringView message, void *u1, void *u2) {
    (void)u2;
    wgnn__cb *r = u1;
    r->fired = 1;
    r->status = (int)status;
    wgnn__strview(r->msg, sizeof r->msg, message);
}

/* Reads the data-error words back with every readback: a set code becomes
 * the call's error and is cleared. */
wgnn_status wgnn__data_error(wgnn_context *ctx, const uint32_t w[4]) {
    if (w[0] == 0) return WGNN_OK;
    static const uint32_t zero[4] = {0, 0, 0, 0};
    wgpuQueueWriteBuffer(ctx->queue, ctx->data_err, 0, zero, sizeof zero);
    const char *by = "found on the GPU by an op recorded before this call";
    int32_t v = (int32_t)w[1];
    unsigned at = w[2], last = w[3] ? w[3] - 1 : 0;
    switch (w[0]) {
    case WGNN__DATA_ERR_INDEX:
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "an index in the data is out of range: indices[%u] = %d, valid 0..%u (%s, a row gather such "
                         "as embedding; the output rows of such indices are zeros)", at, v, last, by);
    case WGNN__DATA_ERR_INDEX_COPY:
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "an index_copy index is out of range: index[%u] = %d, valid 0..%u (%s; the rows of such "
                         "indices were not written)", at, v, last, by);
    case WGNN__DATA_ERR_SEQLEN:
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "a KV cache length is out of range: cache_seqlens[%u] = %d, valid 0..%u (%s; attention "
                         "read it clamped to that range)", at, v, last, by);
    case WGNN__DATA_ERR_SEQLEN_NEW:
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "cache_seqlens[%u] = %d is out of range: the %u new rows go to positions L - %u .. L - 1, so "
                         "L must be at least %u and at most the cache's rows (%s; the new rows were not written)", at,
                         v, w[3], w[3], w[3], by);
    case WGNN__DATA_ERR_SAMPLE:
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "sample: row %u of the logits has no token of nonzero probability (every logit -inf, or NaN "
                         "or +inf ones) (%s; its id was set to 0)", at, by);
    case WGNN__DATA_ERR_CACHE_POS:
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "a KV cache position is out of range: positions[%u] = %d, valid 0..%u (%s; that token's "
                         "keys and values were not written)", at, v, last, by);
    }
    return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "a kernel reported invalid data (code %u)", w[0]);
}

wgnn_status wgnn__read_buffer(wgnn_context *ctx, WGPUBuffer src, uint64_t size, void *dst, size_t dst_bytes) {
    WGPUBuffer staging = NULL;
    uint64_t padded = (size + 3u) & ~(uint64_t)3u;
    /* the data-error words ride along after the data, 16-byte aligned */
    uint64_t err_off = (padded + 15u) & ~(uint64_t)15u;
    wgnn_status s = wgnn__buffer_create(ctx, err_off + 16u, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                        "readback staging", &staging);
    if (s != WGNN_OK) return s;
    s = ensure_encoder(ctx);
    if (s == WGNN_OK) {
        if (src && padded) wgpuCommandEncoderCopyBufferToBuffer(ctx->enc, src, 0, staging, 0, padded);
        wgpuCommandEncoderCopyBufferToBuffer(ctx->enc, ctx->data_err, 0, staging, err_off, 16);
        s = wgnn__flush(ctx, false);
    }
    if (s != WGNN_OK) {
        wgpuBufferRelease(staging);
        return s;
    }
    s = wgnn__map_read(ctx, staging, err_off, dst, dst_bytes < size ? dst_bytes : (size_t)size,
                       src ? "reading back" : "waiting for the GPU to finish the work recorded so far");
    wgpuBufferDestroy(staging);
    wgpuBufferRelease(staging);
    return s;
}

wgnn_status wgnn__map_read_n(wgnn_context *ctx, WGPUBuffer buf, uint64_t err_off, int n_dst, void *const *dst,
                             const uint64_t *off, const size_t *len, const char *what) {
    wgnn__cb *r = wgnn__cb_new();
    if (!r) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
    wgpuBufferAddRef(buf);
    r->hold = buf; /* the record holds a reference: a timed-out map still refers to the buffer */
    WGPUBufferMapCallbackInfo ci = WGPU_BUFFER_MAP_CALLBACK_INFO_INIT;
    ci.mode = WGPUCallbackMode_WaitAnyOnly;
    ci.callback = wgnn__on_map;
    ci.userdata1 = r;
    wgnn_status s = wgnn__cb_wait(ctx, wgpuBufferMapAsync(buf, WGPUMapMode_Read, 0, (size_t)(err_off + 16u), ci), r, what);
    if (s != WGNN_OK) return s; /* r (and its reference) parked until the context goes */
    ctx->unwaited_flushes = 0;
    if (r->status != (int)WGPUMapAsyncStatus_Success) {
        s = wgnn__check_health(ctx);
        if (s == WGNN_OK) s = wgnn__err(ctx, WGNN_ERR_GPU, "%s: mapping failed (status %d): %s", what, r->status, r->msg);
    } else {
        const unsigned char *p = wgpuBufferGetConstMappedRange(buf, 0, (size_t)(err_off + 16u));
        if (p) {
            uint32_t w[4];
            memcpy(w, p + err_off, sizeof w);
            for (int i = 0; i < n_dst; i++)
                if (dst[i] && len[i]) memcpy(dst[i], p + off[i], len[i]);
            s = wgnn__check_health(ctx);
            if (s == WGNN_OK) s = wgnn__data_error(ctx, w);
        } else {
            s = wgnn__err(ctx, WGNN_ERR_GPU, "%s: no mapped range", what);
        }
        wgpuBufferUnmap(buf);
    }
    wgnn__cb_free(r); /* drops its reference */
    return s;
}

wgnn_status wgnn__map_read(wgnn_context *ctx, WGPUBuffer buf, uint64_t err_off, void *dst, size_t n, const char *what) {
    uint64_t off = 0;
    return wgnn__map_read_n(ctx, buf, err_off, 1, &dst, &off, &n, what);
}

/* ---- timing --------------------------------------------------------------------- */

static wgnn_status timing_begin(wgnn_context *ctx) {
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

wgnn_status wgnn_timing_begin(wgnn_context *ctx) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(ctx, timing_begin(ctx));
}

static wgnn_status timing_end(wgnn_context *ctx, double *ms, int *gpu_timed) {
    if (!ms || !gpu_timed) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "timing_end: ms and gpu_timed must not be NULL");
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

wgnn_status wgnn_timing_end(wgnn_context *ctx, double *ms, int *gpu_timed) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(ctx, timing_end(ctx, ms, gpu_timed));
}
