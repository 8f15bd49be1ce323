/*
 * wgnn.h - neural-network inference on WebGPU (WGSL compute shaders, Dawn).
 *
 * The only public header. A worked example:
 *
 *     wgnn_context *ctx = NULL;
 *     if (wgnn_context_create(NULL, &ctx) != WGNN_OK) {
 *         fprintf(stderr, "%s\n", wgnn_context_error(ctx));  // ctx may be NULL: prints "out of memory"
 *         wgnn_context_destroy(ctx);
 *         return 1;
 *     }
 *     int64_t dims[4] = {1, 12, 197, 64};                     // [B, H, S, D]
 *     wgnn_tensor *q, *k, *v, *o;
 *     wgnn_tensor_create(ctx, WGNN_F32, 4, dims, &q);        // ... same for k, v, o
 *     wgnn_tensor_upload(ctx, q, host_q, sizeof host_q);
 *     wgnn_sdpa(ctx, q, k, v, NULL, o);                       // recorded, not yet submitted
 *     wgnn_tensor_download(ctx, o, host_o, sizeof host_o);   // submits, waits, copies back
 *     wgnn_tensor_destroy(q);  ...  wgnn_context_destroy(ctx);
 *
 * Conventions
 *   - Every fallible call returns a wgnn_status. WGNN_OK is 0. On failure the
 *     context keeps a message (wgnn_context_error) a user can act on. The
 *     library never prints, aborts or exits.
 *   - Shapes are in elements, row-major (C order), outermost first. Ranks are
 *     0..WGNN_MAX_RANK (0: a scalar). Sizes are computed in 64 bits with overflow checks.
 *   - Ops are recorded into the context's pending command buffer; one submit
 *     carries every op recorded since the last sync. wgnn_tensor_download and
 *     wgnn_context_sync submit and wait; waits time out (options.timeout_ms).
 *   - destroy(NULL) is a no-op everywhere.
 *   - Threads: a context and its tensors belong to one thread at a time.
 *     Use one context per thread, or serialise calls on a shared context
 *     yourself. A call made while another thread is inside a call on the
 *     same context fails with WGNN_ERR_BUSY and changes nothing (the context's
 *     message is not updated); it never returns a wrong result. A call made of
 *     others (a model's load or encode, an LM's forward or generate, its
 *     on_token included) holds the context until it returns. Tensors of
 *     different contexts cannot be mixed. The functions that need no context
 *     (.npy I/O, wgnn_op_shapes, wgnn_op_ref, the references) are
 *     thread-safe.
 *   - Enum values are explicit and only ever grow at the end.
 */
#ifndef WGNN_H
#define WGNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WGNN_VERSION_MAJOR 0
#define WGNN_VERSION_MINOR 1
#define WGNN_VERSION_PATCH 0
#define WGNN_MAX_RANK 8

typedef enum wgnn_status {
    WGNN_OK = 0,
    WGNN_ERR_INVALID_ARGUMENT = 1, /* bad shape, rank, dtype, NULL pointer, ... */
    WGNN_ERR_UNSUPPORTED = 2,      /* valid request this adapter or build cannot do */
    WGNN_ERR_OUT_OF_MEMORY = 3,    /* host or GPU allocation failed */
    WGNN_ERR_NO_ADAPTER = 4,       /* no usable WebGPU adapter (never Dawn's Null backend) */
    WGNN_ERR_GPU = 5,              /* GPU validation or internal error, captured by error scope */
    WGNN_ERR_DEVICE_LOST = 6,      /* the device was lost; the context is unusable */
    WGNN_ERR_TIMEOUT = 7,          /* a wait on the GPU passed options.timeout_ms */
    WGNN_ERR_IO = 8,               /* file could not be opened, read or written */
    WGNN_ERR_FORMAT = 9,           /* malformed or unsupported file contents */
    WGNN_ERR_LIMIT = 10,           /* request passes a device limit (named in the message) */
    WGNN_ERR_BUSY = 11             /* another thread is inside a call on this context */
} wgnn_status;

/* Short name of a status code ("invalid argument", ...); never NULL. */
const char *wgnn_status_str(wgnn_status s);

typedef enum wgnn_dtype {
    WGNN_F32 = 0,
    WGNN_I32 = 1,
    WGNN_F16 = 2
} wgnn_dtype;

/* Bytes per element of a dtype; 0 for an unknown value. */
size_t wgnn_dtype_size(wgnn_dtype t);
const char *wgnn_dtype_name(wgnn_dtype t);

/* ------------------------------------------------------------------------ */
/* Context: instance, adapter, device, queue, pipeline cache, error state.   */

typedef struct wgnn_context wgnn_context;

typedef struct wgnn_context_options {
    /* Adapter choice: an index into the list wgnn_adapters_list reports, or a
     * case-insensitive substring of the adapter's name. NULL: the environment
     * variable WGNN_ADAPTER if set, else the high-performance adapter. */
    const char *adapter;
    /* 1: prefer the low-power adapter when no adapter is named. */
    int low_power;
    /* Longest wait on the GPU (adapter and device requests, submits, maps).
     * 0 means the default: 60000 ms, or 600000 ms on a CPU adapter (a
     * software Vulkan such as lavapipe compiles a kernel when it first runs
     * it, tens of seconds for the large ones). */
    uint32_t timeout_ms;
    /* 1: do not request shader-f16 / subgroups even when offered (testing). */
    int disable_optional_features;
    /* 1: keep Dawn's robustness transform (every shader array access
     * clamped). wgnn's shaders guard their own indices, so by default it is
     * turned off for speed; keep it when running shaders you do not trust. */
    int keep_robustness;
    /* A wait on the GPU (a run, a read-back) first polls for up to this many
     * microseconds, then blocks: a short run returns sooner (ViT-B/16 at
     * batch 1 on an H200: 2.16-2.33 -> 2.08-2.24 ms a synchronous run with
     * 5000; docs/PERFORMANCE.md), at the price of a CPU core kept busy while
     * it polls. 0: the environment variable WGNN_WAIT_SPIN if set, else no
     * polling, except that a plain wgnn_graph_run's wait blocks only until
     * shortly before the run is expected to end (0.25 ms + 1/16 of the
     * last plain run's time from its submit), then polls for up to 1 ms
     * (WGNN_WAIT_HYBRID=0, or a CPU adapter: it blocks all the way). */
    uint32_t poll_us;
} wgnn_context_options;

