/* internal.h - shared by the library's .c files; not installed.
 *
 * Layers (each uses only those below it):
 *   src/ops/     op table rows: check (shapes), plan (dispatches), ref (CPU)
 *   src/gpu/     context, errors and waits, buffers and the uniform arena,
 *                pipeline cache, encoder (plan -> commands -> submit), tensors
 */
#ifndef WGNN_INTERNAL_H
#define WGNN_INTERNAL_H

#include "wgnn.h"

#include <webgpu/webgpu.h>

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define WGNN__ERR_LEN 1024

/* ---- callback records ------------------------------------------------------
 * State a WebGPU callback writes lives on the heap, never on a caller's
 * stack: a wait that times out returns while the callback is still pending,
 * and Dawn fires it later (at the latest while the context is destroyed). A
 * timed-out record is parked on the context and freed only after the
 * instance is gone. */
typedef struct wgnn__cb {
    struct wgnn__cb *next;   /* parked list */
    int fired;
    int status;              /* the callback's status enum, as int */
    int type;                /* error type (error scopes) */
    void *handle;            /* adapter or device returned by a request */
    WGPUBuffer hold;         /* released when the record is freed (a staging buffer) */
    char msg[WGNN__ERR_LEN];
} wgnn__cb;

/* ---- pipelines ------------------------------------------------------------ */

typedef struct wgnn__pipe {
    struct wgnn__pipe *next;  /* hash chain; entries are never moved or freed before the context */
    uint64_t hash;
    char *key;
    WGPUComputePipeline pipe;
    WGPUBindGroupLayout layout;
} wgnn__pipe;

#define WGNN__PIPE_BUCKETS 256

/* Tuning knobs, read from the environment once, at context creation. */
#define WGNN__SCRATCH_CACHE 4

/* WGNN_CONV_ROUTE's values: conv2d on conv2d.wgsl for every groups
 * (DIRECT), on the shared GEMM for every groups (GEMM), or groups 1's
 * columns written by im2col (IM2COL) or gathered by the GEMM (IMPLICIT) */
typedef enum wgnn__conv_route {
    WGNN__CONV_AUTO = 0,
    WGNN__CONV_DIRECT = 1,
    WGNN__CONV_GEMM = 2,
    WGNN__CONV_IM2COL = 3,
    WGNN__CONV_IMPLICIT = 4
} wgnn__conv_route;

