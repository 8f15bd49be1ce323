/* pipeline.c - shader modules and compute pipelines, built on first use and
 * cached by (kernel, prelude, override constants). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compilation messages carry line numbers and the reason; keep the first. */
static void shader_messages(WGPUCompilationInfoRequestStatus status, WGPUCompilationInfo const *info, void *u1,
                            void *u2) {
    (void)u2;
    wgnn__cb *r = u1;
    r->fired = 1;
    if (status != WGPUCompilationInfoRequestStatus_Success || !info) return;
    for (size_t i = 0; i < info->messageCount; i++) {
        const WGPUCompilationMessage *m = &info->messages[i];
        if (m->type != WGPUCompilationMessageType_Error) continue;
        char text[768];
        wgnn__strview(text, sizeof text, m->message);
        snprintf(r->msg, sizeof r->msg, "line %llu:%llu: %s", (unsigned long long)m->lineNum,
                 (unsigned long long)m->linePos, text);
        return;
    }
}

wgnn_status wgnn__compile(wgnn_context *ctx, const char *label, const char *wgsl, const wgnn__const *consts,
                          size_t n_consts, WGPUComputePipeline *out) {
    *out = NULL;
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    WGPUShaderSourceWGSL src = WGPU_SHADER_SOURCE_WGSL_INIT;
    src.code = wgnn__sv(wgsl);
    WGPUShaderModuleDescriptor md = WGPU_SHADER_MODULE_DESCRIPTOR_INIT;
    md.nextInChain = &src.chain;
    md.label = wgnn__sv(label);

    char what[256];
    snprintf(what, sizeof what, "compiling shader %s", label);
    wgnn__dump_begin(ctx, label, consts, n_consts);
    wgnn__scope_push(ctx);
    WGPUShaderModule mod = wgpuDeviceCreateShaderModule(ctx->device, &md);
    s = wgnn__scope_pop(ctx, what);
    if (s != WGNN_OK) {
        wgnn__dump_end(ctx);
        /* Replace Dawn's long multi-line dump by the first error with its line. */
        if (mod) {
            wgnn__cb *r = wgnn__cb_new();
            if (r) {
                WGPUCompilationInfoCallbackInfo ci = WGPU_COMPILATION_INFO_CALLBACK_INFO_INIT;
                ci.mode = WGPUCallbackMode_WaitAnyOnly;
                ci.callback = shader_messages;
                ci.userdata1 = r;
                char saved[WGNN__ERR_LEN];
                memcpy(saved, ctx->err, sizeof saved);
                if (wgnn__cb_wait(ctx, wgpuShaderModuleGetCompilationInfo(mod, ci), r, what) == WGNN_OK) {
                    if (r->msg[0]) wgnn__err(ctx, s, "%s: %s", what, r->msg);
                    else memcpy(ctx->err, saved, sizeof saved);
                    wgnn__cb_free(r);
                }
            }
            wgpuShaderModuleRelease(mod);
        }
        return s;
    }
    WGPUConstantEntry *ce = NULL;
    if (n_consts) {
        ce = calloc(n_consts, sizeof *ce);
        if (!ce) {
            wgnn__dump_end(ctx);
            wgpuShaderModuleRelease(mod);
            return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "building pipeline %s: out of host memory", label);
        }
    }
    for (size_t i = 0; i < n_consts; i++) {
        WGPUConstantEntry e = WGPU_CONSTANT_ENTRY_INIT;
        e.key = wgnn__sv(consts[i].name);
        e.value = consts[i].value;
        ce[i] = e;
    }
    WGPUComputePipelineDescriptor pd = WGPU_COMPUTE_PIPELINE_DESCRIPTOR_INIT;
    pd.label = wgnn__sv(label);
    pd.layout = NULL; /* layout "auto" */
    pd.compute.module = mod;
    pd.compute.entryPoint = wgnn__sv("main");
    pd.compute.constantCount = n_consts;
    pd.compute.constants = ce;
    wgnn__scope_push(ctx);
    WGPUComputePipeline p = wgpuDeviceCreateComputePipeline(ctx->device, &pd);
    wgnn__dump_end(ctx);
    snprintf(what, sizeof what, "building pipeline %s", label);
    s = wgnn__scope_pop(ctx, what);
    free(ce);
    wgpuShaderModuleRelease(mod);
    if (s != WGNN_OK) {
        if (p) wgpuComputePipelineRelease(p);
        return s;
    }
    *out = p;
    return WGNN_OK;
}

