/* context.c - instance, adapter choice, device, limits, features, errors. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WGNN__DEFAULT_TIMEOUT_MS 60000u
#define WGNN__DEFAULT_CPU_TIMEOUT_MS 600000u /* CPU adapters: see wgnn_context_create */
#define WGNN__MAX_ADAPTERS 16

/* ---- adapters ------------------------------------------------------------ */

static void on_adapter(WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message,
                       void *u1, void *u2) {
    (void)u2;
    wgnn__cb *r = u1;
    r->fired = 1;
    r->status = (int)status;
    r->handle = adapter;
    wgnn__strview(r->msg, sizeof r->msg, message);
}

static const char *backend_name(WGPUBackendType b) {
    switch (b) {
    case WGPUBackendType_Null: return "null";
    case WGPUBackendType_WebGPU: return "webgpu";
    case WGPUBackendType_D3D11: return "d3d11";
    case WGPUBackendType_D3D12: return "d3d12";
    case WGPUBackendType_Metal: return "metal";
    case WGPUBackendType_Vulkan: return "vulkan";
    case WGPUBackendType_OpenGL: return "opengl";
    case WGPUBackendType_OpenGLES: return "opengles";
    default: return "unknown";
    }
}

static const char *adapter_type_name(WGPUAdapterType t) {
    switch (t) {
    case WGPUAdapterType_DiscreteGPU: return "discrete GPU";
    case WGPUAdapterType_IntegratedGPU: return "integrated GPU";
    case WGPUAdapterType_CPU: return "CPU";
    default: return "unknown";
    }
}

/* Feature ids: the header's (webgpu-headers 1.0) and the older numbering
 * that the prebuilt Dawn library still uses (TimestampQuery 3, ShaderF16 10,
 * Subgroups 17). Which one means what is settled by a functional probe on the
 * device, never by the number alone. */
static const uint32_t k_timestamp_ids[2] = {WGPUFeatureName_TimestampQuery, 0x03};
static const uint32_t k_f16_ids[2] = {WGPUFeatureName_ShaderF16, 0x0A};
static const uint32_t k_subgroups_ids[2] = {WGPUFeatureName_Subgroups, 0x11};

/* For the adapter listing only: offered under both numberings. Conservative
 * (the NVIDIA H200 offers the header's ShaderF16 id, which this library reads
 * as RG11B10UfloatRenderable, but not the library's own); the device-level
 * probes decide what is used. */
static int adapter_offers(WGPUAdapter a, const uint32_t ids[2]) {
    return wgpuAdapterHasFeature(a, (WGPUFeatureName)ids[0]) && wgpuAdapterHasFeature(a, (WGPUFeatureName)ids[1]);
}

static void fill_info(WGPUAdapter a, wgnn_adapter_info *out) {
    WGPUAdapterInfo ai = WGPU_ADAPTER_INFO_INIT;
    memset(out, 0, sizeof *out);
    if (wgpuAdapterGetInfo(a, &ai) == WGPUStatus_Success) {
        wgnn__strview(out->name, sizeof out->name, ai.device);
        wgnn__strview(out->vendor, sizeof out->vendor, ai.vendor);
        wgnn__strview(out->description, sizeof out->description, ai.description);
        out->backend = backend_name(ai.backendType);
        out->type = adapter_type_name(ai.adapterType);
        out->vendor_id = ai.vendorID;
        out->device_id = ai.deviceID;
        out->subgroup_min_size = ai.subgroupMinSize;
        out->subgroup_max_size = ai.subgroupMaxSize;
        wgpuAdapterInfoFreeMembers(ai);
    } else {
        out->backend = "unknown";
        out->type = "unknown";
    }
    out->has_shader_f16 = adapter_offers(a, k_f16_ids);
    out->has_subgroups = adapter_offers(a, k_subgroups_ids);
    out->has_timestamp_query = adapter_offers(a, k_timestamp_ids);
}

static bool same_adapter(const wgnn_adapter_info *a, const wgnn_adapter_info *b) {
    return strcmp(a->backend, b->backend) == 0 && a->vendor_id == b->vendor_id &&
           a->device_id == b->device_id && strcmp(a->name, b->name) == 0 &&
           strcmp(a->description, b->description) == 0;
}

/* Dawn's standard C API has no adapter enumeration: ask with each preference
 * and backend, and keep the distinct answers, in order of preference. The
 * first request is the default choice (high performance unless low_power). */
typedef struct adapter_set {
    WGPUAdapter ad[WGNN__MAX_ADAPTERS];
    wgnn_adapter_info info[WGNN__MAX_ADAPTERS];
    size_t n;
} adapter_set;

