/* tensor.c - GPU buffers with a dtype and a shape; upload and readback. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static wgnn_status tensor_create(wgnn_context *ctx, wgnn_dtype dtype, int rank, const int64_t *dims,
                                 wgnn_tensor **out) {
    if (!out) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "tensor_create: out must not be NULL");
    *out = NULL;
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    size_t es = wgnn_dtype_size(dtype);
    if (es == 0) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "tensor_create: unknown dtype %d", (int)dtype);
    if (rank < 0 || rank > WGNN_MAX_RANK)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "tensor_create: rank %d outside 0..%d", rank, WGNN_MAX_RANK);
    if (!dims && rank > 0) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "tensor_create: dims must not be NULL");
    uint64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "tensor_create: dim %d is %lld; every dim must be >= 1", i,
                             (long long)dims[i]);
        if (!wgnn__mul_u64(numel, (uint64_t)dims[i], &numel))
            return wgnn__err(ctx, WGNN_ERR_LIMIT, "tensor_create: element count overflows 64 bits");
    }
    uint64_t nbytes;
    if (!wgnn__mul_u64(numel, es, &nbytes) || nbytes > UINT64_MAX - 3)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "tensor_create: byte size overflows 64 bits");
    if (nbytes > ctx->limits.maxBufferSize)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "tensor_create: %llu bytes pass the device's maxBufferSize (%llu bytes)",
                         (unsigned long long)nbytes, (unsigned long long)ctx->limits.maxBufferSize);
    wgnn_tensor *t = calloc(1, sizeof *t);
    if (!t) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "tensor_create: out of host memory");
    s = wgnn__buffer_create(ctx, nbytes,
                            WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst, "tensor",
                            &t->buf);
    if (s != WGNN_OK) {
        free(t);
        return s;
    }
    t->ctx = ctx;
    t->dtype = dtype;
    t->rank = rank;
    if (rank) memcpy(t->dims, dims, (size_t)rank * sizeof dims[0]);
    t->numel = numel;
    t->nbytes = nbytes;
    t->buf_size = (nbytes + 3u) & ~(uint64_t)3u;
    *out = t;
    return WGNN_OK;
}

wgnn_status wgnn_tensor_create(wgnn_context *ctx, wgnn_dtype dtype, int rank, const int64_t *dims,
                               wgnn_tensor **out) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(ctx, tensor_create(ctx, dtype, rank, dims, out));
}

void wgnn__tensor_free(wgnn_tensor *t) {
    if (!t) return;
    if (t->buf) wgpuBufferRelease(t->buf); /* recorded work keeps its own reference */
    free(t);
}

void wgnn_tensor_destroy(wgnn_tensor *t) {
    if (t && !t->owner) wgnn__tensor_free(t); /* a graph's tensor goes with the graph */
}

static wgnn_status check_io(wgnn_context *ctx, const wgnn_tensor *t, const void *data, size_t bytes,
                            const char *what) {
    if (!t || !data) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: tensor and data must not be NULL", what);
    if (t->ctx != ctx) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: tensor belongs to another context", what);
    if (bytes != t->nbytes)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: %zu bytes given, the tensor holds %llu", what, bytes,
                         (unsigned long long)t->nbytes);
    return wgnn__check_health(ctx);
}

static wgnn_status tensor_upload(wgnn_context *ctx, wgnn_tensor *t, const void *data, size_t bytes) {
    wgnn_status s = check_io(ctx, t, data, bytes, "tensor_upload");
    if (s != WGNN_OK) return s;
    return wgnn__buffer_write(ctx, t->buf, data, bytes, "tensor_upload");
}

/* Uploads of STAGED_MIN to STAGED_CAP bytes go through one staging buffer
 * the context keeps (mapped for writing, copied on the GPU, mapped again at
 * the next upload) instead of wgpuQueueWriteBuffer: Dawn stages a write past
 * its ring buffer in a buffer made for it, and on the H200 a 19 MB input
 * (ViT-B/16 at batch 32) took 6.7-7.7 ms so, 2.5 this way. Larger uploads
 * (an LM head's weights, once) keep the queue write: through one buffer
 * they would wait for each piece's copy (on lavapipe 114 MB took 126-177
 * ms so against 104-113). */
#define STAGED_MIN (4ull << 20)
#define STAGED_CAP (64ull << 20)

static wgnn_status map_for_write(wgnn_context *ctx, const char *what) {
    wgnn__cb *r = wgnn__cb_new();
    if (!r) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
    wgpuBufferAddRef(ctx->up);
    r->hold = ctx->up; /* a timed-out map still refers to the buffer */
    WGPUBufferMapCallbackInfo ci = WGPU_BUFFER_MAP_CALLBACK_INFO_INIT;
    ci.mode = WGPUCallbackMode_WaitAnyOnly;
    ci.callback = wgnn__on_map;
    ci.userdata1 = r;
    wgnn_status s = wgnn__cb_wait(ctx, wgpuBufferMapAsync(ctx->up, WGPUMapMode_Write, 0, (size_t)ctx->up_size, ci), r,
                                  what);
    if (s != WGNN_OK) return s; /* r parked until the context goes */
    if (r->status != (int)WGPUMapAsyncStatus_Success) {
        s = wgnn__check_health(ctx);
        if (s == WGNN_OK)
            s = wgnn__err(ctx, WGNN_ERR_GPU, "%s: mapping the upload staging buffer failed (status %d): %s", what,
                          r->status, r->msg);
    } else {
        ctx->up_mapped = true;
    }
    wgnn__cb_free(r);
    return s;
}