/* Creates a context. *out is set whenever memory for it could be allocated,
 * also on failure, so that wgnn_context_error(*out) can say why; destroy it
 * either way. opts may be NULL for defaults. */
wgnn_status wgnn_context_create(const wgnn_context_options *opts, wgnn_context **out);
void wgnn_context_destroy(wgnn_context *ctx);

/* Message of the last failure on this context ("" if none). For ctx == NULL:
 * "out of memory" (the only way create leaves *out NULL). */
const char *wgnn_context_error(const wgnn_context *ctx);

/* Submits all recorded work and waits for the GPU to finish it. Returns the
 * first GPU error that work raised, if any. */
wgnn_status wgnn_context_sync(wgnn_context *ctx);

/* Sticky device state: WGNN_OK, or WGNN_ERR_DEVICE_LOST / WGNN_ERR_GPU for an
 * error no call captured (the message says which). Once lost, every call on
 * the context fails with WGNN_ERR_DEVICE_LOST. */
wgnn_status wgnn_context_health(const wgnn_context *ctx);

typedef struct wgnn_adapter_info {
    char name[256];         /* device name, e.g. "NVIDIA H200" or "llvmpipe (...)" */
    char vendor[128];
    char description[256];  /* driver description */
    const char *backend;    /* "vulkan", "null", ... (static string) */
    const char *type;       /* "discrete GPU", "integrated GPU", "CPU", "unknown" */
    uint32_t vendor_id, device_id;
    uint32_t subgroup_min_size, subgroup_max_size;
    int has_shader_f16, has_subgroups, has_timestamp_query; /* offered by the adapter */
} wgnn_adapter_info;

typedef struct wgnn_limits {
    uint64_t max_buffer_size;
    uint64_t max_storage_buffer_binding_size;
    uint64_t max_uniform_buffer_binding_size;
    uint32_t max_storage_buffers_per_shader_stage;
    uint32_t max_compute_workgroup_storage_size;
    uint32_t max_compute_invocations_per_workgroup;
    uint32_t max_compute_workgroup_size_x, max_compute_workgroup_size_y, max_compute_workgroup_size_z;
    uint32_t max_compute_workgroups_per_dimension;
    uint32_t min_storage_buffer_offset_alignment;
    uint32_t min_uniform_buffer_offset_alignment;
} wgnn_limits;

/* Lists every adapter the WebGPU instance offers (Dawn's Null backend is
 * listed with backend "null" but never chosen). Fills up to cap entries of
 * infos and stores the total in *count. Needs no context. */
wgnn_status wgnn_adapters_list(wgnn_adapter_info *infos, size_t cap, size_t *count,
                               char *err, size_t err_len);

/* The chosen adapter, the device's limits (the adapter's own, requested at
 * device creation) and which optional features the device has enabled;
 * all zeros for a NULL ctx. */
void wgnn_context_adapter(const wgnn_context *ctx, wgnn_adapter_info *info);
void wgnn_context_limits(const wgnn_context *ctx, wgnn_limits *limits);
int wgnn_context_has_f16(const wgnn_context *ctx);
int wgnn_context_has_subgroups(const wgnn_context *ctx);
int wgnn_context_has_timestamps(const wgnn_context *ctx);
/* The GPU's compute units (NVIDIA's SMs, AMD's CUs), which WebGPU does not
 * report: from the environment variable WGNN_COMPUTE_UNITS when set, else
 * from wgnn's table of GPUs it has been measured on (the NVIDIA H200 and
 * H100 SXM: 132), else 0 (unknown). Large GEMMs are planned in whole waves
 * of them where known (docs/OPS.md, "Wave plan"); 0 leaves them as they
 * were. */
uint32_t wgnn_context_compute_units(const wgnn_context *ctx);

/* ------------------------------------------------------------------------ */
/* Tensors: dense, row-major, one GPU storage buffer each.                   */

typedef struct wgnn_tensor wgnn_tensor;

/* Creates an uninitialised tensor of the given dtype and shape (every dim
 * >= 1, rank 0..WGNN_MAX_RANK; rank 0 is a scalar, dims may then be NULL). Fails with WGNN_ERR_LIMIT when its bytes pass
 * the device's maxBufferSize. */
wgnn_status wgnn_tensor_create(wgnn_context *ctx, wgnn_dtype dtype, int rank, const int64_t *dims,
                               wgnn_tensor **out);
/* NULL is ignored, and so is a tensor a graph owns (wgnn_graph_tensor's, or
 * one a graph took): the graph frees it. */
void wgnn_tensor_destroy(wgnn_tensor *t);

/* Copies bytes (must equal wgnn_tensor_nbytes) from host memory to the
 * tensor. Work recorded before the upload sees the old contents. */
wgnn_status wgnn_tensor_upload(wgnn_context *ctx, wgnn_tensor *t, const void *data, size_t bytes);
/* Submits pending work, waits, and copies the tensor into data (bytes must
 * equal wgnn_tensor_nbytes). */
wgnn_status wgnn_tensor_download(wgnn_context *ctx, const wgnn_tensor *t, void *data, size_t bytes);

/* Host conversions between float32 and IEEE float16 (binary16) bits,
 * round to nearest even; overflow gives +-inf, NaN stays NaN. */
void wgnn_f32_to_f16(const float *src, uint16_t *dst, size_t n);
void wgnn_f16_to_f32(const uint16_t *src, float *dst, size_t n);

wgnn_dtype wgnn_tensor_dtype(const wgnn_tensor *t);
int wgnn_tensor_rank(const wgnn_tensor *t);
const int64_t *wgnn_tensor_dims(const wgnn_tensor *t);
uint64_t wgnn_tensor_numel(const wgnn_tensor *t);
uint64_t wgnn_tensor_nbytes(const wgnn_tensor *t);