typedef struct wgnn__knobs {
    uint32_t fused_tile[4];   /* WGNN_FUSED_TILE=TYxTXxKExRG (KE 1, 2, 4; RG 1, 2); [0] == 0: unset */
    int fused_sacc;           /* WGNN_FUSED_FLAGS: -1 unset, else 0/1 ('s') */
    int fused_sg;             /* WGNN_FUSED_FLAGS: -1 unset, else 0/1 ('g') */
    uint32_t fused_split;     /* WGNN_FUSED_SPLIT=N; 0 unset */
    int fused_lean;           /* WGNN_FUSED_FLAGS: -1 unset, else 0/1 ('l': the LEAN kernel variant) */
    int fused_qg;             /* WGNN_FUSED_FLAGS: -1 unset, else 0/1 ('q': LEAN reads Q from global memory) */
    int fused_swz;            /* WGNN_FUSED_FLAGS: -1 unset, else 0/1 ('w': unpadded, swizzled workgroup memory) */
    uint32_t fused_cunroll;   /* WGNN_FUSED_FLAGS 'cN': LEAN's P.V unroll (1..64, power of 2); 0 default */
    uint32_t fused_unroll;    /* WGNN_FUSED_FLAGS 'uN': LEAN's unroll (1..32, power of 2); 0 default */
    uint32_t fused_vh[4];     /* WGNN_FUSED_VH=TY,RG,JU,CU: sdpa_fused_vh wherever it applies; [0] == 0: unset */
    bool fused_vh_off;        /* WGNN_FUSED_VH=0: never */
    uint32_t gemm_tile[5];    /* WGNN_GEMM_TILE=WXxWYxTMxTNxBK; [0] == 0: unset */
    int conv_route;           /* WGNN_CONV_ROUTE: a wgnn__conv_route (src/ops/conv.c's conv2d_plan) */
    uint32_t conv_dw[3];      /* WGNN_CONV_DW=TW,TYT,RY: conv2d_dw.wgsl's tile before it shrinks to fit; 0 auto */
    int gemm_bias_init;       /* WGNN_GEMM_BIAS_INIT=0: no bias in the accumulators (ops/gemm.c); else -1, on */
    int gemm_split;           /* WGNN_GEMM_SPLIT=S: -1 auto, 1 never split K, S > 1 that many slices */
    uint32_t compute_units;   /* the GPU's multiprocessors (SMs, CUs), which WebGPU does not report: from
                                 WGNN_COMPUTE_UNITS=N, else a table of measured GPUs (gpu/context.c); 0
                                 unknown, and then the GEMM plans no waves (ops/gemm.c) */
    int gemm_db;              /* WGNN_GEMM_DB=0/1: gemm.wgsl stages K tiles in one buffer (two barriers a tile) or two
                                 (one) on every tile; -1 default: two on the 128 x 128 tile (ops/gemm.c) */
    int gemm_waves;           /* WGNN_GEMM_WAVES=0: no wave plans (ops/gemm.c); -1 default */
    int gemm_kw;              /* WGNN_GEMM_KW=N: at most N K groups inside a small-M tile's workgroup (gemm.wgsl's
                                 KW; 1: none, K slices only in batch entries and a reduce); -1 default (4) */
    uint32_t gemv_wg;         /* WGNN_GEMV_WG=T: threads of a GEMV workgroup (32..1024, power of 2); 0 auto */
    uint32_t gemv_lanes;      /* WGNN_GEMV_LANES=L: threads a GEMV column (1..1024, power of 2); 0 auto */
    uint32_t gemv_unroll;     /* WGNN_GEMV_UNROLL=U: loads a lane keeps in flight in the GEMVs (1..16); 0 auto */
    uint32_t gemvn_quads;     /* WGNN_GEMVN_QUADS=Q: column quads a gemvn.wgsl workgroup (1..64, power of 2); 0 auto */
    uint32_t q8_nc;           /* WGNN_Q8_NC=C: columns a thread of linear_q8's GEMV (1, 2, 4, 8); 0 auto */
    uint32_t decode_wgs;      /* WGNN_DECODE_WGS=N: sdpa_decode's key splits aim at N workgroups (default 256) */
    uint32_t decode_wg;       /* WGNN_DECODE_WG=T: sdpa_decode's threads (>= 4 subgroups, power of 2); 0 auto */
    uint32_t decode_depth;    /* WGNN_DECODE_DEPTH=N: decode steps in flight (1 .. WGNN__SLOTS); 0 default */
    uint32_t decode_u;        /* WGNN_DECODE_U=U: keys a subgroup of sdpa_decode takes at a time (1..8); 0 auto (4) */
    int sdpa_decode;          /* WGNN_SDPA_DECODE=0: sdpa_kvcache never takes the decode kernel (default 1: where it fits) */
    uint32_t graph_chunk;     /* WGNN_GRAPH_CHUNK=N: a graph run submits every N dispatches (0: one submit); default 40 */
    bool graph_chunk_grow;    /* WGNN_GRAPH_CHUNK=gN: the first piece N dispatches, each next one twice the last */
    bool graph_chunk_set;     /* WGNN_GRAPH_CHUNK given: it applies to async runs (decode steps) too */
    bool no_graph_prerecord;  /* WGNN_GRAPH_PRERECORD=0: a graph run does not record the next one ahead */
    uint32_t wait_spin_us;    /* WGNN_WAIT_SPIN=N: wgnn_context_options.poll_us when that is 0 */
    bool no_wait_hybrid;      /* WGNN_WAIT_HYBRID=0: a plain graph run's wait blocks all the way (graph_run.c) */
    bool no_staged_upload;    /* WGNN_STAGED_UPLOAD=0: every upload through wgpuQueueWriteBuffer */
    bool no_sdpa_packed;      /* WGNN_SDPA_PACKED=0: encoders split heads, run sdpa, merge heads */
    int sdpa_packed_bias;     /* WGNN_SDPA_PACKED=nobias (0): the encoders' q|k|v bias in the product; =bias (1): in
                                 sdpa_qkvpacked always; -1 default: there where the product would pass over its
                                 output for the bias alone (src/models/vit.c) */
    uint32_t ln_lanes;        /* WGNN_LN_LANES=L: threads a row in gemm_reduce_ln (a power of 2, or a multiple of the
                                 subgroup size); 0 auto (ops/gemm.c) */
    bool no_ln_fused;         /* WGNN_LN_FUSED=0: encoder graphs run every LayerNorm as a node of its own instead of
                                 as the second output of the residual product before it (src/models/vit.c) */
} wgnn__knobs;