static void adapter_set_release(adapter_set *s) {
    for (size_t i = 0; i < s->n; i++)
        if (s->ad[i]) wgpuAdapterRelease(s->ad[i]);
    s->n = 0;
}

/* Records of requests that timed out go to *parked, freed by the caller
 * after the instance is released. */
static void gather_adapters(WGPUInstance inst, uint64_t timeout_ns, bool low_power, adapter_set *s,
                            wgnn__cb **parked) {
    struct {
        WGPUPowerPreference pp;
        WGPUBackendType be;
        WGPUBool fallback;
    } asks[] = {
        {low_power ? WGPUPowerPreference_LowPower : WGPUPowerPreference_HighPerformance,
         WGPUBackendType_Undefined, 0},
        {low_power ? WGPUPowerPreference_HighPerformance : WGPUPowerPreference_LowPower,
         WGPUBackendType_Undefined, 0},
        {WGPUPowerPreference_HighPerformance, WGPUBackendType_Vulkan, 0},
        {WGPUPowerPreference_LowPower, WGPUBackendType_Vulkan, 0},
        {WGPUPowerPreference_Undefined, WGPUBackendType_Undefined, 1},
        {WGPUPowerPreference_Undefined, WGPUBackendType_Null, 0},
    };
    s->n = 0;
    for (size_t i = 0; i < sizeof asks / sizeof asks[0] && s->n < WGNN__MAX_ADAPTERS; i++) {
        WGPURequestAdapterOptions o = WGPU_REQUEST_ADAPTER_OPTIONS_INIT;
        o.powerPreference = asks[i].pp;
        o.backendType = asks[i].be;
        o.forceFallbackAdapter = asks[i].fallback;
        wgnn__cb *r = wgnn__cb_new();
        if (!r) return;
        WGPURequestAdapterCallbackInfo ci = WGPU_REQUEST_ADAPTER_CALLBACK_INFO_INIT;
        ci.mode = WGPUCallbackMode_WaitAnyOnly;
        ci.callback = on_adapter;
        ci.userdata1 = r;
        WGPUFuture f = wgpuInstanceRequestAdapter(inst, &o, ci);
        WGPUFutureWaitInfo wi = {f, 0};
        if (wgpuInstanceWaitAny(inst, 1, &wi, timeout_ns) != WGPUWaitStatus_Success || !wi.completed) {
            r->next = *parked;
            *parked = r;
            continue;
        }
        WGPUAdapter got = r->status == (int)WGPURequestAdapterStatus_Success ? (WGPUAdapter)r->handle : NULL;
        wgnn__cb_free(r);
        if (!got) continue;
        wgnn_adapter_info info;
        fill_info(got, &info);
        bool dup = false;
        for (size_t j = 0; j < s->n && !dup; j++) dup = same_adapter(&s->info[j], &info);
        if (dup) {
            wgpuAdapterRelease(got);
            continue;
        }
        s->ad[s->n] = got;
        s->info[s->n] = info;
        s->n++;
    }
}

static WGPUInstance make_instance(void) {
    WGPUInstanceFeatureName feat = WGPUInstanceFeatureName_TimedWaitAny;
    WGPUInstanceDescriptor d = WGPU_INSTANCE_DESCRIPTOR_INIT;
    d.requiredFeatureCount = 1;
    d.requiredFeatures = &feat;
    return wgpuCreateInstance(&d);
}

wgnn_status wgnn_adapters_list(wgnn_adapter_info *infos, size_t cap, size_t *count, char *err,
                               size_t err_len) {
    if (!count || (cap && !infos)) {
        if (err && err_len) snprintf(err, err_len, "wgnn_adapters_list: count (and infos when cap > 0) must not be NULL");
        return WGNN_ERR_INVALID_ARGUMENT;
    }
    *count = 0;
    WGPUInstance inst = make_instance();
    if (!inst) {
        if (err && err_len) snprintf(err, err_len, "could not create a WebGPU instance (Dawn)");
        return WGNN_ERR_NO_ADAPTER;
    }
    adapter_set s;
    wgnn__cb *parked = NULL;
    gather_adapters(inst, (uint64_t)WGNN__DEFAULT_TIMEOUT_MS * 1000000u, false, &s, &parked);
    for (size_t i = 0; i < s.n && i < cap; i++) infos[i] = s.info[i];
    *count = s.n;
    adapter_set_release(&s);
    wgpuInstanceRelease(inst);
    wgnn__cb_free_list(&parked);
    return WGNN_OK;
}