/* ------------------------------------------------------------------------ */
/* Ops.                                                                      */

typedef enum wgnn_sdpa_impl {
    WGNN_SDPA_AUTO = 0,       /* routed by shape (see docs/PERFORMANCE.md) */
    WGNN_SDPA_THREE_PASS = 1, /* QK -> softmax -> AV, two B*H*S_q*S_kv scratch buffers */
    WGNN_SDPA_FUSED = 2,      /* single pass, online softmax, no S_q*S_kv buffer */
    WGNN_SDPA_CHANNEL = 3     /* three-pass with the per-entry QK kernel (few rows) */
} wgnn_sdpa_impl;

/* Causal masking of wgnn_sdpa (query row i, key j, 0-based). */
typedef enum wgnn_sdpa_causal {
    WGNN_SDPA_CAUSAL_NONE = 0,        /* every key visible */
    WGNN_SDPA_CAUSAL_TOP_LEFT = 1,    /* j <= i: PyTorch's is_causal=True */
    WGNN_SDPA_CAUSAL_BOTTOM_RIGHT = 2 /* j <= i + S_kv - S_q: decoding with a KV cache (flash-attention's
                                         convention); S_q = 1 sees every key */
} wgnn_sdpa_causal;

typedef struct wgnn_sdpa_options {
    const wgnn_tensor *mask; /* NULL, or additive fp32 mask of shape [..., H, S_q, S_kv] */
    float scale;             /* used when has_scale; else 1/sqrt(D) */
    int has_scale;
    wgnn_sdpa_impl impl;
    int causal;     /* a wgnn_sdpa_causal; 0 = none */
    int enable_gqa; /* nonzero: k and v may have fewer heads than q (grouped-query attention) */
} wgnn_sdpa_options;

/*
 * Scaled dot-product attention, optionally causal, optionally grouped-query:
 *     out = softmax(q . k^T * scale + mask [+ causal -inf]) . v
 * q:    [..., H, S_q, D]  fp32, rank >= 3; the leading dims are batch dims
 * k, v: [..., H_kv, S_kv, D] fp32, same rank and leading dims as q, k.dims == v.dims;
 *       H_kv == H, or (enable_gqa) H % H_kv == 0: query head h reads kv head
 *       h / (H / H_kv), by index (PyTorch's enable_gqa=True)
 * mask: [..., H, S_q, S_kv] fp32, exact shape (no broadcast, q's heads), optional
 * out:  q's shape, fp32
 * causal (a wgnn_sdpa_causal) hides keys past each query row's limit after
 * the mask is added. D must be a multiple of 4. A row that sees no key (mask
 * -inf everywhere, or bottom_right's first S_q - S_kv rows) gives zeros (as
 * PyTorch does for the mask). Causal and grouped-query attention run in the
 * fused implementation only (auto picks it; three-pass and channel refuse
 * them with WGNN_ERR_UNSUPPORTED). opts may be NULL (no mask, default scale,
 * auto, not causal, no GQA).
 * float16 storage: q, k, v and out may all be WGNN_F16 instead (the mask
 * stays fp32), on every adapter (WGSL's pack2x16float / unpack2x16float;
 * shader-f16 is not needed); the fused implementation then reads f16,
 * computes in f32 and writes f16. Against
 * an fp32 reference on the same (f16-rounded) inputs the error stays within
 * 1e-3 + 1e-3*|ref| (tests/test_sdpa.c), the output's own f16 rounding
 * being most of it.
 * The op is recorded; see wgnn_context_sync.
 */
wgnn_status wgnn_sdpa(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k,
                      const wgnn_tensor *v, const wgnn_sdpa_options *opts, wgnn_tensor *out);

/* Scratch bytes wgnn_sdpa would allocate for these shapes and impl (after
 * routing). Same validation as wgnn_sdpa. */
wgnn_status wgnn_sdpa_scratch_bytes(wgnn_context *ctx, const wgnn_tensor *q, const wgnn_tensor *k,
                                    const wgnn_tensor *v, const wgnn_sdpa_options *opts,
                                    uint64_t *bytes, wgnn_sdpa_impl *routed);

/* ------------------------------------------------------------------------ */
/* Ops by name: the op table.                                               */
/*
 * Every op wgnn runs is a row of one table, named as PyTorch's aten op
 * (mm, linear, conv2d, layer_norm, softmax, gelu, add, slice, cat, sdpa,
 * ...), with PyTorch's semantics. `wgnn op --list` prints the table;
 * wgnn_op_find describes one row. Arguments are "key=value" strings in the
 * CLI's syntax: integers, floats (inf, -inf, nan accepted), lists
 * comma-separated ("stride=2,2"), booleans true/false, dtypes float32 /
 * float16 / int32, and words for choices ("approximate=tanh"); an optional
 * argument may be given as "none". Unknown keys, duplicate keys, unparsable
 * values and missing required arguments are errors naming the key.
 */

/* A tensor's dtype and shape, without data. */
typedef struct wgnn_desc {
    wgnn_dtype dtype;
    int rank;
    int64_t dims[WGNN_MAX_RANK];
} wgnn_desc;

typedef struct wgnn_op_arg_info {
    const char *name;  /* PyTorch's keyword */
    const char *type;  /* "int", "int[]", "float", "bool", "dtype", or choices "none|tanh" */
    const char *def;   /* default in the CLI's syntax; NULL: required; "": optional, no default */
    const char *help;
} wgnn_op_arg_info;

typedef struct wgnn_op_info {
    const char *name;     /* PyTorch's aten name */
    const char *summary;  /* one line */
    const char *inputs;   /* in aten's positional order, e.g. "input, weight, [bias]" */
    const char *shapes;   /* shape rules, e.g. "input [..., K], weight [N, K] -> [..., N]" */
    int min_inputs, max_inputs;
    int n_args;
    const wgnn_op_arg_info *args;
} wgnn_op_info;

