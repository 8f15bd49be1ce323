/* cmd_info.c - `wgnn info`: the adapters, then the chosen one's limits and features. */
#include "args.h"
#include "commands.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

const char k_usage_info[] =
    "usage: wgnn [global options] info\n"
    "  lists every adapter, then creates a context (honouring --adapter) and prints\n"
    "  the chosen adapter, the device's limits and its enabled features\n";

static void print_adapter(size_t idx, const wgnn_adapter_info *a) {
    printf("  [%zu] %s\n", idx, a->name);
    printf("      backend %s, type %s, vendor 0x%04x (%s), device 0x%04x\n", a->backend, a->type, a->vendor_id,
           a->vendor[0] ? a->vendor : "?", a->device_id);
    printf("      driver: %s\n", a->description[0] ? a->description : "?");
    printf("      subgroup sizes: %u..%u\n", a->subgroup_min_size, a->subgroup_max_size);
    printf("      features offered:%s%s%s%s\n", a->has_shader_f16 ? " shader-f16" : "",
           a->has_subgroups ? " subgroups" : "", a->has_timestamp_query ? " timestamp-query" : "",
           a->has_shader_f16 || a->has_subgroups || a->has_timestamp_query ? "" : " (none)");
}

/* "N bytes (X GiB)", in the largest unit that keeps X >= 1 */
static void print_bytes(const char *name, uint64_t b) {
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double x = (double)b / 1024.0;
    size_t u = 0;
    while (x >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        x /= 1024.0;
        u++;
    }
    printf("  %-40s %" PRIu64 " bytes (%.2f %s)\n", name, b, x, units[u]);
}

int cmd_info(const global_opts *g, int argc, char **argv) {
    char err[ERR_LEN] = "";
    wgnn_adapter_info fixed[16], *infos = fixed;
    size_t count = 0;
    wgnn_context *ctx = NULL;
    int rc = CLI_OK;
    parse_result pr = parse_opts("info", k_usage_info, NULL, 0, argc, argv, false, NULL);
    if (pr != PARSE_OK) return pr == PARSE_HELP ? CLI_OK : CLI_USAGE;

    wgnn_status s = wgnn_adapters_list(fixed, NSPECS(fixed), &count, err, sizeof err);
    if (s == WGNN_OK && count > NSPECS(fixed)) {
        infos = malloc(count * sizeof *infos);
        if (!infos) {
            infos = fixed;
            count = NSPECS(fixed);
        } else {
            size_t again = 0;
            s = wgnn_adapters_list(infos, count, &again, err, sizeof err);
            if (again < count) count = again;
        }
    }
    if (s != WGNN_OK) {
        fprintf(stderr, "wgnn: listing adapters: %s\n", err[0] ? err : wgnn_status_str(s));
        rc = CLI_FAIL;
    } else {
        printf("Adapters (%zu):\n", count);
        for (size_t i = 0; i < count; i++) print_adapter(i, &infos[i]);
    }

    if (open_context(g, &ctx, err) != CLI_OK) {
        rc = report(CLI_FAIL, err);
        goto cleanup;
    }
    wgnn_adapter_info ai;
    wgnn_limits l;
    wgnn_context_adapter(ctx, &ai);
    wgnn_context_limits(ctx, &l);
    printf("\nAdapter in use: %s (%s, %s)\n", ai.name, ai.backend, ai.type);
    printf("Device limits:\n");
    print_bytes("max_buffer_size", l.max_buffer_size);
    print_bytes("max_storage_buffer_binding_size", l.max_storage_buffer_binding_size);
    print_bytes("max_uniform_buffer_binding_size", l.max_uniform_buffer_binding_size);
    printf("  %-40s %u\n", "max_storage_buffers_per_shader_stage", l.max_storage_buffers_per_shader_stage);
    print_bytes("max_compute_workgroup_storage_size", l.max_compute_workgroup_storage_size);
    printf("  %-40s %u\n", "max_compute_invocations_per_workgroup", l.max_compute_invocations_per_workgroup);
    printf("  %-40s %u x %u x %u\n", "max_compute_workgroup_size (x, y, z)", l.max_compute_workgroup_size_x,
           l.max_compute_workgroup_size_y, l.max_compute_workgroup_size_z);
    printf("  %-40s %u\n", "max_compute_workgroups_per_dimension", l.max_compute_workgroups_per_dimension);
    printf("  %-40s %u bytes\n", "min_storage_buffer_offset_alignment", l.min_storage_buffer_offset_alignment);
    printf("  %-40s %u bytes\n", "min_uniform_buffer_offset_alignment", l.min_uniform_buffer_offset_alignment);
    printf("Enabled features: shader-f16 %s, subgroups %s, timestamp-query %s\n",
           wgnn_context_has_f16(ctx) ? "yes" : "no", wgnn_context_has_subgroups(ctx) ? "yes" : "no",
           wgnn_context_has_timestamps(ctx) ? "yes" : "no");
    uint32_t units = wgnn_context_compute_units(ctx);
    if (units)
        printf("Compute units: %u (%s; the GEMM plans in whole waves of them)\n", units,
               getenv("WGNN_COMPUTE_UNITS") ? "WGNN_COMPUTE_UNITS" : "wgnn's table of measured GPUs");
    else
        printf("Compute units: unknown (set WGNN_COMPUTE_UNITS=N for GEMM wave plans)\n");
cleanup:
    wgnn_context_destroy(ctx);
    if (infos != fixed) free(infos);
    return rc;
}