static const char *k_no_driver_hint =
    "install a Vulkan driver: without a GPU, Mesa's lavapipe >= 24 (on Debian 12: mesa-vulkan-drivers "
    "and libvulkan1 from bookworm-backports; scripts/setup.sh installs them); with an NVIDIA GPU, the "
    "driver's Vulkan ICD (e.g. VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json) and "
    "libvulkan1";

static bool ci_contains(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return true;
    }
    return n == 0;
}

/* Picks an index into s, or returns an error with the reason in ctx->err. */
static wgnn_status choose_adapter(wgnn_context *ctx, const adapter_set *s, const char *want, size_t *pick) {
    if (want && *want) {
        char *end = NULL;
        unsigned long idx = strtoul(want, &end, 10);
        if (end && *end == '\0' && end != want && isdigit((unsigned char)want[0])) { /* strtoul takes "-1" */
            if (idx >= s->n)
                return wgnn__err(ctx, WGNN_ERR_NO_ADAPTER,
                                 "adapter index %lu asked for, but only %zu adapter(s) were found "
                                 "(see `wgnn info`)", idx, s->n);
            if (strcmp(s->info[idx].backend, "null") == 0)
                return wgnn__err(ctx, WGNN_ERR_NO_ADAPTER,
                                 "adapter %lu is Dawn's Null backend, which computes nothing; %s", idx,
                                 k_no_driver_hint);
            *pick = idx;
            return WGNN_OK;
        }
        for (size_t i = 0; i < s->n; i++) {
            if (strcmp(s->info[i].backend, "null") == 0) continue;
            if (ci_contains(s->info[i].name, want) || ci_contains(s->info[i].description, want) ||
                ci_contains(s->info[i].vendor, want)) {
                *pick = i;
                return WGNN_OK;
            }
        }
        return wgnn__err(ctx, WGNN_ERR_NO_ADAPTER,
                         "no adapter matches \"%s\" (an index or a part of the name; see `wgnn info`)", want);
    }
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->info[i].backend, "null") != 0) {
            *pick = i;
            return WGNN_OK;
        }
    }
    return wgnn__err(ctx, WGNN_ERR_NO_ADAPTER,
                     "no usable WebGPU adapter: Dawn offered %s; %s",
                     s->n ? "only its Null backend, which computes nothing" : "no adapter at all",
                     k_no_driver_hint);
}

/* ---- device -------------------------------------------------------------- */

static void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void *u1,
                      void *u2) {
    (void)u2;
    wgnn__cb *r = u1;
    r->fired = 1;
    r->status = (int)status;
    r->handle = device;
    wgnn__strview(r->msg, sizeof r->msg, message);
}

static void on_lost(WGPUDevice const *device, WGPUDeviceLostReason reason, WGPUStringView message, void *u1,
                    void *u2) {
    (void)device;
    (void)u2;
    wgnn_context *ctx = u1;
    if (reason == WGPUDeviceLostReason_Destroyed || reason == WGPUDeviceLostReason_CallbackCancelled) return;
    char m[WGNN__ERR_LEN - 64];
    wgnn__strview(m, sizeof m, message);
    ctx->health = WGNN_ERR_DEVICE_LOST;
    snprintf(ctx->health_msg, sizeof ctx->health_msg, "the GPU device was lost (reason %d): %s", (int)reason, m);
}

static void on_uncaptured(WGPUDevice const *device, WGPUErrorType type, WGPUStringView message, void *u1,
                          void *u2) {
    (void)device;
    (void)u2;
    wgnn_context *ctx = u1;
    if (ctx->health != WGNN_OK) return;
    char m[WGNN__ERR_LEN - 64];
    wgnn__strview(m, sizeof m, message);
    ctx->health = WGNN_ERR_GPU;
    snprintf(ctx->health_msg, sizeof ctx->health_msg, "uncaptured GPU error (type %d): %s", (int)type, m);
}

/* Dawn toggles (a Dawn extension; its sType, 0x0005000A, is the same in the
 * header and in the prebuilt library, checked against bun-webgpu's struct
 * table). Raw timestamps: Dawn otherwise rounds them to 65.536 us. */