int wgnn_op_count(void);
/* Row i (0 <= i < wgnn_op_count()), or NULL. */
const wgnn_op_info *wgnn_op_info_at(int i);
/* The row named name, or NULL. */
const wgnn_op_info *wgnn_op_find(const char *name);

/* Output dtypes and shapes of op for inputs of the given descs, with every
 * shape, dtype and argument rule checked (no GPU needed; device limits are
 * checked by wgnn_op). Fills up to out_cap descs and sets *n_out. On
 * failure err says which input or argument is wrong. Thread-safe. */
wgnn_status wgnn_op_shapes(const char *op, const wgnn_desc *in, int n_in, const char *const *args, int n_args,
                           wgnn_desc *out, int out_cap, int *n_out, char *err, size_t err_len);

/* Records op on the GPU: in and out are tensors of this context, out of the
 * shapes wgnn_op_shapes gives (exactly), none of them also an input. */
wgnn_status wgnn_op(wgnn_context *ctx, const char *op, const wgnn_tensor *const *in, int n_in,
                    const char *const *args, int n_args, wgnn_tensor *const *out, int n_out);

/* Host data of a desc's shape, C order: float for F32, int32_t for I32,
 * uint16_t (IEEE half bits) for F16. */
typedef struct wgnn_host_tensor {
    wgnn_desc desc;
    void *data;
} wgnn_host_tensor;

/* The CPU reference of op (double accumulation), for tests and --check:
 * same semantics and rules as wgnn_op; out descs must equal what
 * wgnn_op_shapes gives and their data be allocated by the caller, not
 * overlapping any input's or other output's (except an in-place row's
 * output over its own input, as wgnn_op allows). Thread-safe. */
wgnn_status wgnn_op_ref(const char *op, const wgnn_host_tensor *in, int n_in, const char *const *args, int n_args,
                        wgnn_host_tensor *out, int n_out, char *err, size_t err_len);

/* ------------------------------------------------------------------------ */
/* Graphs: build once, run many.                                             */
/*
 * A graph is a list of op-table ops over values. A value is an input (data
 * set before each run), a constant (a tensor the caller uploaded, e.g. a
 * weight), the output of an op, or a view (another shape of a value's data).
 * wgnn_graph_build checks every node, plans buffers for the op outputs by
 * liveness (values whose lifetimes do not overlap share pooled buffers),
 * creates pipelines, the uniform blocks and the bind groups once; each
 * wgnn_graph_run is then one command buffer and one submit. Only values
 * marked with wgnn_graph_output keep their data after a run and can be read.
 *
 * Errors: every call returns a status; the message is
 * wgnn_context_error(ctx) of the graph's context. A graph that failed to
 * build can only be destroyed. Shapes are fixed per graph: for another
 * batch or image size build another graph over the same constants (they are
 * shared, not copied). A graph uses its context as the ops do (one thread at
 * a time) and must be destroyed before it. docs/GRAPH.md describes the
 * buffer plan, the run and the stats.
 */
typedef struct wgnn_graph wgnn_graph;
typedef int32_t wgnn_value; /* >= 0; returned by the calls below. An index into its
                             * graph: a value of another graph is not recognised as such */

wgnn_status wgnn_graph_create(wgnn_context *ctx, wgnn_graph **out);
/* Frees the graph's buffers, bind groups and the constants it owns. */
void wgnn_graph_destroy(wgnn_graph *g);

/* An input of the given dtype and shape; its data comes from
 * wgnn_graph_set_input (or a write into wgnn_graph_tensor's tensor). It
 * starts as zeros and keeps its data from run to run until set again.
 * name is for messages and profiles. */
wgnn_status wgnn_graph_input(wgnn_graph *g, const char *name, wgnn_dtype dtype, int rank, const int64_t *dims,
                             wgnn_value *out);
/* A constant: t's data as it is when the graph runs. take != 0 hands t to
 * the graph (destroyed with it; the caller's wgnn_tensor_destroy of it then
 * does nothing); take == 0 leaves it to the caller, who must keep it alive
 * as long as the graph. One tensor may back several constants (read only:
 * no node may write one of them while reading another); it cannot be taken
 * by a graph that already has it, and a tensor of another graph
 * (wgnn_graph_tensor's) only with take == 0. On failure the caller keeps t. */
wgnn_status wgnn_graph_constant(wgnn_graph *g, wgnn_tensor *t, int take, wgnn_value *out);
/* Appends op (a row of the op table) on the values in, with arguments as
 * wgnn_op takes them. Shapes are checked now (wgnn_op_shapes); *n_out gets
 * the op's output count and out[0..*n_out) its values (out_cap >= that). */
wgnn_status wgnn_graph_op(wgnn_graph *g, const char *op, const wgnn_value *in, int n_in,
                          const char *const *args, int n_args, wgnn_value *out, int out_cap, int *n_out);
/* Appends op like wgnn_graph_op, but its one output is written into dst,
 * an input or a constant of exactly the output's dtype and shape, instead
 * of a new value: state that outlives a run, such as a KV cache. Nodes
 * after this one that read dst see the new data, nodes before it the old.
 * No other input of the node may be dst (or a view of it), except input 0
 * itself for a row that works in place (index_copy): that node then writes
 * only the rows it changes. */
wgnn_status wgnn_graph_op_into(wgnn_graph *g, const char *op, const wgnn_value *in, int n_in,
                               const char *const *args, int n_args, wgnn_value dst);
/* wgnn_graph_op_into for ops of several outputs: output i is written into
 * dst[i] when i < n_dst and dst[i] >= 0 (the same rules as above; an
 * input may be dst[i] only where the row lets output i work in place over
 * that input, e.g. qkv_rope_cache's caches), else it is a new value.
 * out[0..*n_out) gets every output's value (dst[i] where given). */
wgnn_status wgnn_graph_op_into_n(wgnn_graph *g, const char *op, const wgnn_value *in, int n_in,
                                 const char *const *args, int n_args, const wgnn_value *dst, int n_dst,
                                 wgnn_value *out, int out_cap, int *n_out);
/* The same data as v with another shape of the same element count (one
 * dim may be -1: inferred). No copy, no dispatch. */
