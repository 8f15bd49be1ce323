/* shader_dump.c - WGNN_DUMP_SHADERS=DIR: every pipeline's WGSL and the
 * SPIR-V Dawn made of it, written to DIR for bench/kernel_stats/ (registers
 * and code size per kernel). Off unless the variable is set; nothing is
 * printed either way.
 *
 * Dawn's device toggle dump_shaders hands the WGSL of each shader module
 * and the SPIR-V disassembly of each compute pipeline (override constants
 * already substituted) to the device's logging callback, synchronously
 * inside wgpuDeviceCreateShaderModule / wgpuDeviceCreateComputePipeline.
 * wgnn__compile names the pipeline being built just before, so the callback
 * knows whose text it got. Files: DIR/NNN_label.wgsl, DIR/NNN_label.spvasm
 * and one line per pipeline in DIR/index.tsv (NNN, label, override
 * constants). */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool wgnn__dump_init(wgnn_context *ctx) {
    const char *dir = getenv("WGNN_DUMP_SHADERS");
    if (!dir || !*dir || strlen(dir) >= sizeof ctx->dump_dir) return false;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return false;
    snprintf(ctx->dump_dir, sizeof ctx->dump_dir, "%s", dir);
    return true;
}

/* "sdpa_fused" -> itself; anything but [A-Za-z0-9_] becomes '_' (labels
 * such as "feature probe"). */
static void file_name(const wgnn_context *ctx, const char *ext, char *out, size_t n) {
    char lab[64];
    size_t i = 0;
    for (const char *s = ctx->dump_label; *s && i + 1 < sizeof lab; s++, i++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        lab[i] = ok ? c : '_';
    }
    lab[i] = '\0';
    snprintf(out, n, "%s/%03u_%s.%s", ctx->dump_dir, ctx->dump_seq, lab, ext);
}

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(text, 1, len, f);
    fclose(f);
}

static void on_log(WGPULoggingType type, WGPUStringView message, void *u1, void *u2) {
    (void)type;
    (void)u2;
    wgnn_context *ctx = u1;
    if (!message.data) return;
    size_t len = message.length == WGPU_STRLEN ? strlen(message.data) : message.length;
    static const char wgsl[] = "// Dumped WGSL", spirv[] = "/* Dumped generated SPIRV";
    const char *ext = NULL;
    if (len >= sizeof wgsl - 1 && memcmp(message.data, wgsl, sizeof wgsl - 1) == 0) ext = "wgsl";
    else if (len >= sizeof spirv - 1 && memcmp(message.data, spirv, sizeof spirv - 1) == 0) ext = "spvasm";
    if (!ext || !ctx->dump_label) return; /* Dawn's own shaders (timestamp resolve) come later */
    /* drop Dawn's heading line: the rest is WGSL, or SPIR-V assembly */
    const char *nl = memchr(message.data, '\n', len);
    size_t skip = nl ? (size_t)(nl - message.data) + 1 : len;
    char path[sizeof ctx->dump_dir + 96];
    file_name(ctx, ext, path, sizeof path);
    write_file(path, message.data + skip, len - skip);
}

void wgnn__dump_attach(wgnn_context *ctx) {
    if (!ctx->dump_dir[0] || !ctx->device) return;
    WGPULoggingCallbackInfo li = WGPU_LOGGING_CALLBACK_INFO_INIT;
    li.callback = on_log;
    li.userdata1 = ctx;
    wgpuDeviceSetLoggingCallback(ctx->device, li);
}

void wgnn__dump_end(wgnn_context *ctx) { ctx->dump_label = NULL; }

void wgnn__dump_begin(wgnn_context *ctx, const char *label, const wgnn__const *consts, size_t n_consts) {
    if (!ctx->dump_dir[0]) return;
    ctx->dump_seq++;
    ctx->dump_label = label;
    char path[sizeof ctx->dump_dir + 16];
    snprintf(path, sizeof path, "%s/index.tsv", ctx->dump_dir);
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%03u\t%s\t", ctx->dump_seq, label);
    for (size_t i = 0; i < n_consts; i++) fprintf(f, "%s%s=%.17g", i ? " " : "", consts[i].name, consts[i].value);
    fprintf(f, "\n");
    fclose(f);
}