static wgnn_status request_device(wgnn_context *ctx, const WGPUFeatureName *feats, size_t n_feats, bool toggles,
                                  bool keep_robustness) {
    /* disable_robustness (unless kept); dump_shaders for WGNN_DUMP_SHADERS
     * (gpu/shader_dump.c); WGNN_DAWN_TOGGLES=a,b: more, for experiments (e.g.
     * skip_validation: Dawn's per-command checks, host time) */
    const char *k_enabled[10];
    size_t n_en = 0;
    if (!keep_robustness) k_enabled[n_en++] = "disable_robustness";
    if (ctx->dump_dir[0]) k_enabled[n_en++] = "dump_shaders";
    char extra[256] = "";
    const char *env = getenv("WGNN_DAWN_TOGGLES");
    if (env) snprintf(extra, sizeof extra, "%s", env);
    for (char *save = NULL, *t = strtok_r(extra, ",", &save); t && n_en < 10; t = strtok_r(NULL, ",", &save))
        k_enabled[n_en++] = t;
    static const char *const k_disabled[] = {"timestamp_quantization"};
    WGPUDawnTogglesDescriptor td = WGPU_DAWN_TOGGLES_DESCRIPTOR_INIT;
    td.chain.sType = (WGPUSType)0x0005000A;
    td.enabledToggleCount = n_en;
    td.enabledToggles = k_enabled;
    td.disabledToggleCount = 1;
    td.disabledToggles = k_disabled;
    WGPUDeviceDescriptor dd = WGPU_DEVICE_DESCRIPTOR_INIT;
    if (toggles) dd.nextInChain = &td.chain;
    dd.label = wgnn__sv("wgnn");
    dd.requiredFeatureCount = n_feats;
    dd.requiredFeatures = feats;
    dd.requiredLimits = &ctx->limits; /* the adapter's own: 4 GiB bindings on big GPUs */
    dd.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
    dd.deviceLostCallbackInfo.callback = on_lost;
    dd.deviceLostCallbackInfo.userdata1 = ctx;
    dd.uncapturedErrorCallbackInfo.callback = on_uncaptured;
    dd.uncapturedErrorCallbackInfo.userdata1 = ctx;
    wgnn__cb *r = wgnn__cb_new();
    if (!r) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "requesting the GPU device: out of host memory");
    WGPURequestDeviceCallbackInfo ci = WGPU_REQUEST_DEVICE_CALLBACK_INFO_INIT;
    ci.mode = WGPUCallbackMode_WaitAnyOnly;
    ci.callback = on_device;
    ci.userdata1 = r;
    WGPUFuture f = wgpuAdapterRequestDevice(ctx->adapter, &dd, ci);
    wgnn_status s = wgnn__cb_wait(ctx, f, r, "requesting the GPU device");
    if (s != WGNN_OK) return s;
    WGPUDevice dev = r->status == (int)WGPURequestDeviceStatus_Success ? (WGPUDevice)r->handle : NULL;
    if (!dev) s = wgnn__err(ctx, WGNN_ERR_NO_ADAPTER, "the adapter \"%s\" refused to create a device: %s",
                            ctx->info.name, r->msg);
    wgnn__cb_free(r);
    ctx->device = dev;
    return s;
}

/* The header's feature ids and the prebuilt library's can differ, so an
 * enabled optional feature is trusted only once a shader that uses it builds. */
static bool probe_shader(wgnn_context *ctx, const char *wgsl) {
    WGPUComputePipeline p = NULL;
    char saved[WGNN__ERR_LEN];
    memcpy(saved, ctx->err, sizeof saved);
    wgnn_status s = wgnn__compile(ctx, "feature probe", wgsl, NULL, 0, &p);
    memcpy(ctx->err, saved, sizeof saved);
    if (p) wgpuComputePipelineRelease(p);
    return s == WGNN_OK;
}

static bool probe_timestamps(wgnn_context *ctx) {
    WGPUQuerySetDescriptor d = WGPU_QUERY_SET_DESCRIPTOR_INIT;
    d.type = WGPUQueryType_Timestamp;
    d.count = 2;
    char saved[WGNN__ERR_LEN];
    memcpy(saved, ctx->err, sizeof saved);
    wgnn__scope_push(ctx);
    WGPUQuerySet qs = wgpuDeviceCreateQuerySet(ctx->device, &d);
    wgnn_status s = wgnn__scope_pop(ctx, "timestamp probe");
    memcpy(ctx->err, saved, sizeof saved);
    if (qs) {
        wgpuQuerySetDestroy(qs);
        wgpuQuerySetRelease(qs);
    }
    return s == WGNN_OK;
}

/* Tuning knobs for experiments (docs/PERFORMANCE.md), read once. */
/* Multiprocessors of the GPUs whose count the GEMM's wave plan has been
 * measured with (WebGPU does not report it; WGNN_COMPUTE_UNITS=N gives it
 * for any other). 0: unknown. */