wgnn_status wgnn_graph_view(wgnn_graph *g, wgnn_value v, int rank, const int64_t *dims, wgnn_value *out);
/* Names the node that produces v (profiles and messages), e.g.
 * "layer3.mlp.fc1"; before the build. */
wgnn_status wgnn_graph_set_label(wgnn_graph *g, wgnn_value v, const char *label);
/* Keeps v's data after each run, readable with wgnn_graph_read_output. */
wgnn_status wgnn_graph_output(wgnn_graph *g, wgnn_value v);
/* dtype and shape of v. */
wgnn_status wgnn_graph_desc(const wgnn_graph *g, wgnn_value v, wgnn_desc *out);

/* Plans and creates everything a run needs. Device limits are checked here. */
wgnn_status wgnn_graph_build(wgnn_graph *g);

/* Uploads an input's data (bytes must equal its size). */
wgnn_status wgnn_graph_set_input(wgnn_graph *g, wgnn_value input, const void *data, size_t bytes);
/* Submits the whole graph (one command buffer, one submit) and waits for
 * it; returns the first GPU error. profile (when the device has timestamp
 * queries; read them with wgnn_graph_profile):
 *   0                    none;
 *   WGNN_PROFILE_NODES   timestamps around every node (a compute pass a
 *                        node, which adds some GPU time between nodes);
 *   WGNN_PROFILE_SPAN    the run as it runs unprofiled (one compute pass),
 *                        with a timestamp at each end: its GPU time alone.
 * Any other nonzero value means WGNN_PROFILE_NODES. */
#define WGNN_PROFILE_NODES 1
#define WGNN_PROFILE_SPAN 2
wgnn_status wgnn_graph_run(wgnn_graph *g, int profile);
/* Copies an output's data after a run (bytes must equal its size). */
wgnn_status wgnn_graph_read_output(wgnn_graph *g, wgnn_value v, void *data, size_t bytes);
/* The tensor holding an input's or output's data (valid until the graph
 * is destroyed, which frees it: wgnn_tensor_destroy of it does nothing;
 * for feeding another graph, as a constant with take == 0, or an op
 * without a host copy). */
wgnn_status wgnn_graph_tensor(wgnn_graph *g, wgnn_value v, wgnn_tensor **out);

typedef struct wgnn_graph_stats {
    int n_values, n_nodes, n_inputs, n_outputs;
    int n_dispatches;          /* per run */
    int n_pool_buffers;        /* buffers the liveness plan shares among op outputs */
    uint64_t peak_bytes;       /* bytes of those pooled buffers (the plan's peak) */
    uint64_t unplanned_bytes;  /* what one buffer per op output would take */
    uint64_t io_bytes;         /* inputs and outputs (own buffers) */
    uint64_t scratch_bytes;    /* ops' scratch (im2col, three-pass scores) */
    uint64_t constant_bytes;   /* constants */
    uint64_t uniform_bytes;
    /* host time of the last run, ms: recording and submitting its command
     * buffers (only submitting them when they were recorded ahead), then
     * waiting for the GPU (and reading timestamps if profiled) */
    double last_record_ms, last_wait_ms;
    /* host time the last plain run spent recording the next run ahead,
     * while the GPU worked on its own (0: it did not; docs/GRAPH.md, "Run") */
    double last_ahead_ms;
} wgnn_graph_stats;
wgnn_status wgnn_graph_get_stats(const wgnn_graph *g, wgnn_graph_stats *s);

/* GPU time of each node in the last profiled run, in node order. */
typedef struct wgnn_graph_prof {
    int node;
    wgnn_value value;      /* its first output */
    const char *op;        /* op-table name */
    const char *label;     /* wgnn_graph_set_label's, or "" */
    int dispatches;
    uint64_t gpu_ns;
} wgnn_graph_prof;
/* *recs stays valid until the next run or destroy. *total_ns: first node's
 * start to last node's end (after a WGNN_PROFILE_SPAN run: the run's pass,
 * with *n = 0 records). WGNN_ERR_UNSUPPORTED without timestamp queries;
 * WGNN_ERR_INVALID_ARGUMENT when the last run was not profiled. */
wgnn_status wgnn_graph_profile(const wgnn_graph *g, const wgnn_graph_prof **recs, int *n, uint64_t *total_ns);

/* ------------------------------------------------------------------------ */
/* Models: vision encoders from Hugging Face model folders.                  */
/*
 * A folder as Hugging Face saves it: config.json, model.safetensors (or a
 * sharded model.safetensors.index.json) and, for images,
 * preprocessor_config.json. Architectures (config.json's model_type):
 *   "vit"                  ViTModel: patch embedding, CLS token, position
 *                          embeddings, pre-LN blocks, final LayerNorm, pooler
 *                          (dense + tanh) when its weights are present;
 *   "siglip_vision_model"  SiglipVisionModel: no CLS, post-LayerNorm,
 *   "siglip"               multi-head attention-pooling head (vision_config
 *                          of a full SigLIP folder; text weights ignored).
 * Weight names may carry the prefixes "vit." or "vision_model.". Every size
 * comes from config.json. Weights in float32, float16 or bfloat16 are
 * converted at load to float32, or with WGNN_MODEL_WEIGHTS_F16 the matrices
 * of the linear layers to float16 storage (half the bytes; f32 arithmetic).
 * Weights are uploaded once; each input shape gets a graph (built on first
 * use, kept until another shape comes), so batch and image size can change
 * between calls. Images of another size than config.json's image_size get
 * their position embeddings interpolated (bicubic, align_corners false, as
 * Hugging Face's interpolate_pos_encoding); height and width must be
 * multiples of the patch size.
 */
typedef struct wgnn_model wgnn_model;

typedef enum wgnn_model_weights {
    WGNN_MODEL_WEIGHTS_F32 = 0,
    WGNN_MODEL_WEIGHTS_F16 = 1
} wgnn_model_weights;

typedef struct wgnn_model_options {
    wgnn_model_weights weights;
} wgnn_model_options;

