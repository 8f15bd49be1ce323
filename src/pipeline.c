/* pipeline.c - shader modules, compute pipelines (lazy cache), buffers, uniforms. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static WGPUStringView sv(const char *s) {
    WGPUStringView v = {s, s ? strlen(s) : 0};
    return v;
}

wgnn_status wgnn__buffer_create(wgnn_context *ctx, uint64_t size, WGPUBufferUsage usage, const char *what,
                                WGPUBuffer *out) {
    *out = NULL;
    uint64_t padded = (size + 3u) & ~(uint64_t)3u;
    if (padded < size || padded == 0) padded = 4;
    if (padded > ctx->limits.maxBufferSize)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "%s: %llu bytes pass the device's maxBufferSize (%llu bytes)", what,
                         (unsigned long long)size, (unsigned long long)ctx->limits.maxBufferSize);
    WGPUBufferDescriptor d = WGPU_BUFFER_DESCRIPTOR_INIT;
    d.label = sv(what);
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

wgnn_status wgnn__make_uniform(wgnn_context *ctx, const void *data, size_t size, WGPUBuffer *out) {
    *out = NULL;
    WGPUBufferDescriptor d = WGPU_BUFFER_DESCRIPTOR_INIT;
    d.label = sv("uniform params");
    d.size = (size + 15u) & ~(size_t)15u;
    d.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    d.mappedAtCreation = 1;
    WGPUBuffer b = wgpuDeviceCreateBuffer(ctx->device, &d);
    if (!b) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "could not create a uniform buffer");
    void *p = wgpuBufferGetMappedRange(b, 0, d.size);
    if (!p) {
        wgpuBufferRelease(b);
        return wgnn__err(ctx, WGNN_ERR_GPU, "could not map a new uniform buffer");
    }
    memset(p, 0, d.size);
    memcpy(p, data, size);
    wgpuBufferUnmap(b);
    *out = b;
    return WGNN_OK;
}

WGPUBuffer wgnn__make_optional_binding(wgnn_context *ctx, WGPUBuffer buf, bool writable) {
    return buf ? buf : writable ? ctx->dummy_rw : ctx->dummy;
}

/* Compilation messages carry line numbers and the reason; keep the first. */
static void shader_messages(WGPUCompilationInfoRequestStatus status, WGPUCompilationInfo const *info, void *u1,
                            void *u2) {
    (void)u2;
    char *out = u1;
    if (status != WGPUCompilationInfoRequestStatus_Success || !info) return;
    for (size_t i = 0; i < info->messageCount; i++) {
        const WGPUCompilationMessage *m = &info->messages[i];
        if (m->type != WGPUCompilationMessageType_Error) continue;
        char text[512];
        wgnn__strview(text, sizeof text, m->message);
        snprintf(out, 640, "line %llu:%llu: %s", (unsigned long long)m->lineNum, (unsigned long long)m->linePos,
                 text);
        return;
    }
}