/* ---- source assembly ------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + n + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* Appends src with its `#include "NAME"` lines replaced by the embedded
 * shaders NAME (nested up to depth 4). Returns the name it could not find. */
static const char *expand(sbuf *b, const char *src, int depth) {
    const char *line = src;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, "#include \"", 10) == 0) {
            const char *q = memchr(line + 10, '"', len - 10);
            char name[128];
            size_t nl = q ? (size_t)(q - (line + 10)) : 0;
            if (!q || nl == 0 || nl >= sizeof name || depth >= 4) return "(malformed #include)";
            memcpy(name, line + 10, nl);
            name[nl] = '\0';
            const char *inc = wgnn__shader_source(name);
            if (!inc) return line + 10;
            const char *bad = expand(b, inc, depth + 1);
            if (bad) return bad;
            sb_put(b, "\n", 1);
        } else {
            sb_put(b, line, len);
        }
        line += len;
    }
    return NULL;
}

/* ---- cache ---------------------------------------------------------------- */

static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

size_t wgnn__pipeline_count(const wgnn_context *ctx) {
    size_t n = 0;
    for (size_t b = 0; b < WGNN__PIPE_BUCKETS; b++)
        for (const wgnn__pipe *p = ctx->pipes[b]; p; p = p->next) n++;
    return n;
}

wgnn_status wgnn__pipeline(wgnn_context *ctx, const char *kernel, const char *prelude, const wgnn__const *consts,
                           size_t n_consts, const wgnn__pipe **out) {
    *out = NULL;
    sbuf key = {0};
    sb_put(&key, kernel, strlen(kernel));
    sb_put(&key, "|", 1);
    if (prelude) sb_put(&key, prelude, strlen(prelude));
    for (size_t i = 0; i < n_consts; i++) {
        char c[160];
        int n = snprintf(c, sizeof c, "|%s=%.17g", consts[i].name, consts[i].value);
        sb_put(&key, c, (size_t)n < sizeof c ? (size_t)n : sizeof c - 1);
    }
    if (key.oom) {
        free(key.p);
        return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory looking up pipeline %s", kernel);
    }
    uint64_t h = fnv1a(key.p);
    wgnn__pipe **bucket = &ctx->pipes[h % WGNN__PIPE_BUCKETS];
    for (wgnn__pipe *p = *bucket; p; p = p->next) {
        if (p->hash == h && strcmp(p->key, key.p) == 0) {
            free(key.p);
            *out = p;
            return WGNN_OK;
        }
    }
    const char *body = wgnn__shader_source(kernel);
    if (!body) {
        free(key.p);
        return wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "no embedded shader named %s", kernel);
    }
    sbuf src = {0};
    const char *bad = NULL;
    if (prelude) { /* a prelude may #include too (rope.c's common/data_err) */
        bad = expand(&src, prelude, 0);
        sb_put(&src, "\n", 1);
    }
    if (!bad) bad = expand(&src, body, 0);
    wgnn_status s = WGNN_OK;
    if (bad) s = wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "shader %s: cannot include %.60s", kernel, bad);
    else if (src.oom) s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory building %s", kernel);
    WGPUComputePipeline pipe = NULL;
    if (s == WGNN_OK) s = wgnn__compile(ctx, kernel, src.p, consts, n_consts, &pipe);
    free(src.p);
    wgnn__pipe *e = NULL;
    if (s == WGNN_OK && !(e = calloc(1, sizeof *e)))
        s = wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "out of host memory caching %s", kernel);
    if (s != WGNN_OK) {
        if (pipe) wgpuComputePipelineRelease(pipe);
        free(key.p);
        return s;
    }
    e->hash = h;
    e->key = key.p;
    e->pipe = pipe;
    e->layout = wgpuComputePipelineGetBindGroupLayout(pipe, 0);
    e->next = *bucket;
    *bucket = e;
    *out = e;
    return WGNN_OK;
}