typedef struct wgnn_model_info {
    char model_type[64];   /* "vit", "siglip_vision_model" (also for "siglip") */
    int hidden_size, num_layers, num_heads, head_dim, intermediate_size;
    int image_size, patch_size, num_channels;
    int has_cls;           /* ViT: a CLS token leads the sequence */
    int has_pooler;        /* a pooler_output is produced */
    double layer_norm_eps;
    const char *hidden_act;   /* "gelu" (exact) or "gelu_tanh" */
    uint64_t n_params;
    uint64_t weight_bytes; /* on the GPU */
} wgnn_model_info;

typedef enum wgnn_model_output {
    WGNN_MODEL_LAST_HIDDEN_STATE = 0, /* [B, T, hidden] (T = CLS + patches for ViT) */
    WGNN_MODEL_POOLER_OUTPUT = 1      /* [B, hidden] */
} wgnn_model_output;

/* Loads dir. opts may be NULL (float32). On failure *out is NULL and
 * wgnn_context_error(ctx) names the file, key or tensor at fault. */
wgnn_status wgnn_model_load(wgnn_context *ctx, const char *dir, const wgnn_model_options *opts, wgnn_model **out);
void wgnn_model_destroy(wgnn_model *m);
void wgnn_model_get_info(const wgnn_model *m, wgnn_model_info *info);

/* Runs the encoder on pixel_values [batch, num_channels, height, width]
 * (float32, C order, already preprocessed) and waits for it. profile != 0
 * times every node (see wgnn_graph_profile on wgnn_model_graph). */
wgnn_status wgnn_model_encode(wgnn_model *m, const float *pixel_values, int64_t batch, int64_t height, int64_t width,
                              int profile);
/* Pipelined encodes, for a stream of inputs: wgnn_model_encode_submit
 * checks and uploads pixel_values as wgnn_model_encode does and submits the
 * run without waiting for the GPU, so that the host uploads and records the
 * next run while the GPU works on this one; wgnn_model_encode_fetch waits
 * for the oldest run in flight and copies its outputs to last_hidden_state
 * and pooler_output (either may be NULL, with its bytes ignored; bytes as
 * wgnn_model_output_desc gives them; pooler_output on a model without one:
 * WGNN_ERR_UNSUPPORTED). At most two runs are in flight: a third submit is
 * an error, as is another input shape while runs are in flight, and
 * wgnn_model_encode before they are fetched. A fetch that fails on the GPU
 * still takes its run out of flight; a fetch with wrong arguments does not.
 * Example (two inputs ahead):
 *     submit(x0); submit(x1); fetch(y0); submit(x2); fetch(y1); fetch(y2);
 */
wgnn_status wgnn_model_encode_submit(wgnn_model *m, const float *pixel_values, int64_t batch, int64_t height,
                                     int64_t width);
wgnn_status wgnn_model_encode_fetch(wgnn_model *m, float *last_hidden_state, size_t bytes, float *pooler_output,
                                    size_t pooled_bytes);
/* Shape of an output of the last encode; WGNN_ERR_UNSUPPORTED for a pooler
 * output the model does not have. */
wgnn_status wgnn_model_output_desc(const wgnn_model *m, wgnn_model_output which, wgnn_desc *out);
/* An output of the last wgnn_model_encode; refused while runs of
 * wgnn_model_encode_submit are not fetched (their outputs come with the fetch). */
wgnn_status wgnn_model_read_output(wgnn_model *m, wgnn_model_output which, float *data, size_t bytes);
/* The graph of the last encode (stats, profile), or NULL before one. */
wgnn_graph *wgnn_model_graph(wgnn_model *m);

/* Reads a PNG or JPEG and preprocesses it as the Hugging Face image
 * processor described by preproc_path (a preprocessor_config.json: resize
 * with its resample filter, exactly as PIL does, rescale, normalize):
 * *pixels gets a malloc'd [3, *height, *width] float32 array (free()).
 * Messages name the file. */
wgnn_status wgnn_image_preprocess_file(const char *image_path, const char *preproc_path, float **pixels,
                                       int64_t *height, int64_t *width, char *err, size_t err_len);

/* ------------------------------------------------------------------------ */
/* Language models: decoders from Hugging Face model folders.                */
/*
 * A folder as Hugging Face saves it: config.json, model.safetensors (or a
 * sharded model.safetensors.index.json) and optionally
 * generation_config.json (EOS ids). Architectures (config.json's
 * model_type):
 *   "qwen3"  Qwen3ForCausalLM: RMSNorm, per-head q/k RMSNorm, grouped-query
 *            attention, rotate-half RoPE, SwiGLU MLP, tied or untied lm_head;
 *   "qwen2"  the same graph without q/k norms, with q/k/v biases;
 *   "llama"  without q/k norms; rope_scaling other than none is refused.
 * rope_theta is read at the top level of config.json or inside
 * rope_parameters. Every size comes from config.json.
 *
 * The KV cache lives on the GPU, one [1, H_kv, max_context, head_dim]
 * float32 buffer per layer and for keys and values, allocated at load. A
 * run of n tokens at position pos0 (wgnn_lm_forward, or the prompt of
 * wgnn_lm_generate) is one graph: the new keys and values are written into
 * the cache in place (index_copy) and attention reads its first pos0 + n
 * rows (sdpa_kvcache). Graphs are built once per token count and kept
 * (decode steps reuse the one-token graph), so each step is one submit;
 * only the chosen id (4 bytes) is read back. Batch size is 1.
 */
typedef struct wgnn_lm wgnn_lm;

typedef enum wgnn_lm_weights {
    WGNN_LM_WEIGHTS_F32 = 0, /* float32 */
    WGNN_LM_WEIGHTS_F16 = 1, /* matrices as float16 storage (f32 arithmetic); norms stay float32 */
    WGNN_LM_WEIGHTS_Q8 = 2   /* matrices as int8 with one float32 scale per output row (weight-only) */
} wgnn_lm_weights;

typedef struct wgnn_lm_options {
    wgnn_lm_weights weights;
    /* KV-cache positions (prompt + generated tokens). 0: the smaller of
     * config.json's max_position_embeddings and 4096. */
    int max_context;
} wgnn_lm_options;