static uint32_t known_compute_units(const wgnn_adapter_info *info) {
    static const struct { uint32_t vendor, device, units; } k_gpus[] = {
        {0x10de, 0x2335, 132}, /* NVIDIA H200 SXM (docs/PERFORMANCE.md, session 7) */
        /* NVIDIA H100 SXM5 80GB: the same 132 SMs. Until session 25 it was
         * missing here, and the H100 ran without wave plans and with K
         * groups chosen blind: ViT-B/16's GPU span 2.17 -> 1.91 ms at batch
         * 1, 11.07 -> 9.16-9.21 at 8, 31.62-31.83 -> 30.33-30.53 at 32
         * (docs/PERFORMANCE.md, session 25 call 2) */
        {0x10de, 0x2330, 132},
    };
    for (size_t i = 0; i < sizeof k_gpus / sizeof k_gpus[0]; i++)
        if (info->vendor_id == k_gpus[i].vendor && info->device_id == k_gpus[i].device) return k_gpus[i].units;
    return 0;
}

/* An integer knob: its value when set and in [lo, hi] (a power of 2 with
 * pow2), else 0 (unset: the default). */
static uint32_t knob_int(const char *name, int lo, int hi, bool pow2) {
    const char *env = getenv(name);
    int v = env ? atoi(env) : 0;
    return env && v >= lo && v <= hi && (!pow2 || (v & (v - 1)) == 0) ? (uint32_t)v : 0;
}

