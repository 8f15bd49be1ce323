/* kstat - what the Vulkan driver's compiler made of wgnn's kernels:
 * registers, code size, shared memory, spills, as the driver reports them
 * through VK_KHR_pipeline_executable_properties (NVIDIA's does; Dawn does
 * not pass them on).
 *
 *   kstat [--robust] [--device NAME] [--ir OUTDIR] DIR | FILE.spvasm ...
 *
 * DIR is what `WGNN_DUMP_SHADERS=DIR wgnn ...` wrote (src/gpu/shader_dump.c):
 * NNN_label.spvasm (the SPIR-V assembly Dawn generated for each pipeline,
 * override constants substituted), NNN_label.wgsl and index.tsv. Each module
 * is assembled with the SPIR-V assembler inside Dawn's library (exported by
 * libwebgpu_wrapper.so, found through the rpath or LD_LIBRARY_PATH),
 * compiled by the first Vulkan device (or the one whose name contains NAME)
 * with statistics capture, and reported as one tab-separated line:
 *
 *   seq  label  constants  workgroup  executable  stat=value; ...
 *
 * constants are the pipeline's override constants (index.tsv) and the
 * WGSL's `const X: u32 = Nu;` and `const X: bool = ...;` lines (the
 * prelude's tile sizes and switches, 1 for true).
 * Robust buffer access is off, as wgnn asks of Dawn (disable_robustness);
 * --robust turns it on. Exit status: 0 done, 1 error, 3 the driver reports
 * no statistics (lavapipe: every pipeline is still assembled and built, which
 * checks the dump and the layout, and its line says so).
 * --ir OUTDIR also asks for the driver's internal representations of each
 * executable (whatever the driver offers: an IR or machine code, as text or
 * bytes) and writes each to OUTDIR/NNN_label.eE.rR.txt (or .bin), with one
 * line on standard error naming it. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

/* The SPIR-V Tools C API that Dawn's library exports (libspirv.h). */
typedef struct spv_binary_t {
    uint32_t *code;
    size_t wordCount;
} spv_binary_t;
typedef struct spv_diagnostic_t {
    struct {
        size_t line, column, index;
    } position;
    char *error;
    bool isTextSource;
} spv_diagnostic_t;
enum { SPV_ENV_UNIVERSAL_1_0 = 0, SPV_ENV_UNIVERSAL_1_3 = 17, SPV_ENV_UNIVERSAL_1_4 = 20, SPV_ENV_UNIVERSAL_1_5 = 22,
       SPV_ENV_UNIVERSAL_1_6 = 24 };
static struct {
    void *(*context_create)(int env);
    void (*context_destroy)(void *ctx);
    int (*text_to_binary)(const void *ctx, const char *text, size_t len, spv_binary_t **bin, spv_diagnostic_t **diag);
    void (*binary_destroy)(spv_binary_t *bin);
    void (*diagnostic_destroy)(spv_diagnostic_t *diag);
} spv;

static bool load_spirv_tools(void) {
    void *h = dlopen("libwebgpu_wrapper.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "kstat: cannot load Dawn's libwebgpu_wrapper.so (%s): set LD_LIBRARY_PATH=deps/dawn/lib\n",
                dlerror());
        return false;
    }
    *(void **)&spv.context_create = dlsym(h, "spvContextCreate");
    *(void **)&spv.context_destroy = dlsym(h, "spvContextDestroy");
    *(void **)&spv.text_to_binary = dlsym(h, "spvTextToBinary");
    *(void **)&spv.binary_destroy = dlsym(h, "spvBinaryDestroy");
    *(void **)&spv.diagnostic_destroy = dlsym(h, "spvDiagnosticDestroy");
    if (!spv.context_create || !spv.context_destroy || !spv.text_to_binary || !spv.binary_destroy ||
        !spv.diagnostic_destroy) {
        fprintf(stderr, "kstat: this libwebgpu_wrapper.so does not export the SPIR-V assembler (spvTextToBinary)\n");
        return false;
    }
    return true;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)))
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The text's "; Version: 1.N" header picks the SPIR-V version to emit. */
static int target_env(const char *text) {
    const char *v = strstr(text, "; Version: 1.");
    int minor = v ? atoi(v + 13) : 3;
    switch (minor) {
    case 0: return SPV_ENV_UNIVERSAL_1_0;
    case 4: return SPV_ENV_UNIVERSAL_1_4;
    case 5: return SPV_ENV_UNIVERSAL_1_5;
    case 6: return SPV_ENV_UNIVERSAL_1_6;
    default: return SPV_ENV_UNIVERSAL_1_3;
    }
}