typedef struct wgnn_lm_info {
    char model_type[32];    /* "qwen3", "qwen2", "llama" */
    int vocab_size, hidden_size, num_layers, num_heads, num_kv_heads, head_dim, intermediate_size;
    int max_context;        /* the cache's positions */
    int tie_word_embeddings, has_qk_norm, has_qkv_bias;
    double rms_norm_eps, rope_theta;
    int n_eos;              /* EOS ids (generation_config.json, else config.json) */
    int32_t eos[8];
    uint64_t n_params;
    uint64_t weight_bytes;  /* on the GPU */
    uint64_t cache_bytes;   /* the KV cache on the GPU */
} wgnn_lm_info;

/* Loads dir. opts may be NULL (float32, default context). On failure *out
 * is NULL and wgnn_context_error(ctx) names the file, key or tensor. */
wgnn_status wgnn_lm_load(wgnn_context *ctx, const char *dir, const wgnn_lm_options *opts, wgnn_lm **out);
void wgnn_lm_destroy(wgnn_lm *lm);
void wgnn_lm_get_info(const wgnn_lm *lm, wgnn_lm_info *info);

/* Runs ids[0..n) at positions pos0..pos0+n-1: their keys and values enter
 * the cache (positions before pos0 must hold earlier tokens, from a
 * previous call), and logits gets [n, vocab_size] float32 (the logits of
 * every position; NULL: none are read back). pos0 + n <= max_context. */
wgnn_status wgnn_lm_forward(wgnn_lm *lm, const int32_t *ids, int n, int pos0, float *logits);

/* Called with each generated id; nonzero stops generation. It may not call
 * wgnn_lm_forward or wgnn_lm_generate on the same lm (WGNN_ERR_BUSY: the
 * generation is using its KV cache). */
typedef int (*wgnn_lm_token_fn)(void *user, int32_t id);

typedef struct wgnn_lm_generate_options {
    int max_new_tokens;    /* 0: until EOS or the end of the cache */
    int greedy;            /* nonzero: argmax (the sampling fields are ignored) */
    float temperature;     /* > 0; 0 means 1 */
    int top_k;             /* 0: off */
    float top_p;           /* (0, 1]; 0 means 1 */
    uint64_t seed;         /* for the uniform numbers the GPU samples with */
    int ignore_eos;        /* nonzero: do not stop at EOS (benchmarks) */
    float *prefill_logits; /* NULL, or room for [n_prompt, vocab_size] floats */
    int profile;           /* nonzero: profile the prefill, and one more decode step run after the timed ones (wgnn_lm_graph) */
} wgnn_lm_generate_options;

/* Why wgnn_lm_generate stopped. */
typedef enum wgnn_lm_stop {
    WGNN_LM_STOP_NONE = 0,  /* the call failed */
    WGNN_LM_STOP_EOS,       /* an EOS id (it is the last generated token) */
    WGNN_LM_STOP_MAX_NEW,   /* max_new_tokens were generated */
    WGNN_LM_STOP_CONTEXT,   /* the KV cache is full (max_context positions; with a prompt that fills it,
                             * no token is generated: prefill_logits only) */
    WGNN_LM_STOP_CALLBACK   /* on_token returned nonzero */
} wgnn_lm_stop;

typedef struct wgnn_lm_stats {
    int prompt_tokens, generated_tokens;
    wgnn_lm_stop stop;     /* why generation ended */
    double setup_ms;       /* building the graphs this call needed (0 when cached from an earlier call) */
    double prefill_ms;     /* wall time of the prompt's run, its read-back included */
    double decode_ms;      /* wall time of the decode steps, all of them */
    double decode_record_ms; /* of decode_ms: host time recording and submitting the steps' GPU work */
} wgnn_lm_stats;

/* Generates from prompt[0..n_prompt) (the cache is restarted at position 0):
 * the prompt runs as one graph, then one submit per new token; the token
 * is chosen on the GPU (argmax, or sampling with temperature, top-k and
 * top-p: the "sample" op), and on_token (may be NULL) gets each id as soon
 * as it is read back. Stops at an EOS id (which is passed to on_token), at
 * max_new_tokens, at the end of the cache, or when on_token returns
 * nonzero. stats may be NULL. */
wgnn_status wgnn_lm_generate(wgnn_lm *lm, const int32_t *prompt, int n_prompt, const wgnn_lm_generate_options *opts,
                             wgnn_lm_token_fn on_token, void *user, wgnn_lm_stats *stats);

/* The graph of the last prefill (which = 0) or decode step (which = 1) for
 * stats and profiles, or NULL. */
wgnn_graph *wgnn_lm_graph(wgnn_lm *lm, int which);

/* ------------------------------------------------------------------------ */
/* Tokenizers: Hugging Face tokenizer.json, byte-level BPE.                  */
/*
 * As GPT-2, Llama 3, Qwen2 and Qwen3 ship it: model BPE (vocab, merges),
 * added / special tokens (matched in the raw text first, longest first),
 * normalizer NFC, pre-tokenizer ByteLevel or a Sequence of Split regexes
 * (PCRE2, Unicode classes; \s is Unicode's White_Space as in Hugging Face's
 * Oniguruma, and \C is refused) ending in ByteLevel, ByteLevel decoding. Anything
 * else is refused at load with a message naming the key. Encoding adds no
 * BOS / EOS (post_processor, truncation and padding are not applied). Text
 * must be valid UTF-8. Checked against the `tokenizers` library's ids and
 * text (tests/test_tokenizer.c). Needs no context; a tokenizer is read-only
 * after load, so threads may share one.
 */
typedef struct wgnn_tokenizer wgnn_tokenizer;