static void read_knobs(wgnn__knobs *k) {
    memset(k, 0, sizeof *k);
    k->fused_sacc = k->fused_sg = k->fused_lean = k->fused_qg = k->fused_swz = -1;
    const char *env = getenv("WGNN_FUSED_TILE");
    uint32_t e[4] = {0, 0, 4, 1};
    if (env && sscanf(env, "%ux%ux%ux%u", &e[0], &e[1], &e[2], &e[3]) >= 2 && e[0] && e[1] && e[0] <= 64 &&
        e[1] <= 64 && (e[2] == 1 || e[2] == 2 || e[2] == 4) && (e[3] == 1 || e[3] == 2))
        memcpy(k->fused_tile, e, sizeof e);
    const char *fl = getenv("WGNN_FUSED_FLAGS");
    if (fl) {
        k->fused_sacc = strchr(fl, 's') != NULL;
        k->fused_sg = strchr(fl, 'g') != NULL;
        k->fused_lean = strchr(fl, 'l') != NULL;
        k->fused_qg = strchr(fl, 'q') != NULL;
        k->fused_swz = strchr(fl, 'w') != NULL;
        const char *u = strchr(fl, 'u');
        int un = u ? atoi(u + 1) : 0;
        if (un >= 1 && un <= 32 && (un & (un - 1)) == 0) k->fused_unroll = (uint32_t)un;
        const char *cu = strchr(fl, 'c');
        int cn = cu ? atoi(cu + 1) : 0;
        if (cn >= 1 && cn <= 64 && (cn & (cn - 1)) == 0) k->fused_cunroll = (uint32_t)cn;
    }
    env = getenv("WGNN_FUSED_VH");
    uint32_t vh[4] = {8, 2, 4, 8};
    if (env && sscanf(env, "%u,%u,%u,%u", &vh[0], &vh[1], &vh[2], &vh[3]) >= 1 && vh[0] >= 1 && vh[0] <= 16 &&
        (vh[1] == 1 || vh[1] == 2) && vh[2] >= 1 && vh[3] >= 1)
        memcpy(k->fused_vh, vh, sizeof vh);
    k->fused_vh_off = env && strcmp(env, "0") == 0;
    env = getenv("WGNN_FUSED_SPLIT");
    if (env && atoi(env) > 0) k->fused_split = (uint32_t)atoi(env);
    env = getenv("WGNN_GEMM_TILE");
    uint32_t g[5] = {0, 0, 0, 0, 8};
    if (env && sscanf(env, "%ux%ux%ux%ux%u", &g[0], &g[1], &g[2], &g[3], &g[4]) >= 4 && g[0] && g[1] &&
        g[0] * g[1] <= 1024 && (g[2] == 4 || g[2] == 8) && (g[3] == 4 || g[3] == 8) && g[4] >= 1 && g[4] <= 32)
        memcpy(k->gemm_tile, g, sizeof g);
    env = getenv("WGNN_GEMM_BIAS_INIT");
    k->gemm_bias_init = env && strcmp(env, "0") == 0 ? 0 : -1;
    env = getenv("WGNN_GEMM_SPLIT");
    k->gemm_split = env && atoi(env) >= 1 && atoi(env) <= 64 ? atoi(env) : -1;
    env = getenv("WGNN_COMPUTE_UNITS");
    unsigned long units = env ? strtoul(env, NULL, 10) : 0;
    k->compute_units = !env ? UINT32_MAX : units <= 4096 ? (uint32_t)units : 0; /* UINT32_MAX: from the table */
    env = getenv("WGNN_GEMM_WAVES");
    k->gemm_waves = env && strcmp(env, "0") == 0 ? 0 : -1;
    uint32_t kw = knob_int("WGNN_GEMM_KW", 1, 8, false);
    k->gemm_kw = kw ? (int)kw : -1;
    k->gemv_wg = knob_int("WGNN_GEMV_WG", 32, 1024, true);
    k->gemv_lanes = knob_int("WGNN_GEMV_LANES", 1, 1024, true);
    k->gemv_unroll = knob_int("WGNN_GEMV_UNROLL", 1, 16, false);
    k->gemvn_quads = knob_int("WGNN_GEMVN_QUADS", 1, 64, true);
    /* a graph run's command buffer goes in pieces of this many dispatches,
     * so that the GPU starts on the first while the host records the next
     * (a Qwen3-0.6B decode step on the H200: 3.99 ms one submit, 3.79 every
     * 100 dispatches, 3.40 every 40; docs/PERFORMANCE.md) */
    env = getenv("WGNN_GRAPH_CHUNK");
    k->graph_chunk = env ? (uint32_t)strtoul(env[0] == 'g' ? env + 1 : env, NULL, 10) : 40u;
    k->graph_chunk_grow = env && env[0] == 'g';
    k->graph_chunk_set = env != NULL;
    k->decode_wgs = knob_int("WGNN_DECODE_WGS", 1, 65536, false);
    k->decode_wg = knob_int("WGNN_DECODE_WG", 32, 1024, true);
    k->decode_depth = knob_int("WGNN_DECODE_DEPTH", 1, WGNN__SLOTS, false);
    k->decode_u = knob_int("WGNN_DECODE_U", 1, 8, false);
    k->q8_nc = knob_int("WGNN_Q8_NC", 1, 8, true);
    env = getenv("WGNN_GRAPH_PRERECORD");
    k->no_graph_prerecord = env && strcmp(env, "0") == 0;
    env = getenv("WGNN_WAIT_HYBRID");
    k->no_wait_hybrid = env && strcmp(env, "0") == 0;
    env = getenv("WGNN_WAIT_SPIN");
    k->wait_spin_us = env && strtoul(env, NULL, 10) <= 1000000ul ? (uint32_t)strtoul(env, NULL, 10) : 0;
    env = getenv("WGNN_SDPA_PACKED");
    k->no_sdpa_packed = env && strcmp(env, "0") == 0;
    k->sdpa_packed_bias = !env ? -1 : strcmp(env, "nobias") == 0 ? 0 : strcmp(env, "bias") == 0 ? 1 : -1;
    env = getenv("WGNN_GEMM_DB");
    k->gemm_db = env ? (strcmp(env, "0") == 0 ? 0 : 1) : -1;
    k->ln_lanes = knob_int("WGNN_LN_LANES", 1, 1024, false);
    env = getenv("WGNN_LN_FUSED");
    k->no_ln_fused = env && strcmp(env, "0") == 0;
    env = getenv("WGNN_STAGED_UPLOAD");
    k->no_staged_upload = env && strcmp(env, "0") == 0;
    env = getenv("WGNN_SDPA_DECODE");
    k->sdpa_decode = env && strcmp(env, "0") == 0 ? 0 : 1;
    env = getenv("WGNN_CONV_ROUTE");
    if (env)
        k->conv_route = strcmp(env, "direct") == 0     ? WGNN__CONV_DIRECT
                        : strcmp(env, "gemm") == 0     ? WGNN__CONV_GEMM
                        : strcmp(env, "im2col") == 0   ? WGNN__CONV_IM2COL
                        : strcmp(env, "implicit") == 0 ? WGNN__CONV_IMPLICIT
                                                       : WGNN__CONV_AUTO;
    env = getenv("WGNN_CONV_DW");
    uint32_t dw[3];
    if (env && sscanf(env, "%u,%u,%u", &dw[0], &dw[1], &dw[2]) == 3 && dw[0] >= 1 && dw[0] <= 1024 && dw[1] >= 1 &&
        dw[1] <= 1024 && dw[2] >= 1 && dw[2] <= 8)
        memcpy(k->conv_dw, dw, sizeof dw);
}