/* ---- what the pipeline layout needs, read from the SPIR-V binary ---------- */

typedef struct module_info {
    char entry[64];
    uint32_t local[3];
    uint32_t n_bind;
    uint32_t binding[16];
    VkDescriptorType type[16];
} module_info;

static bool parse_module(const uint32_t *w, size_t n, module_info *mi, char *err, size_t err_len) {
    enum { OpEntryPoint = 15, OpExecutionMode = 16, OpVariable = 59, OpDecorate = 71 };
    enum { DecBinding = 33, ModeLocalSize = 17, ScUniform = 2, ScStorageBuffer = 12 };
    uint32_t bind_id[64], bind_no[64], nb = 0;
    uint32_t var_id[64], var_sc[64], nv = 0;
    memset(mi, 0, sizeof *mi);
    if (n < 5 || w[0] != 0x07230203u) {
        snprintf(err, err_len, "not a SPIR-V binary");
        return false;
    }
    for (size_t i = 5; i < n;) {
        uint32_t len = w[i] >> 16, op = w[i] & 0xffffu;
        if (len == 0 || i + len > n) {
            snprintf(err, err_len, "truncated instruction at word %zu", i);
            return false;
        }
        if (op == OpEntryPoint && len > 3 && !mi->entry[0])
            snprintf(mi->entry, sizeof mi->entry, "%.*s", (int)((len - 3) * 4), (const char *)&w[i + 3]);
        if (op == OpExecutionMode && len >= 6 && w[i + 2] == ModeLocalSize)
            for (int k = 0; k < 3; k++) mi->local[k] = w[i + 3 + k];
        if (op == OpDecorate && len >= 4 && w[i + 2] == DecBinding && nb < 64) {
            bind_id[nb] = w[i + 1];
            bind_no[nb++] = w[i + 3];
        }
        if (op == OpVariable && len >= 4 && nv < 64) {
            var_id[nv] = w[i + 2];
            var_sc[nv++] = w[i + 3];
        }
        i += len;
    }
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t v = 0; v < nv; v++) {
            if (var_id[v] != bind_id[b]) continue;
            if (var_sc[v] != ScUniform && var_sc[v] != ScStorageBuffer) continue;
            if (mi->n_bind == 16) break;
            mi->binding[mi->n_bind] = bind_no[b];
            mi->type[mi->n_bind++] =
                var_sc[v] == ScUniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        }
    if (!mi->entry[0]) {
        snprintf(err, err_len, "no OpEntryPoint");
        return false;
    }
    return true;
}

/* ---- Vulkan --------------------------------------------------------------- */

typedef struct vk {
    VkInstance inst;
    VkPhysicalDevice pd;
    VkDevice dev;
    PFN_vkGetPipelineExecutablePropertiesKHR props;
    PFN_vkGetPipelineExecutableStatisticsKHR stats;
    PFN_vkGetPipelineExecutableInternalRepresentationsKHR irs;
    const char *ir_dir; /* --ir: where the internal representations go (NULL: not asked) */
    bool has_stats; /* false: pipelines are still built (the dump is checked), no numbers */
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
} vk;

static bool has_extension(VkPhysicalDevice pd, const char *ext) {
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS) return false;
    VkExtensionProperties *e = calloc(n ? n : 1, sizeof *e);
    bool found = false;
    if (e && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++) found = strcmp(e[i].extensionName, ext) == 0;
    free(e);
    return found;
}