struct wgnn_context {
    WGPUInstance instance;
    WGPUAdapter adapter;
    WGPUDevice device;
    WGPUQueue queue;
    wgnn_adapter_info info;
    WGPULimits limits;
    bool has_f16, has_subgroups, has_timestamps;
    uint64_t timeout_ns;
    uint64_t poll_ns; /* a wait polls this long before it blocks (wgnn_context_options.poll_us) */
    uint64_t spin_from_ns; /* one-shot, for the next wait when poll_ns is 0: block until this CLOCK_MONOTONIC time
                              (the GPU's expected end less a margin), then poll a while (gpu/error.c); 0 none */
    wgnn__knobs knobs;

    /* One thread at a time (wgnn.h): the thread inside a public call (its
     * tag's address, 0 when none) and how deep; calls that make other
     * public calls (a model's encode, an LM's generate) hold it throughout,
     * their inner calls entering again on the same thread (gpu/error.c). */
    _Atomic uintptr_t owner;
    int depth;
    wgnn_status health;            /* sticky: device lost or uncaptured error */
    char health_msg[WGNN__ERR_LEN];
    char err[WGNN__ERR_LEN];
    wgnn__cb *parked;              /* callback records of waits that timed out */

    wgnn__pipe *pipes[WGNN__PIPE_BUCKETS];

    WGPUCommandEncoder enc;        /* pending work, submitted by wgnn__flush */
    uint32_t pending_dispatches;   /* recorded into enc */
    uint64_t pending_scratch;      /* bytes of scratch buffers enc references */
    uint32_t unwaited_flushes;     /* submits since the last wait */
    WGPUBuffer data_err;           /* 16 bytes kernels set when the data is invalid (see below) */
    WGPUBuffer dummy;              /* 16-byte buffers for absent optional bindings: */
    WGPUBuffer dummy_rw;           /* read-only and read-write ones may not share one */
    WGPUBuffer up;                 /* staging for large uploads (gpu/tensor.c), NULL until one */
    uint64_t up_size;
    bool up_mapped;                /* mapped for writing: the last copy out of it is done */

    /* Uniform arena: every dispatch's params in one buffer, written with one
     * queue write just before the submit that reads them. */
    WGPUBuffer uni;
    unsigned char *uni_host;
    uint32_t uni_cap, uni_used, uni_align;

    /* Scratch buffers of finished recordings, kept for the next plan that
     * needs one of about their size (queue order makes reuse safe). */
    struct {
        WGPUBuffer buf;
        uint64_t size;
    } scratch_cache[WGNN__SCRATCH_CACHE];

    bool timing;                   /* timestamp each pass (wgnn_timing_begin) */
    WGPUQuerySet qset;
    uint32_t q_used, q_cap;

    /* WGNN_DUMP_SHADERS=DIR (gpu/shader_dump.c); dump_dir[0] == 0: off */
    char dump_dir[512];
    unsigned dump_seq;             /* pipelines named so far */
    const char *dump_label;        /* the one being built */
};

/* A CPU adapter (lavapipe): routes, tiles and the default GPU wait differ there. */
static inline bool wgnn__cpu_adapter(const wgnn_context *ctx) { return strcmp(ctx->info.type, "CPU") == 0; }

/* Powers of two for tile and lane counts, capped at 2^30: the least >= x
 * (1 for x <= 1) and the greatest <= x (1 for x <= 1). */
static inline uint32_t wgnn__pow2_ceil(uint64_t x) {
    uint32_t p = 1;
    while (p < x && p < (1u << 30)) p <<= 1;
    return p;
}
static inline uint32_t wgnn__pow2_floor(uint64_t x) {
    uint32_t p = 1;
    while ((uint64_t)p * 2 <= x && p < (1u << 30)) p <<= 1;
    return p;
}

