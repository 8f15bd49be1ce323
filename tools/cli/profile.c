/* profile.c - the --profile table of `wgnn run` and `wgnn generate`. */
#include "args.h"

#include <stdlib.h>
#include <string.h>

static int cmp_prof(const void *a, const void *b) {
    const wgnn_graph_prof *x = a, *y = b;
    return x->gpu_ns < y->gpu_ns ? 1 : x->gpu_ns > y->gpu_ns ? -1 : 0;
}

wgnn_status print_profile(FILE *info, wgnn_context *ctx, wgnn_graph *g, const char *title, uint64_t *sum,
                          uint64_t *total) {
    const wgnn_graph_prof *recs = NULL;
    int n = 0;
    *sum = *total = 0;
    wgnn_status s = wgnn_graph_profile(g, &recs, &n, total);
    if (s != WGNN_OK) {
        fprintf(info, "%s: %s\n", title, wgnn_context_error(ctx));
        return s;
    }
    wgnn_graph_prof *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    if (!sorted) {
        fprintf(info, "%s: out of memory\n", title);
        return WGNN_ERR_OUT_OF_MEMORY;
    }
    memcpy(sorted, recs, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_prof);
    for (int i = 0; i < n; i++) *sum += sorted[i].gpu_ns;
    fprintf(info, "%s: %-44s %-18s %6s %10s %6s\n", title, "node", "op", "disp", "gpu us", "%");
    int shown = n < 40 ? n : 40;
    for (int i = 0; i < shown; i++)
        fprintf(info, "  %-62s %-18s %6d %10.1f %6.2f\n", sorted[i].label[0] ? sorted[i].label : "-", sorted[i].op,
                sorted[i].dispatches, (double)sorted[i].gpu_ns / 1e3,
                *sum ? 100.0 * (double)sorted[i].gpu_ns / (double)*sum : 0);
    if (n > shown) fprintf(info, "  ... %d more nodes\n", n - shown);
    fprintf(info, "by op:\n");
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(sorted[j].op, sorted[i].op) == 0;
        if (seen) continue;
        uint64_t t = 0;
        int cnt = 0;
        for (int j = 0; j < n; j++)
            if (strcmp(sorted[j].op, sorted[i].op) == 0) t += sorted[j].gpu_ns, cnt++;
        fprintf(info, "  %-18s %4d nodes %10.1f us %6.2f%%\n", sorted[i].op, cnt, (double)t / 1e3,
                *sum ? 100.0 * (double)t / (double)*sum : 0);
    }
    free(sorted);
    return WGNN_OK;
}