/* path: a tokenizer.json, or a folder holding one (at most 256 MiB). */
wgnn_status wgnn_tokenizer_load(const char *path, wgnn_tokenizer **out, char *err, size_t err_len);
void wgnn_tokenizer_free(wgnn_tokenizer *t);
/* *ids gets a malloc'd array (free(); NULL when *n == 0). */
wgnn_status wgnn_tokenizer_encode(const wgnn_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                  char *err, size_t err_len);
/* Largest id + 1 (added tokens included); the id of a token, or -1. */
int wgnn_tokenizer_vocab_size(const wgnn_tokenizer *t);
int32_t wgnn_tokenizer_token_id(const wgnn_tokenizer *t, const char *token);

/* Streaming decode: each pushed id's bytes join a stream; complete UTF-8
 * characters come out, an incomplete tail (at most 3 bytes) waits for the
 * next id. Bytes that can never form a character come out as U+FFFD (as
 * Rust's String::from_utf8_lossy). out needs at most
 * wgnn_detok_max_out(t) bytes for one push. */
typedef struct wgnn_detok {
    unsigned char tail[4];
    size_t n_tail;
} wgnn_detok;
void wgnn_detok_init(wgnn_detok *d);
/* WGNN_ERR_INVALID_ARGUMENT for an id with no token, WGNN_ERR_LIMIT when
 * cap is too small; d is unchanged on failure. */
wgnn_status wgnn_detok_push(const wgnn_tokenizer *t, wgnn_detok *d, int32_t id, char *out, size_t cap,
                            size_t *n_out);
/* End of the stream: a waiting tail comes out as U+FFFD (cap >= 3). */
wgnn_status wgnn_detok_flush(wgnn_detok *d, char *out, size_t cap, size_t *n_out);
size_t wgnn_detok_max_out(const wgnn_tokenizer *t);

/* ------------------------------------------------------------------------ */
/* Timing: GPU timestamps around the ops recorded between begin and end.     */

/* Starts timing: each op recorded until wgnn_timing_end gets its own
 * compute-pass timestamps (when the device has timestamp queries). */
wgnn_status wgnn_timing_begin(wgnn_context *ctx);
/* Syncs, then reports the GPU time of the ops recorded since begin, in
 * milliseconds, summed. *gpu_timed is 0 when the device has no timestamp
 * queries (then ms is 0 and the caller should time on the host). */
wgnn_status wgnn_timing_end(wgnn_context *ctx, double *ms, int *gpu_timed);

/* ------------------------------------------------------------------------ */
/* .npy files (NumPy format 1.0 / 2.0 / 3.0 headers).                        */
/* Element types: '<f4' (F32), '<i4' (I32), '<f2' (F16); C order only.      */

typedef struct wgnn_npy {
    wgnn_dtype dtype;
    int rank;                       /* 0..WGNN_MAX_RANK; 0 is a scalar */
    int64_t dims[WGNN_MAX_RANK];
    void *data;                     /* malloc'd, numel * dtype size bytes */
    uint64_t numel;
    uint64_t nbytes;
} wgnn_npy;

/* Parses an in-memory .npy image; on success out->data is a fresh copy.
 * On failure writes the reason into err (if err_len > 0), leaves *out empty. */
wgnn_status wgnn_npy_parse(const void *buf, size_t len, wgnn_npy *out, char *err, size_t err_len);
/* Reads a .npy file: the header first, then (a regular file's size having
 * been checked against it) exactly the data it declares. A pipe or FIFO
 * (e.g. bash's <(cat x.npy)) is read as a stream: exactly the declared data,
 * then a look for trailing bytes. Devices and directories are refused,
 * unopened, with WGNN_ERR_IO. Errors as wgnn_npy_parse; messages name path. */
wgnn_status wgnn_npy_load(const char *path, wgnn_npy *out, char *err, size_t err_len);
/* Reads and checks only the header of the regular file at path: fills dtype,
 * rank, dims, numel and nbytes as wgnn_npy_load would, with data NULL, after
 * checking that the file holds exactly nbytes of data after the header. Reads
 * at most the header (<= 1 MiB), so shapes can be checked before a large
 * file is read. A pipe or FIFO gives WGNN_ERR_UNSUPPORTED, unopened (its
 * header cannot be read without consuming it): read it with wgnn_npy_load. */
wgnn_status wgnn_npy_load_header(const char *path, wgnn_npy *out, char *err, size_t err_len);
/* Writes a version 1.0 .npy file (2.0 when the header needs it).
 * When path is a regular file or does not exist, the file is written to the
 * temporary name "<path>.tmp.<pid>" (pid in decimal, from getpid) and renamed
 * over path, so a failed save leaves path as it was and no temporary file;
 * only a process killed mid-write leaves the temporary behind (a program
 * that handles SIGINT / SIGTERM can unlink it there). Any other existing
 * path is written in place, not replaced: a device node, a FIFO (the call
 * waits for a reader) and a symbolic link (e.g. /dev/stdout; a regular file
 * behind a link is truncated and rewritten, not atomically). Every write and
 * close error is reported (e.g. ENOSPC from a full disk or /dev/full). */
wgnn_status wgnn_npy_save(const char *path, wgnn_dtype dtype, int rank, const int64_t *dims,
                          const void *data, char *err, size_t err_len);
void wgnn_npy_free(wgnn_npy *n);

/* ------------------------------------------------------------------------ */
/* CPU reference kernels (double accumulation), for tests and --check.       */

/* Same semantics and shapes as wgnn_sdpa, on host arrays. mask may be NULL.
 * batch = product of the leading dims times H. */
void wgnn_ref_sdpa(const float *q, const float *k, const float *v, const float *mask,
                   uint64_t batch, uint64_t s_q, uint64_t s_kv, uint64_t d, double scale,
                   float *out);
/* With grouped-query attention and causal masking: batch = product of the
 * leading dims times H (q's heads); k and v hold batch / group heads, q head
 * b reading kv head b / group (group = H / H_kv, 1 for plain attention);
 * causal is a wgnn_sdpa_causal. */
void wgnn_ref_sdpa_ex(const float *q, const float *k, const float *v, const float *mask,
                      uint64_t batch, uint64_t group, uint64_t s_q, uint64_t s_kv, uint64_t d,
                      double scale, int causal, float *out);

#ifdef __cplusplus
}
#endif
#endif /* WGNN_H */
