/* graph_impl.h - the graph runtime's types (internal), shared by
 * src/graph/graph.c (values, nodes, build, destroy) and
 * src/graph/graph_run.c (inputs, runs, outputs, stats, profiles). */
#ifndef WGNN_GRAPH_IMPL_H
#define WGNN_GRAPH_IMPL_H

#include "ops/op.h"

#define QSET_CAP 4096u /* queries per timestamp query set (WebGPU's maximum) */

typedef enum vkind { V_INPUT, V_CONST, V_OP, V_VIEW } vkind;

typedef struct gvalue {
    vkind kind;
    wgnn_desc desc;
    uint64_t nbytes;
    int node;      /* V_OP: the node that writes it, else -1 */
    int base;      /* V_VIEW: the root value (never a view) */
    bool output;   /* wgnn_graph_output */
    bool own;      /* V_OP with a buffer of its own (it or a view of it is an output) */
    int last_use;  /* last node that reads it (roots only; build) */
    int pool;      /* pooled buffer index, or -1 */
    char *name;
    wgnn_tensor *t; /* input: owned; const: the caller's (owned when take); op, view: owned struct (build) */
    bool take;
} gvalue;

typedef struct gnode {
    wgnn__node n;
    int in[WGNN__MAX_IN], out[WGNN__MAX_OUT];
    char **args;
    int n_args;
    char *label;
    uint32_t first, count; /* its dispatches in g->disp */
} gnode;

typedef struct gdispatch {
    WGPUComputePipeline pipe; /* the context's cache owns it */
    WGPUBindGroup bg;
    uint32_t grid[3];
} gdispatch;

typedef struct gpool {
    WGPUBuffer buf;
    uint64_t size;
    int busy_until; /* last node reading its current value */
} gpool;

struct wgnn_graph {
    wgnn_context *ctx;
    gvalue *v;
    int n_v, cap_v;
    gnode *nodes;
    int n_nodes, cap_nodes;
    bool built, failed;
    int runs;
    double last_record_ms, last_wait_ms, last_ahead_ms; /* host time of the last run */
    double last_plain_ms; /* the last plain run's time from its submit to its end seen (0: none yet) */
    WGPUCommandBuffer *pre;              /* a plain run recorded ahead, in pieces (graph_run.c) */
    int pre_n, pre_cap;
    WGPUBuffer stage[WGNN__SLOTS];       /* wgnn__graph_submit's read-back slots (MapRead) */
    uint64_t stage_size[WGNN__SLOTS];    /* their sizes */
    int stage_n[WGNN__SLOTS];            /* values of the run in each slot, their bytes and offsets */
    wgnn_value stage_v[WGNN__SLOTS][WGNN__STAGE_MAX];
    uint64_t stage_bytes[WGNN__SLOTS][WGNN__STAGE_MAX], stage_off[WGNN__SLOTS][WGNN__STAGE_MAX];
    uint64_t stage_err[WGNN__SLOTS];     /* where the data-error words follow them (16-aligned) */
    WGPUBuffer err_stage;                /* a plain run's data-error words (MapRead, 16 bytes): its wait */

    gpool *pool;
    int n_pool;
    WGPUBuffer scratch[WGNN__MAX_SCRATCH];
    uint64_t scratch_size[WGNN__MAX_SCRATCH];
    uint32_t n_scratch;
    WGPUBuffer uni;
    uint64_t uni_bytes;
    gdispatch *disp;
    uint32_t n_disp;

    WGPUQuerySet *qsets;
    uint32_t n_qsets;
    WGPUBuffer resolve;
    wgnn_graph_prof *prof;
    bool profiled;       /* the last run had timestamps (nodes or span) */
    int prof_n;          /* records in prof: n_nodes, or 0 after a span run */
    uint64_t prof_total;
};

void wgnn__graph_drop_pre(wgnn_graph *g); /* graph_run.c: the run recorded ahead, released */

static inline wgnn_status check_open(wgnn_graph *g, const char *what) {
    if (g->failed)
        return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: the graph failed to build; it can only be destroyed",
                         what);
    if (g->built)
        return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: the graph is built; it takes no more values or nodes",
                         what);
    return WGNN_OK;
}

static inline wgnn_status check_value(const wgnn_graph *g, wgnn_value v, const char *what) {
    if (v < 0 || v >= g->n_v)
        return wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "%s: value %d is not a value of this graph (0..%d)", what,
                         (int)v, g->n_v - 1);
    return WGNN_OK;
}

#endif /* WGNN_GRAPH_IMPL_H */