wgnn_status wgnn_context_create(const wgnn_context_options *opts, wgnn_context **out) {
    wgnn_context_options o = {0};
    if (opts) o = *opts;
    if (!out) return WGNN_ERR_INVALID_ARGUMENT;
    *out = NULL;
    wgnn_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return WGNN_ERR_OUT_OF_MEMORY;
    *out = ctx;
    ctx->timeout_ns = (uint64_t)(o.timeout_ms ? o.timeout_ms : WGNN__DEFAULT_TIMEOUT_MS) * 1000000u;
    ctx->poll_ns = (uint64_t)o.poll_us * 1000u;

    adapter_set s = {0};
    wgnn_status st = WGNN_OK;
    ctx->instance = make_instance();
    if (!ctx->instance) {
        st = wgnn__err(ctx, WGNN_ERR_NO_ADAPTER, "could not create a WebGPU instance (Dawn)");
        goto cleanup;
    }
    gather_adapters(ctx->instance, ctx->timeout_ns, o.low_power != 0, &s, &ctx->parked);
    const char *want = o.adapter ? o.adapter : getenv("WGNN_ADAPTER");
    size_t pick = 0;
    st = choose_adapter(ctx, &s, want, &pick);
    if (st != WGNN_OK) goto cleanup;
    ctx->adapter = s.ad[pick];
    s.ad[pick] = NULL;
    ctx->info = s.info[pick];
    /* A CPU adapter (lavapipe) compiles a kernel when it first runs it: the
     * large fused-attention variants take 20-45 s each on a 2-core machine,
     * past 60 s under load (CI's test_sdpa, session 12). The default wait
     * there is ten times longer. */
    if (!o.timeout_ms && wgnn__cpu_adapter(ctx))
        ctx->timeout_ns = (uint64_t)WGNN__DEFAULT_CPU_TIMEOUT_MS * 1000000u;

    if (wgpuAdapterGetLimits(ctx->adapter, &ctx->limits) != WGPUStatus_Success) {
        st = wgnn__err(ctx, WGNN_ERR_NO_ADAPTER, "could not read the limits of adapter \"%s\"", ctx->info.name);
        goto cleanup;
    }
    ctx->limits.nextInChain = NULL;

    /* Ask for every id either numbering gives these features, among those
     * the adapter offers (an id that means another offered feature is
     * harmless), then keep what the probes show works. */
    WGPUFeatureName feats[6];
    size_t nf = 0;
    const uint32_t *want_ids[3] = {k_timestamp_ids, k_f16_ids, k_subgroups_ids};
    for (int w = 0; w < (o.disable_optional_features ? 1 : 3); w++)
        for (int j = 0; j < 2; j++)
            if (wgpuAdapterHasFeature(ctx->adapter, (WGPUFeatureName)want_ids[w][j]))
                feats[nf++] = (WGPUFeatureName)want_ids[w][j];
    bool keep = o.keep_robustness != 0 || getenv("WGNN_KEEP_ROBUSTNESS") != NULL;
    wgnn__dump_init(ctx);
    st = request_device(ctx, feats, nf, true, keep);
    if (st != WGNN_OK) st = request_device(ctx, feats, nf, false, keep); /* without toggles */
    if (st != WGNN_OK && nf > 0) st = request_device(ctx, NULL, 0, false, keep); /* plain */
    if (st != WGNN_OK) goto cleanup;
    ctx->queue = wgpuDeviceGetQueue(ctx->device);
    wgnn__dump_attach(ctx);
    ctx->has_timestamps = probe_timestamps(ctx);
    ctx->has_f16 = !o.disable_optional_features &&
                   probe_shader(ctx, "enable f16;\n@group(0) @binding(0) var<storage, read_write> b: array<f16>;\n"
                                     "@compute @workgroup_size(1) fn main() { b[0] = b[0] + 1.0h; }\n");
    ctx->has_subgroups = !o.disable_optional_features &&
                         probe_shader(ctx, "enable subgroups;\n@group(0) @binding(0) var<storage, read_write> b: array<f32>;\n"
                                           "@compute @workgroup_size(32) fn main(@builtin(subgroup_invocation_id) i: u32) {"
                                           " b[i] = subgroupAdd(b[i]); }\n");
    read_knobs(&ctx->knobs);
    if (!ctx->poll_ns) ctx->poll_ns = (uint64_t)ctx->knobs.wait_spin_us * 1000u;
    if (ctx->knobs.compute_units == UINT32_MAX) ctx->knobs.compute_units = known_compute_units(&ctx->info);
    st = wgnn__buffer_create(ctx, 16, WGPUBufferUsage_Storage | WGPUBufferUsage_Uniform, "dummy binding",
                             &ctx->dummy);
    if (st == WGNN_OK)
        st = wgnn__buffer_create(ctx, 16, WGPUBufferUsage_Storage, "dummy writable binding", &ctx->dummy_rw);
    if (st == WGNN_OK) /* zero-initialised, as every new buffer */
        st = wgnn__buffer_create(ctx, 16, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst,
                                 "data error flags", &ctx->data_err);
    if (st != WGNN_OK) goto cleanup;
    ctx->err[0] = '\0';

cleanup:
    adapter_set_release(&s);
    return st;
}