static wgnn_status staged_write(wgnn_context *ctx, WGPUBuffer buf, const void *data, size_t bytes, const char *what) {
    uint64_t padded = ((uint64_t)bytes + 3u) & ~3ull;
    if (ctx->up && ctx->up_size < padded) {
        wgpuBufferRelease(ctx->up);
        ctx->up = NULL;
    }
    wgnn_status s;
    if (!ctx->up) {
        WGPUBufferDescriptor d = WGPU_BUFFER_DESCRIPTOR_INIT;
        d.label = wgnn__sv("upload staging");
        d.size = padded;
        d.usage = WGPUBufferUsage_MapWrite | WGPUBufferUsage_CopySrc;
        d.mappedAtCreation = true;
        wgnn__scope_push(ctx);
        ctx->up = wgpuDeviceCreateBuffer(ctx->device, &d);
        s = wgnn__scope_pop(ctx, what);
        if (s == WGNN_OK && !ctx->up) s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "%s: no upload staging buffer", what);
        if (s != WGNN_OK) {
            if (ctx->up) wgpuBufferRelease(ctx->up);
            ctx->up = NULL;
            return s;
        }
        ctx->up_size = padded;
        ctx->up_mapped = true;
    }
    if (!ctx->up_mapped && (s = map_for_write(ctx, what)) != WGNN_OK) return s;
    unsigned char *p = wgpuBufferGetMappedRange(ctx->up, 0, (size_t)padded);
    if (!p) return wgnn__err(ctx, WGNN_ERR_GPU, "%s: no mapped range in the upload staging buffer", what);
    memcpy(p, data, bytes);
    if (padded > bytes) memset(p + bytes, 0, (size_t)(padded - bytes)); /* f16 tensors with an odd element count */
    wgpuBufferUnmap(ctx->up);
    ctx->up_mapped = false;
    wgnn__scope_push(ctx);
    WGPUCommandEncoderDescriptor ed = WGPU_COMMAND_ENCODER_DESCRIPTOR_INIT;
    WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(ctx->device, &ed);
    if (enc) {
        wgpuCommandEncoderCopyBufferToBuffer(enc, ctx->up, 0, buf, 0, padded);
        wgnn__finish_submit(ctx, enc);
    }
    s = wgnn__scope_pop(ctx, what);
    if (s == WGNN_OK && !enc) s = wgnn__err(ctx, WGNN_ERR_GPU, "%s: could not create a command encoder", what);
    if (s != WGNN_OK) return s;
    ctx->unwaited_flushes++;
    return WGNN_OK;
}

wgnn_status wgnn__buffer_write(wgnn_context *ctx, WGPUBuffer buf, const void *data, size_t bytes, const char *what) {
    /* Queue writes run before any later submit: submit what was recorded so
     * that it reads the old contents, as documented. */
    wgnn_status s;
    if (ctx->enc) {
        s = wgnn__flush(ctx, false);
        if (s != WGNN_OK) return s;
    }
    if (bytes >= STAGED_MIN && bytes <= STAGED_CAP && !ctx->knobs.no_staged_upload)
        return staged_write(ctx, buf, data, bytes, what);
    size_t body = bytes & ~(size_t)3u;
    wgnn__scope_push(ctx);
    if (body) wgpuQueueWriteBuffer(ctx->queue, buf, 0, data, body);
    if (body < bytes) { /* f16 tensors with an odd element count */
        unsigned char tail[4] = {0};
        memcpy(tail, (const unsigned char *)data + body, bytes - body);
        wgpuQueueWriteBuffer(ctx->queue, buf, body, tail, 4);
    }
    return wgnn__scope_pop(ctx, what);
}

wgnn_status wgnn_tensor_upload(wgnn_context *ctx, wgnn_tensor *t, const void *data, size_t bytes) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(ctx, tensor_upload(ctx, t, data, bytes));
}

wgnn_status wgnn_tensor_download(wgnn_context *ctx, const wgnn_tensor *t, void *data, size_t bytes) {
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    s = check_io(ctx, t, data, bytes, "tensor_download");
    if (s == WGNN_OK) s = wgnn__read_buffer(ctx, t->buf, t->buf_size, data, bytes);
    return wgnn__leave(ctx, s);
}

static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0)); /* inf, NaN */
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u); /* overflow */
    if (e <= 0) { /* subnormal half or zero */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* may carry into the exponent: right */
    return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
    if (exp == 0x1fu) {
        x = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            x = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else {
        x = sign | ((exp + 127u - 15u) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

void wgnn_f32_to_f16(const float *src, uint16_t *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = f32_to_f16(src[i]);
}

void wgnn_f16_to_f32(const uint16_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = f16_to_f32(src[i]);
}

wgnn_dtype wgnn_tensor_dtype(const wgnn_tensor *t) { return t ? t->dtype : WGNN_F32; }
int wgnn_tensor_rank(const wgnn_tensor *t) { return t ? t->rank : 0; }
const int64_t *wgnn_tensor_dims(const wgnn_tensor *t) { return t ? t->dims : NULL; }
uint64_t wgnn_tensor_numel(const wgnn_tensor *t) { return t ? t->numel : 0; }
uint64_t wgnn_tensor_nbytes(const wgnn_tensor *t) { return t ? t->nbytes : 0; }