struct wgnn_tensor {
    wgnn_context *ctx;
    WGPUBuffer buf;
    uint64_t buf_size;             /* nbytes rounded up to 4 */
    wgnn_dtype dtype;
    int rank;
    int64_t dims[WGNN_MAX_RANK];
    uint64_t numel, nbytes;
    /* the graph that destroys it (one of its values' tensors, or a
     * constant it took); NULL: the caller. wgnn_tensor_destroy leaves a
     * graph's tensor alone, wgnn__tensor_free frees it. */
    const struct wgnn_graph *owner;
};
/* Frees t whoever owns it (wgnn_graph_destroy). */
void wgnn__tensor_free(wgnn_tensor *t);

/* ---- errors (gpu/error.c) ------------------------------------------------ */

/* Sets ctx->err and returns s. ctx may be NULL. */
wgnn_status wgnn__err(wgnn_context *ctx, wgnn_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* WGNN_OK, or the sticky device status (with ctx->err set from it). */
wgnn_status wgnn__check_health(wgnn_context *ctx);
/* Copies a WGPUStringView into dst (always terminated). */
void wgnn__strview(char *dst, size_t cap, WGPUStringView v);
WGPUStringView wgnn__sv(const char *s);

/* Public entry points claim the context for the call; a second thread that
 * calls in meanwhile gets WGNN_ERR_BUSY (and ctx->err is left alone). */
wgnn_status wgnn__enter(wgnn_context *ctx);
wgnn_status wgnn__leave(wgnn_context *ctx, wgnn_status s);

/* Callback records. wgnn__cb_wait waits for f; on WGNN_OK the caller reads
 * and frees cb, on failure cb is parked (the caller must not touch it).
 * parked: &ctx->parked, or a list the caller frees after the instance. */
wgnn__cb *wgnn__cb_new(void);
void wgnn__cb_free(wgnn__cb *cb);
void wgnn__cb_free_list(wgnn__cb **list);
wgnn_status wgnn__cb_wait(wgnn_context *ctx, WGPUFuture f, wgnn__cb *cb, const char *what);

/* Error scopes: push validation + out-of-memory + internal; pop them, wait,
 * and turn the first error into a status whose message starts with what. */
void wgnn__scope_push(wgnn_context *ctx);
wgnn_status wgnn__scope_pop(wgnn_context *ctx, const char *what);

/* Finishes enc, submits its command buffer and releases both (a failure
 * shows in the caller's error scope). */
void wgnn__finish_submit(wgnn_context *ctx, WGPUCommandEncoder enc);

/* ---- buffers (gpu/buffer.c) ---------------------------------------------- */

/* size is rounded up to 4 bytes. */
wgnn_status wgnn__buffer_create(wgnn_context *ctx, uint64_t size, WGPUBufferUsage usage, const char *what,
                                WGPUBuffer *out);
/* buf if non-NULL, else one of the context's 16-byte dummies (never touched
 * by shaders whose flag says the binding is absent). A dispatch may not use
 * one buffer both read-only and writable, hence a separate writable dummy. */
WGPUBuffer wgnn__make_optional_binding(wgnn_context *ctx, WGPUBuffer buf, bool writable);
/* Makes room for n params blocks in the uniform arena, flushing first when
 * the blocks recorded so far leave too little. */
wgnn_status wgnn__uniform_reserve(wgnn_context *ctx, uint32_t n);
/* Appends a params block; *offset is where it sits in ctx->uni. */
uint32_t wgnn__uniform_push(wgnn_context *ctx, const void *data, uint32_t size);

/* Errors in the data a kernel reads (an embedding index out of range) are
 * found on the GPU, after the op returned. Such kernels bind this 16-byte
 * buffer read-write and store, the first time, four words: a code
 * (WGNN__DATA_ERR_*), the bad value (as i32 bits), its position and a
 * bound; wgnn_tensor_download and wgnn_context_sync read it back with their
 * wait, report it as WGNN_ERR_INVALID_ARGUMENT and clear it. */
#define WGNN__DATA_ERR_INDEX 1u      /* gather (embedding): indices[position] = value not in [0, bound) */
#define WGNN__DATA_ERR_INDEX_COPY 2u /* index_copy: index[position] = value not in [0, bound) */
#define WGNN__DATA_ERR_SEQLEN 3u     /* attention: cache_seqlens[position] = value not in [0, bound - 1] */
#define WGNN__DATA_ERR_SEQLEN_NEW 4u /* cache_seqlens[position] = value < bound new rows (or past the cache) */
#define WGNN__DATA_ERR_SAMPLE 5u     /* sample: row position has no token of nonzero mass */
#define WGNN__DATA_ERR_CACHE_POS 6u  /* qkv_rope_cache: positions[position] = value not in [0, bound) */
WGPUBuffer wgnn__data_error_buffer(wgnn_context *ctx);

/* ---- pipelines (gpu/pipeline.c) ------------------------------------------ */

/* Override constants of a pipeline. */
typedef struct wgnn__const {
    const char *name;
    double value;
} wgnn__const;
/* Built on first use, cached by (kernel, prelude, constants). The prelude is
 * WGSL prepended to the kernel (const declarations that must be
 * compile-time, aliases, a Params struct); may be NULL. A kernel's lines
 * `#include "common/NAME"` are replaced by shaders/common/NAME.wgsl.
 * The entry returned stays valid, at the same address, until the context is
 * destroyed. */
wgnn_status wgnn__pipeline(wgnn_context *ctx, const char *kernel, const char *prelude, const wgnn__const *consts,
                           size_t n_consts, const wgnn__pipe **out);
/* WGNN_DUMP_SHADERS=DIR (gpu/shader_dump.c): init reads the variable and
 * makes DIR (true: ask Dawn for its dump_shaders toggle); attach sets the
 * device's logging callback that writes the dumps; begin names the pipeline
 * about to be built and end closes it (wgnn__compile calls both: what Dawn
 * dumps outside them is its own). No-ops when off. */
bool wgnn__dump_init(wgnn_context *ctx);
void wgnn__dump_attach(wgnn_context *ctx);
void wgnn__dump_begin(wgnn_context *ctx, const char *label, const wgnn__const *consts, size_t n_consts);
void wgnn__dump_end(wgnn_context *ctx);
/* Compiles WGSL into a pipeline without caching (tests, feature probes). */
wgnn_status wgnn__compile(wgnn_context *ctx, const char *label, const char *wgsl, const wgnn__const *consts,
                          size_t n_consts, WGPUComputePipeline *out);
/* The embedded source of shaders/<name>.wgsl ("common/x" for
 * shaders/common/x.wgsl), or NULL. Generated file. */
const char *wgnn__shader_source(const char *name);
/* Number of cached pipelines (tests). */
size_t wgnn__pipeline_count(const wgnn_context *ctx);

/* Params structs written once. A kernel's fields as an X-macro list
 *     #define GEMM_PARAMS(X, S) X(S, u32x4, shape) X(S, u32, m) X(S, f32, alpha)
 *     WGNN__PARAMS_STRUCT(gemm_params, GEMM_PARAMS);
 *     WGNN__PARAMS_CHECK(gemm_params, GEMM_PARAMS)
 * give the C struct and, through WGNN__PARAMS_WGSL(GEMM_PARAMS), the WGSL
 * `struct Params` text the host passes in the prelude. Types: u32, i32, f32
 * (4 bytes) and u32x4, i32x4, f32x4 (vec4, 16-byte aligned in WGSL);
 * WGNN__PARAMS_CHECK asserts at compile time that every field sits at the
 * same offset in both layouts (vec4 fields go first). */
typedef uint32_t wgnn__u32;
typedef int32_t wgnn__i32;
typedef float wgnn__f32;
typedef uint32_t wgnn__u32x4[4];
typedef int32_t wgnn__i32x4[4];
typedef float wgnn__f32x4[4];
#define WGNN__WGSL_u32 "u32"
#define WGNN__WGSL_i32 "i32"
#define WGNN__WGSL_f32 "f32"
#define WGNN__WGSL_u32x4 "vec4<u32>"
#define WGNN__WGSL_i32x4 "vec4<i32>"
#define WGNN__WGSL_f32x4 "vec4<f32>"
#define WGNN__PF_C(S, t, n) wgnn__##t n;
#define WGNN__PF_W(S, t, n) "    " #n ": " WGNN__WGSL_##t ",\n"
#define WGNN__PF_A(S, t, n) \
    _Static_assert(offsetof(S, n) % (sizeof(wgnn__##t) == 16 ? 16 : 4) == 0, #S "." #n ": put vec4 fields first");
#define WGNN__PARAMS_STRUCT(name, LIST) typedef struct name { LIST(WGNN__PF_C, name) } name
#define WGNN__PARAMS_WGSL(LIST) "struct Params {\n" LIST(WGNN__PF_W, _) "}\n"
#define WGNN__PARAMS_CHECK(name, LIST) \
    LIST(WGNN__PF_A, name) _Static_assert(sizeof(name) <= 256, #name " fits a uniform slot");

/* ---- encoding (gpu/encoder.c) --------------------------------------------- */

#define WGNN__MAX_BIND 12
#define WGNN__PARAMS_MAX 256
#define WGNN__MAX_SCRATCH 8

/* A binding: a whole buffer or a range of one; or a scratch buffer of the
 * plan (scratch = index + 1, buf NULL). */
typedef struct wgnn__binding {
    WGPUBuffer buf;
    uint64_t offset;
    uint64_t size; /* 0: the rest of the buffer from offset */
    uint32_t scratch;
} wgnn__binding;

/* One dispatch, described: binding 0 is the params block when params_size
 * > 0, and b[i] then goes to binding i + 1 (else to binding i). */
typedef struct wgnn__dispatch {
    const wgnn__pipe *pipe;
    uint32_t params_size;
    uint32_t n_b;
    uint32_t grid[3];
    wgnn__binding b[WGNN__MAX_BIND];
    _Alignas(16) unsigned char params[WGNN__PARAMS_MAX];
} wgnn__dispatch;

/* What an op's plan yields: dispatches in order, and the scratch buffers
 * (bytes each) they use. Eager ops encode a plan at once; a graph builds its
 * bind groups from plans once. */
typedef struct wgnn__plan {
    wgnn__dispatch *d;
    uint32_t n, cap;
    uint64_t scratch[WGNN__MAX_SCRATCH];
    uint32_t n_scratch;
    const char *label;
} wgnn__plan;

/* Appends a dispatch; fills pipe, params (copied), grid; bindings follow
 * with wgnn__plan_bind. NULL only when out of host memory (ctx->err set). */
wgnn__dispatch *wgnn__plan_add(wgnn_context *ctx, wgnn__plan *p, const wgnn__pipe *pipe, const void *params,
                               uint32_t params_size, uint32_t gx, uint32_t gy, uint32_t gz);
void wgnn__plan_bind(wgnn__dispatch *d, WGPUBuffer buf, uint64_t offset, uint64_t size);
void wgnn__plan_bind_scratch(wgnn__dispatch *d, uint32_t scratch_index, uint64_t offset, uint64_t size);
/* Binds size bytes (0: the rest) from offset into b (a buffer or a plan
 * scratch, b's own offset added). */
void wgnn__plan_bind_range(wgnn__dispatch *d, const wgnn__binding *b, uint64_t offset, uint64_t size);
/* Declares a scratch buffer; returns its index, or -1 past WGNN__MAX_SCRATCH. */
int wgnn__plan_scratch(wgnn__plan *p, uint64_t bytes);
void wgnn__plan_free(wgnn__plan *p);
uint64_t wgnn__plan_scratch_bytes(const wgnn__plan *p);
/* Records the plan into the pending command buffer as one compute pass
 * (timestamped while timing); scratch buffers are made for it and released
 * after recording. Flushes when the recorded work passes a bound. */
wgnn_status wgnn__plan_encode(wgnn_context *ctx, const wgnn__plan *p);

/* The bind group of one dispatch: binding 0 the params block at uni_offset
 * of uni (when params_size > 0), then the dispatch's bindings. Scratch
 * bindings resolve to scratch[index - 1]; one bound whole gets the size
 * the plan asked (scratch_size[index - 1], rounded up to 4), not the
 * buffer's, which may be larger. A whole-buffer binding of another buffer
 * gets whole_size(user, buffer, offset) bytes when that callback is given
 * and returns non-zero (the graph binds a value, not its pooled buffer).
 * NULL when Dawn refuses it (the error goes to the open error scope). */
WGPUBindGroup wgnn__bind_group(wgnn_context *ctx, const wgnn__dispatch *d, WGPUBuffer uni, uint64_t uni_offset,
                               const WGPUBuffer *scratch, const uint64_t *scratch_size,
                               uint64_t (*whole_size)(void *user, WGPUBuffer buf, uint64_t offset), void *user);

/* Submits pending work; wait != 0 also waits for completion. */
wgnn_status wgnn__flush(wgnn_context *ctx, bool wait);
/* Submits pending work plus a copy of size bytes of src, waits, and copies
 * min(size, dst_bytes) bytes into dst. */
/* Writes bytes of data at buf's start through the queue (a tail of fewer
 * than 4 bytes padded with zeros), after submitting any recorded work so
 * that it still reads the old contents; errors caught and named by what. */
wgnn_status wgnn__buffer_write(wgnn_context *ctx, WGPUBuffer buf, const void *data, size_t bytes, const char *what);
wgnn_status wgnn__read_buffer(wgnn_context *ctx, WGPUBuffer src, uint64_t size, void *dst, size_t dst_bytes);
/* Maps buf's [0, err_off + 16) for reading, waits, copies its first n bytes
 * to dst (may be NULL), turns the data-error words at err_off into the
 * call's error, unmaps. On a failed wait the buffer may still map later:
 * reuse it no more (a parked record keeps it alive). */
wgnn_status wgnn__map_read(wgnn_context *ctx, WGPUBuffer buf, uint64_t err_off, void *dst, size_t n, const char *what);
/* wgnn__map_read with n_dst pieces: len[i] bytes at off[i] to dst[i] (NULL:
 * skipped). */
wgnn_status wgnn__map_read_n(wgnn_context *ctx, WGPUBuffer buf, uint64_t err_off, int n_dst, void *const *dst,
                             const uint64_t *off, const size_t *len, const char *what);
/* A map callback filling a wgnn__cb (status, message). */
void wgnn__on_map(WGPUMapAsyncStatus status, WGPUStringView message, void *u1, void *u2);
/* Turns set data-error words (read back from the GPU) into the call's
 * error, and clears them. */
wgnn_status wgnn__data_error(wgnn_context *ctx, const uint32_t w[4]);

/* Async graph runs (the decoders' pipelined steps, the encoders'
 * wgnn_model_encode_submit): wgnn__graph_submit records and submits a run
 * of g without waiting, ending with a copy of value v (an input or output)
 * into read-back slot `slot` (0 .. WGNN__SLOTS - 1); wgnn__graph_fetch
 * waits for that run and copies v's bytes out (data errors of the run come
 * back with it). Submits may go in before the fetches of earlier ones, each
 * into a slot not yet fetched (up to WGNN__SLOTS runs in flight). The _n
 * forms take up to WGNN__STAGE_MAX values (fetch: data[i] gets value i's
 * bytes[i] bytes, NULL skips it). All take the context's thread
 * guard, as the public calls do. */
#define WGNN__STAGE_MAX 4
#define WGNN__SLOTS 3
wgnn_status wgnn__graph_submit(wgnn_graph *g, wgnn_value v, int slot);
wgnn_status wgnn__graph_fetch(wgnn_graph *g, int slot, void *data, size_t bytes);
wgnn_status wgnn__graph_submit_n(wgnn_graph *g, const wgnn_value *v, int n, int slot);
wgnn_status wgnn__graph_fetch_n(wgnn_graph *g, int slot, int n, void *const *data, const size_t *bytes);

/* ---- dispatch math (gpu/dispatch.c) --------------------------------------- */

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

/* Greatest common divisor and least common multiple (binding-offset
 * alignment steps). */
uint64_t wgnn__gcd_u64(uint64_t a, uint64_t b);
uint64_t wgnn__lcm_u64(uint64_t a, uint64_t b);

/* Sizes with overflow checks: false on overflow. */
bool wgnn__mul_u64(uint64_t a, uint64_t b, uint64_t *out);

#endif /* WGNN_INTERNAL_H */