/* 0 ready (v->has_stats: whether the driver reports statistics), 1 error. */
static int vk_open(vk *v, const char *want, bool robust) {
    VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO};
    ai.pApplicationName = "wgnn kstat";
    ai.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &ai;
    VkResult r = vkCreateInstance(&ici, NULL, &v->inst);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "kstat: vkCreateInstance failed (%d): no Vulkan driver? (VK_DRIVER_FILES)\n", r);
        return 1;
    }
    uint32_t n = 16;
    VkPhysicalDevice pds[16];
    r = vkEnumeratePhysicalDevices(v->inst, &n, pds);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
        fprintf(stderr, "kstat: no Vulkan device\n");
        return 1;
    }
    v->pd = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties pp;
    for (uint32_t i = 0; i < n && !v->pd; i++) {
        vkGetPhysicalDeviceProperties(pds[i], &pp);
        if (!want || strstr(pp.deviceName, want)) v->pd = pds[i];
    }
    if (!v->pd) {
        fprintf(stderr, "kstat: no Vulkan device named like \"%s\"\n", want);
        return 1;
    }
    vkGetPhysicalDeviceProperties(v->pd, &pp);
    snprintf(v->name, sizeof v->name, "%s", pp.deviceName);
    if (pp.apiVersion < VK_API_VERSION_1_2) {
        fprintf(stderr, "kstat: %s offers Vulkan %u.%u; kstat needs 1.2\n", v->name, VK_API_VERSION_MAJOR(pp.apiVersion),
                VK_API_VERSION_MINOR(pp.apiVersion));
        return 1;
    }
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    v->has_stats = has_extension(v->pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    /* Every core feature the device has (the shaders may use any Dawn
     * enabled), robustness as asked. */
    bool v13 = pp.apiVersion >= VK_API_VERSION_1_3;
    VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f11;
    f11.pNext = &f12;
    f12.pNext = v13 ? (void *)&f13 : v->has_stats ? (void *)&pef : NULL;
    f13.pNext = v->has_stats ? &pef : NULL;
    vkGetPhysicalDeviceFeatures2(v->pd, &f2);
    v->has_stats = v->has_stats && pef.pipelineExecutableInfo;
    pef.pipelineExecutableInfo = v->has_stats;
    f2.features.robustBufferAccess = robust ? f2.features.robustBufferAccess : VK_FALSE;
    if (v13) f13.robustImageAccess = VK_FALSE;
    uint32_t qf_n = 8;
    VkQueueFamilyProperties qf[8];
    vkGetPhysicalDeviceQueueFamilyProperties(v->pd, &qf_n, qf);
    uint32_t qfi = 0;
    for (uint32_t i = 0; i < qf_n; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            qfi = i;
            break;
        }
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = qfi;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    const char *ext[] = {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = v->has_stats ? 1 : 0;
    dci.ppEnabledExtensionNames = ext;
    r = vkCreateDevice(v->pd, &dci, NULL, &v->dev);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "kstat: vkCreateDevice on %s failed (%d)\n", v->name, r);
        return 1;
    }
    v->props = (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(v->dev, "vkGetPipelineExecutablePropertiesKHR");
    v->stats = (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(v->dev, "vkGetPipelineExecutableStatisticsKHR");
    v->irs = (PFN_vkGetPipelineExecutableInternalRepresentationsKHR)vkGetDeviceProcAddr(
        v->dev, "vkGetPipelineExecutableInternalRepresentationsKHR");
    if (v->has_stats && (!v->props || !v->stats)) {
        fprintf(stderr, "kstat: %s lacks the vkGetPipelineExecutable*KHR entry points\n", v->name);
        return 1;
    }
    return 0;
}

static void vk_close(vk *v) {
    if (v->dev) vkDestroyDevice(v->dev, NULL);
    if (v->inst) vkDestroyInstance(v->inst, NULL);
}

static void print_stat(const VkPipelineExecutableStatisticKHR *s) {
    printf("%s=", s->name);
    switch (s->format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: printf("%u", s->value.b32); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: printf("%lld", (long long)s->value.i64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: printf("%llu", (unsigned long long)s->value.u64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: printf("%g", s->value.f64); break;
    default: printf("?");
    }
    printf("; ");
}

/* --ir: every internal representation the driver keeps for executable e,
 * one file each; problems go to standard error (the statistics still count). */
static void write_irs(vk *v, const VkPipelineExecutableInfoKHR *ei, const char *seq, const char *label, uint32_t e) {
    uint32_t n = 0;
    VkResult r = v->irs(v->dev, ei, &n, NULL);
    if (r != VK_SUCCESS || n == 0) {
        fprintf(stderr, "kstat: %s %s executable %u: no internal representations (%d)\n", seq, label, e, r);
        return;
    }
    if (n > 8) n = 8;
    VkPipelineExecutableInternalRepresentationKHR ir[8];
    memset(ir, 0, sizeof ir);
    for (uint32_t i = 0; i < n; i++) ir[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
    if ((r = v->irs(v->dev, ei, &n, ir)) != VK_SUCCESS && r != VK_INCOMPLETE) goto fail;
    for (uint32_t i = 0; i < n; i++) {
        ir[i].pData = ir[i].dataSize ? malloc(ir[i].dataSize) : NULL;
        if (ir[i].dataSize && !ir[i].pData) goto fail;
    }
    r = v->irs(v->dev, ei, &n, ir);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) goto fail;
    for (uint32_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s_%s.e%u.r%u.%s", v->ir_dir, seq, label, e, i, ir[i].isText ? "txt" : "bin");
        FILE *f = fopen(path, "wb");
        size_t len = ir[i].dataSize;
        if (ir[i].isText && len && ((const char *)ir[i].pData)[len - 1] == '\0') len--;
        bool ok = f && fwrite(ir[i].pData, 1, len, f) == len;
        if (f && fclose(f) != 0) ok = false;
        fprintf(stderr, "kstat: %s %s executable %u: \"%s\" (%s), %zu bytes%s -> %s%s\n", seq, label, e, ir[i].name,
                ir[i].description, ir[i].dataSize, ir[i].isText ? " text" : "", path, ok ? "" : " (write failed)");
    }
    goto done;
fail:
    fprintf(stderr, "kstat: %s %s executable %u: reading the internal representations failed (%d)\n", seq, label, e, r);
done:
    for (uint32_t i = 0; i < n; i++) free(ir[i].pData);
}

/* Compiles one module and prints its line(s); false on error (reported). */
static bool stat_module(vk *v, const uint32_t *code, size_t words, const char *seq, const char *label,
                        const char *consts) {
    module_info mi;
    char err[128];
    if (!parse_module(code, words, &mi, err, sizeof err)) {
        fprintf(stderr, "kstat: %s %s: %s\n", seq, label, err);
        return false;
    }
    VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words * 4;
    smci.pCode = code;
    VkShaderModule sm = VK_NULL_HANDLE;
    VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
    VkPipelineLayout lay = VK_NULL_HANDLE;
    VkPipeline pipe = VK_NULL_HANDLE;
    VkDescriptorSetLayoutBinding b[16];
    bool ok = false;
    VkResult r = vkCreateShaderModule(v->dev, &smci, NULL, &sm);
    if (r != VK_SUCCESS) goto cleanup;
    for (uint32_t i = 0; i < mi.n_bind; i++) {
        memset(&b[i], 0, sizeof b[i]);
        b[i].binding = mi.binding[i];
        b[i].descriptorType = mi.type[i];
        b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dl.bindingCount = mi.n_bind;
    dl.pBindings = b;
    if ((r = vkCreateDescriptorSetLayout(v->dev, &dl, NULL, &dsl)) != VK_SUCCESS) goto cleanup;
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &dsl;
    if ((r = vkCreatePipelineLayout(v->dev, &pl, NULL, &lay)) != VK_SUCCESS) goto cleanup;
    VkComputePipelineCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.flags = v->has_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0;
    if (v->has_stats && v->ir_dir && v->irs) cp.flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
    cp.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = sm;
    cp.stage.pName = mi.entry;
    cp.layout = lay;
    if ((r = vkCreateComputePipelines(v->dev, VK_NULL_HANDLE, 1, &cp, NULL, &pipe)) != VK_SUCCESS) goto cleanup;
    if (!v->has_stats) {
        printf("%s\t%s\t%s\t%ux%ux%u\t-\tpipeline built; no statistics from this driver\n", seq, label, consts,
               mi.local[0], mi.local[1], mi.local[2]);
        ok = true;
        goto cleanup;
    }
    VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pi.pipeline = pipe;
    uint32_t ne = 0;
    if ((r = v->props(v->dev, &pi, &ne, NULL)) != VK_SUCCESS) goto cleanup;
    VkPipelineExecutablePropertiesKHR ep[8];
    if (ne > 8) ne = 8;
    for (uint32_t i = 0; i < ne; i++) {
        memset(&ep[i], 0, sizeof ep[i]);
        ep[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR;
    }
    if ((r = v->props(v->dev, &pi, &ne, ep)) != VK_SUCCESS && r != VK_INCOMPLETE) goto cleanup;
    for (uint32_t e = 0; e < ne; e++) {
        VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
        ei.pipeline = pipe;
        ei.executableIndex = e;
        uint32_t ns = 0;
        if ((r = v->stats(v->dev, &ei, &ns, NULL)) != VK_SUCCESS) goto cleanup;
        VkPipelineExecutableStatisticKHR st[64];
        if (ns > 64) ns = 64;
        for (uint32_t i = 0; i < ns; i++) {
            memset(&st[i], 0, sizeof st[i]);
            st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
        }
        if ((r = v->stats(v->dev, &ei, &ns, st)) != VK_SUCCESS && r != VK_INCOMPLETE) goto cleanup;
        printf("%s\t%s\t%s\t%ux%ux%u\t%s (subgroup %u)\t", seq, label, consts, mi.local[0], mi.local[1], mi.local[2],
               ep[e].name, ep[e].subgroupSize);
        for (uint32_t i = 0; i < ns; i++) print_stat(&st[i]);
        printf("\n");
        if (v->ir_dir && v->irs) write_irs(v, &ei, seq, label, e);
    }
    ok = true;
cleanup:
    if (!ok) fprintf(stderr, "kstat: %s %s: Vulkan call failed (%d)\n", seq, label, r);
    if (pipe) vkDestroyPipeline(v->dev, pipe, NULL);
    if (lay) vkDestroyPipelineLayout(v->dev, lay, NULL);
    if (dsl) vkDestroyDescriptorSetLayout(v->dev, dsl, NULL);
    if (sm) vkDestroyShaderModule(v->dev, sm, NULL);
    return ok;
}

/* ---- one dump file -------------------------------------------------------- */

/* index.tsv's constants for seq, then the WGSL's `const X: u32 = Nu;` lines. */
static void constants_of(const char *dir, const char *seq, const char *wgsl_path, char *out, size_t n) {
    out[0] = '\0';
    size_t used = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/index.tsv", dir);
    char *idx = dir[0] ? read_text(path) : NULL;
    for (char *line = idx ? strtok(idx, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        if (strncmp(line, seq, strlen(seq)) != 0 || line[strlen(seq)] != '\t') continue;
        char *c = strchr(line + strlen(seq) + 1, '\t');
        if (c) used += (size_t)snprintf(out + used, n - used, "%s", c + 1);
        break;
    }
    free(idx);
    char *w = read_text(wgsl_path);
    for (char *line = w ? strtok(w, "\n") : NULL; line && used + 1 < n; line = strtok(NULL, "\n")) {
        char name[32];
        unsigned val;
        char tail[4];
        char word[8];
        if (sscanf(line, "const %31[A-Za-z0-9_]: u32 = %u%3s", name, &val, tail) == 3 && strcmp(tail, "u;") == 0)
            used += (size_t)snprintf(out + used, n - used, "%s%s=%u", used ? " " : "", name, val);
        else if (sscanf(line, "const %31[A-Za-z0-9_]: bool = %7[a-z];", name, word) == 2)
            used += (size_t)snprintf(out + used, n - used, "%s%s=%d", used ? " " : "", name, strcmp(word, "true") == 0);
        if (used >= n) used = n - 1;
    }
    free(w);
}

static bool stat_file(vk *v, const char *dir, const char *path) {
    char *text = read_text(path);
    if (!text) {
        fprintf(stderr, "kstat: cannot read %s\n", path);
        return false;
    }
    /* seq and label from NNN_label.spvasm */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char seq[16] = "-", label[128];
    snprintf(label, sizeof label, "%s", base);
    char *dot = strrchr(label, '.');
    if (dot) *dot = '\0';
    char *us = strchr(label, '_');
    if (us && us - label < (long)sizeof seq) {
        snprintf(seq, sizeof seq, "%.*s", (int)(us - label), label);
        memmove(label, us + 1, strlen(us + 1) + 1);
    }
    char wgsl[4096], consts[2048];
    snprintf(wgsl, sizeof wgsl, "%.*s.wgsl", (int)(strlen(path) - (dot ? strlen(strrchr(path, '.')) : 0)), path);
    constants_of(dir, seq, wgsl, consts, sizeof consts);

    void *sc = spv.context_create(target_env(text));
    spv_binary_t *bin = NULL;
    spv_diagnostic_t *diag = NULL;
    int rc = sc ? spv.text_to_binary(sc, text, strlen(text), &bin, &diag) : -1;
    bool ok = false;
    if (rc != 0 || !bin) {
        fprintf(stderr, "kstat: assembling %s failed: %s (line %zu)\n", path, diag && diag->error ? diag->error : "?",
                diag ? diag->position.line + 1 : 0);
    } else {
        ok = stat_module(v, bin->code, bin->wordCount, seq, label, consts);
    }
    if (bin) spv.binary_destroy(bin);
    if (diag) spv.diagnostic_destroy(diag);
    if (sc) spv.context_destroy(sc);
    free(text);
    return ok;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
    bool robust = false;
    const char *want = NULL, *ir_dir = NULL;
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--robust")) robust = true;
        else if (!strcmp(argv[first], "--device") && first + 1 < argc) want = argv[++first];
        else if (!strcmp(argv[first], "--ir") && first + 1 < argc) ir_dir = argv[++first];
        else break;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: kstat [--robust] [--device NAME] [--ir OUTDIR] DIR | FILE.spvasm ...\n"
                        "  DIR: what WGNN_DUMP_SHADERS=DIR wgnn ... wrote; one tab-separated line per pipeline:\n"
                        "  seq, label, constants, workgroup size, executable, the driver's statistics\n");
        return 1;
    }
    if (!load_spirv_tools()) return 1;
    vk v = {0};
    v.ir_dir = ir_dir;
    int rc = vk_open(&v, want, robust);
    if (rc != 0) {
        vk_close(&v);
        return rc;
    }
    printf("# device: %s; robust buffer access %s\n", v.name, robust ? "on" : "off");
    if (!v.has_stats)
        printf("# %s has no %s: its driver reports no compiler statistics; the pipelines are still built\n", v.name,
               VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    printf("# seq\tlabel\tconstants\tworkgroup\texecutable\tstatistics\n");
    bool all_ok = true;
    for (int a = first; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            all_ok &= stat_file(&v, "", argv[a]);
            continue;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        for (struct dirent *e; (e = readdir(d));) {
            size_t l = strlen(e->d_name);
            if (l < 8 || strcmp(e->d_name + l - 7, ".spvasm") != 0) continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                char **nn = realloc(names, cap * sizeof *nn);
                if (!nn) break;
                names = nn;
            }
            names[n++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmp_str);
        for (size_t i = 0; i < n; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], names[i]);
            all_ok &= stat_file(&v, argv[a], path);
            free(names[i]);
        }
        free(names);
        if (n == 0) {
            fprintf(stderr, "kstat: no .spvasm files in %s (was it written by WGNN_DUMP_SHADERS=%s wgnn ...?)\n", argv[a],
                    argv[a]);
            all_ok = false;
        }
    }
    bool stats = v.has_stats;
    vk_close(&v);
    return !all_ok ? 1 : stats ? 0 : 3;
}
