/* internal.h - shared by the library's .c files; not installed. */
#ifndef WGNN_INTERNAL_H
#define WGNN_INTERNAL_H

#include "wgnn.h"

#include <webgpu/webgpu.h>

#include <stdarg.h>
#include <stdbool.h>

#define WGNN__ERR_LEN 1024

typedef struct wgnn__pipe_entry {
    char *key;
    WGPUComputePipeline pipe;
    WGPUBindGroupLayout layout;
} wgnn__pipe_entry;

struct wgnn_context {
    WGPUInstance instance;
    WGPUAdapter adapter;
    WGPUDevice device;
    WGPUQueue queue;
    wgnn_adapter_info info;
    WGPULimits limits;
    bool has_f16, has_subgroups, has_timestamps;
    uint64_t timeout_ns;

    wgnn_status health;            /* sticky: device lost or uncaptured error */
    char health_msg[WGNN__ERR_LEN];
    char err[WGNN__ERR_LEN];

    wgnn__pipe_entry *pipes;       /* lazily built pipelines, by key */
    size_t n_pipes, cap_pipes;

    WGPUCommandEncoder enc;        /* pending work, submitted by wgnn__flush */
    uint32_t n_passes;             /* passes recorded into enc */
    WGPUBuffer dummy;              /* 16-byte buffers for absent optional bindings: */
    WGPUBuffer dummy_rw;           /* read-only and read-write ones may not share one */

    bool timing;                   /* timestamp each pass (wgnn_timing_begin) */
    WGPUQuerySet qset;
    uint32_t q_used, q_cap;
};

struct wgnn_tensor {
    wgnn_context *ctx;
    WGPUBuffer buf;
    uint64_t buf_size;             /* nbytes rounded up to 4 */
    wgnn_dtype dtype;
    int rank;
    int64_t dims[WGNN_MAX_RANK];
    uint64_t numel, nbytes;
};

/* Errors: set ctx->err and return the status. ctx may be NULL. */
wgnn_status wgnn__err(wgnn_context *ctx, wgnn_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* WGNN_OK, or the sticky device status (with ctx->err set from it). */
wgnn_status wgnn__check_health(wgnn_context *ctx);
/* Copies a WGPUStringView into dst (always terminated). */
void wgnn__strview(char *dst, size_t cap, WGPUStringView v);

/* Error scopes: push validation + out-of-memory + internal; pop them, wait,
 * and turn the first error into a status whose message starts with what. */
void wgnn__scope_push(wgnn_context *ctx);
wgnn_status wgnn__scope_pop(wgnn_context *ctx, const char *what);
/* Waits for a future; WGNN_ERR_TIMEOUT after ctx->timeout_ns. */
wgnn_status wgnn__wait(wgnn_context *ctx, WGPUFuture f, const char *what);

/* Buffers. size is rounded up to 4 bytes. */
wgnn_status wgnn__buffer_create(wgnn_context *ctx, uint64_t size, WGPUBufferUsage usage,
                                const char *what, WGPUBuffer *out);
/* A uniform buffer holding a copy of data (size bytes, multiple of 4). */
wgnn_status wgnn__make_uniform(wgnn_context *ctx, const void *data, size_t size, WGPUBuffer *out);
/* buf if non-NULL, else one of the context's 16-byte dummies (never touched
 * by shaders whose flag says the binding is absent). A dispatch may not use
 * one buffer both read-only and writable, hence a separate writable dummy. */
WGPUBuffer wgnn__make_optional_binding(wgnn_context *ctx, WGPUBuffer buf, bool writable);

/* Pipelines: built on first use, cached by (kernel, prelude, constants).
 * prelude is WGSL prepended to the kernel's source (const declarations that
 * must be compile-time, e.g. register-array sizes); may be NULL. */
typedef struct wgnn__const {
    const char *name;
    double value;
} wgnn__const;
wgnn_status wgnn__make_compute_pipeline(wgnn_context *ctx, const char *kernel, const char *prelude,
                                        const wgnn__const *consts, size_t n_consts,
                                        wgnn__pipe_entry **out);
/* Compiles WGSL into a pipeline without caching (tests, feature probes). */
wgnn_status wgnn__compile(wgnn_context *ctx, const char *label, const char *wgsl, const wgnn__const *consts,
                          size_t n_consts, WGPUComputePipeline *out);
/* The embedded source of shaders/<name>.wgsl, or NULL. Generated file. */
const char *wgnn__shader_source(const char *name);

/* Recording. A binding is a whole buffer or a range of one. */
typedef struct wgnn__binding {
    WGPUBuffer buf;
    uint64_t offset;
    uint64_t size; /* 0: whole buffer from offset */
} wgnn__binding;
/* Opens a compute pass on the pending encoder (timestamped while timing). */
wgnn_status wgnn__pass_begin(wgnn_context *ctx, WGPUComputePassEncoder *pass);
void wgnn__pass_end(wgnn_context *ctx, WGPUComputePassEncoder pass);
/* Binds group 0 and dispatches (gx, gy, gz) workgroups. */
wgnn_status wgnn__dispatch(wgnn_context *ctx, WGPUComputePassEncoder pass, const wgnn__pipe_entry *p,
                           const wgnn__binding *b, size_t n, uint32_t gx, uint32_t gy, uint32_t gz);
/* Submits pending work (error-scoped); wait != 0 also waits for completion. */
wgnn_status wgnn__flush(wgnn_context *ctx, bool wait);

/* Submits pending work plus a copy of size bytes of src, waits, and copies
 * min(size, dst_bytes) bytes into dst. */
wgnn_status wgnn__read_buffer(wgnn_context *ctx, WGPUBuffer src, uint64_t size, void *dst, size_t dst_bytes);

/* Dispatch math (dispatch.c). */
uint32_t wgnn__clamp_workgroup_size(const wgnn_context *ctx, uint32_t want);
wgnn_status wgnn__compute_1d_workgroup_count(wgnn_context *ctx, uint64_t n_items, uint32_t wg_size,
                                             const char *what, uint32_t *gx);
/* n_groups workgroups as a near-square x*y grid when n_groups passes
 * max_per_dim; x*y >= n_groups, x*y - n_groups < x (shaders rebuild the flat
 * index as wid.y * num_workgroups.x + wid.x and skip past n_groups). */
wgnn_status wgnn__compute_2d_workgroup_count(wgnn_context *ctx, uint64_t n_groups, uint32_t max_per_dim,
                                             const char *what, uint32_t *gx, uint32_t *gy);
/* Pure form of the above, for tests: returns false when it cannot fit. */
bool wgnn__grid_2d(uint64_t n_groups, uint32_t max_per_dim, uint32_t *gx, uint32_t *gy);
wgnn_status wgnn__check_vec4_aligned(wgnn_context *ctx, const char *op, const char *what, int64_t n);

/* Sizes with overflow checks: false on overflow. */
bool wgnn__mul_u64(uint64_t a, uint64_t b, uint64_t *out);

#endif /* WGNN_INTERNAL_H */