wgnn_status wgnn__compile(wgnn_context *ctx, const char *label, const char *wgsl, const wgnn__const *consts,
                          size_t n_consts, WGPUComputePipeline *out) {
    *out = NULL;
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    WGPUShaderSourceWGSL src = WGPU_SHADER_SOURCE_WGSL_INIT;
    src.code = sv(wgsl);
    WGPUShaderModuleDescriptor md = WGPU_SHADER_MODULE_DESCRIPTOR_INIT;
    md.nextInChain = &src.chain;
    md.label = sv(label);

    char what[256];
    snprintf(what, sizeof what, "compiling shader %s", label);
    wgnn__scope_push(ctx);
    WGPUShaderModule mod = wgpuDeviceCreateShaderModule(ctx->device, &md);
    s = wgnn__scope_pop(ctx, what);
    if (s != WGNN_OK) {
        /* Replace Dawn's long multi-line dump by the first error with its line. */
        char first[640] = "";
        if (mod) {
            WGPUCompilationInfoCallbackInfo ci = WGPU_COMPILATION_INFO_CALLBACK_INFO_INIT;
            ci.mode = WGPUCallbackMode_WaitAnyOnly;
            ci.callback = shader_messages;
            ci.userdata1 = first;
            wgnn__wait(ctx, wgpuShaderModuleGetCompilationInfo(mod, ci), what);
            wgpuShaderModuleRelease(mod);
        }
        if (first[0]) wgnn__err(ctx, s, "%s: %s", what, first);
        return s;
    }
    WGPUComputePipelineDescriptor pd = WGPU_COMPUTE_PIPELINE_DESCRIPTOR_INIT;
    pd.label = sv(label);
    pd.layout = NULL; /* layout "auto" */
    pd.compute.module = mod;
    pd.compute.entryPoint = sv("main");
    WGPUConstantEntry ce[16];
    if (n_consts > 16) n_consts = 16;
    for (size_t i = 0; i < n_consts; i++) {
        WGPUConstantEntry e = WGPU_CONSTANT_ENTRY_INIT;
        e.key = sv(consts[i].name);
        e.value = consts[i].value;
        ce[i] = e;
    }
    pd.compute.constantCount = n_consts;
    pd.compute.constants = n_consts ? ce : NULL;
    wgnn__scope_push(ctx);
    WGPUComputePipeline p = wgpuDeviceCreateComputePipeline(ctx->device, &pd);
    snprintf(what, sizeof what, "building pipeline %s", label);
    s = wgnn__scope_pop(ctx, what);
    wgpuShaderModuleRelease(mod);
    if (s != WGNN_OK) {
        if (p) wgpuComputePipelineRelease(p);
        return s;
    }
    *out = p;
    return WGNN_OK;
}

wgnn_status wgnn__make_compute_pipeline(wgnn_context *ctx, const char *kernel, const char *prelude,
                                        const wgnn__const *consts, size_t n_consts, wgnn__pipe_entry **out) {
    *out = NULL;
    char key[2048];
    int len = snprintf(key, sizeof key, "%s|%s", kernel, prelude ? prelude : "");
    for (size_t i = 0; i < n_consts && len > 0 && (size_t)len < sizeof key; i++)
        len += snprintf(key + len, sizeof key - (size_t)len, "|%s=%.17g", consts[i].name, consts[i].value);
    if (n_consts > 16 || len < 0 || (size_t)len >= sizeof key)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "pipeline key for %s too long", kernel);
    for (size_t i = 0; i < ctx->n_pipes; i++) {
        if (strcmp(ctx->pipes[i].key, key) == 0) {
            *out = &ctx->pipes[i];
            return WGNN_OK;
        }
    }
    const char *body = wgnn__shader_source(kernel);
    if (!body) return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "no embedded shader named %s", kernel);

    /* The prelude carries what WGSL needs at shader-creation time (sizes of
     * function-scope arrays); tuned sizes go through override constants. */
    size_t cap = strlen(body) + (prelude ? strlen(prelude) : 0) + 2;
    char *src = malloc(cap);
    if (!src) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory building %s", kernel);
    size_t pos = 0;
    if (prelude) pos += (size_t)snprintf(src + pos, cap - pos, "%s\n", prelude);
    snprintf(src + pos, cap - pos, "%s", body);

    if (ctx->n_pipes == ctx->cap_pipes) {
        size_t nc = ctx->cap_pipes ? ctx->cap_pipes * 2 : 16;
        wgnn__pipe_entry *np = realloc(ctx->pipes, nc * sizeof *np);
        if (!np) {
            free(src);
            return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory caching %s", kernel);
        }
        ctx->pipes = np;
        ctx->cap_pipes = nc;
    }
    WGPUComputePipeline p = NULL;
    wgnn_status s = wgnn__compile(ctx, kernel, src, consts, n_consts, &p);
    free(src);
    if (s != WGNN_OK) return s;
    char *k = strdup(key);
    if (!k) {
        wgpuComputePipelineRelease(p);
        return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory caching %s", kernel);
    }
    wgnn__pipe_entry *e = &ctx->pipes[ctx->n_pipes++];
    e->key = k;
    e->pipe = p;
    e->layout = wgpuComputePipelineGetBindGroupLayout(p, 0);
    *out = e;
    return WGNN_OK;
}