void wgnn_context_destroy(wgnn_context *ctx) {
    if (!ctx) return;
    if (ctx->enc) wgpuCommandEncoderRelease(ctx->enc);
    for (size_t b = 0; b < WGNN__PIPE_BUCKETS; b++) {
        for (wgnn__pipe *p = ctx->pipes[b], *next; p; p = next) {
            next = p->next;
            free(p->key);
            if (p->layout) wgpuBindGroupLayoutRelease(p->layout);
            if (p->pipe) wgpuComputePipelineRelease(p->pipe);
            free(p);
        }
    }
    if (ctx->qset) {
        wgpuQuerySetDestroy(ctx->qset);
        wgpuQuerySetRelease(ctx->qset);
    }
    if (ctx->uni) wgpuBufferRelease(ctx->uni);
    for (int i = 0; i < WGNN__SCRATCH_CACHE; i++)
        if (ctx->scratch_cache[i].buf) wgpuBufferRelease(ctx->scratch_cache[i].buf);
    free(ctx->uni_host);
    if (ctx->data_err) wgpuBufferRelease(ctx->data_err);
    if (ctx->dummy) wgpuBufferRelease(ctx->dummy);
    if (ctx->dummy_rw) wgpuBufferRelease(ctx->dummy_rw);
    if (ctx->up) wgpuBufferRelease(ctx->up);
    if (ctx->queue) wgpuQueueRelease(ctx->queue);
    if (ctx->device) {
        wgpuDeviceDestroy(ctx->device);
        wgpuDeviceRelease(ctx->device);
    }
    if (ctx->adapter) wgpuAdapterRelease(ctx->adapter);
    if (ctx->instance) {
        /* Callbacks of waits that timed out fire here, into their parked
         * records, which are freed only afterwards. */
        wgpuInstanceProcessEvents(ctx->instance);
        wgpuInstanceRelease(ctx->instance);
    }
    wgnn__cb_free_list(&ctx->parked);
    free(ctx);
}

void wgnn_context_adapter(const wgnn_context *ctx, wgnn_adapter_info *info) {
    if (!info) return;
    if (ctx) *info = ctx->info;
    else memset(info, 0, sizeof *info); /* no context: zeros, not what the caller's struct held */
}

void wgnn_context_limits(const wgnn_context *ctx, wgnn_limits *l) {
    if (!l) return;
    if (!ctx) {
        memset(l, 0, sizeof *l);
        return;
    }
    const WGPULimits *d = &ctx->limits;
    l->max_buffer_size = d->maxBufferSize;
    l->max_storage_buffer_binding_size = d->maxStorageBufferBindingSize;
    l->max_uniform_buffer_binding_size = d->maxUniformBufferBindingSize;
    l->max_storage_buffers_per_shader_stage = d->maxStorageBuffersPerShaderStage;
    l->max_compute_workgroup_storage_size = d->maxComputeWorkgroupStorageSize;
    l->max_compute_invocations_per_workgroup = d->maxComputeInvocationsPerWorkgroup;
    l->max_compute_workgroup_size_x = d->maxComputeWorkgroupSizeX;
    l->max_compute_workgroup_size_y = d->maxComputeWorkgroupSizeY;
    l->max_compute_workgroup_size_z = d->maxComputeWorkgroupSizeZ;
    l->max_compute_workgroups_per_dimension = d->maxComputeWorkgroupsPerDimension;
    l->min_storage_buffer_offset_alignment = d->minStorageBufferOffsetAlignment;
    l->min_uniform_buffer_offset_alignment = d->minUniformBufferOffsetAlignment;
}

int wgnn_context_has_f16(const wgnn_context *ctx) { return ctx && ctx->has_f16; }
int wgnn_context_has_subgroups(const wgnn_context *ctx) { return ctx && ctx->has_subgroups; }
int wgnn_context_has_timestamps(const wgnn_context *ctx) { return ctx && ctx->has_timestamps; }
uint32_t wgnn_context_compute_units(const wgnn_context *ctx) { return ctx ? ctx->knobs.compute_units : 0; }
