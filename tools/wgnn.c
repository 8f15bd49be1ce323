/* placeholder replaced by the CLI */
#include "wgnn.h"
#include <stdio.h>
int main(void) {
    wgnn_context *ctx = NULL;
    wgnn_status s = wgnn_context_create(NULL, &ctx);
    if (s != WGNN_OK) { fprintf(stderr, "wgnn: %s\n", wgnn_context_error(ctx)); wgnn_context_destroy(ctx); return 1; }
    wgnn_adapter_info ai; wgnn_context_adapter(ctx, &ai);
    printf("%s (%s, %s) f16=%d sg=%d ts=%d\n", ai.name, ai.backend, ai.type, wgnn_context_has_f16(ctx), wgnn_context_has_subgroups(ctx), wgnn_context_has_timestamps(ctx));
    wgnn_context_destroy(ctx);
    return 0;
}
