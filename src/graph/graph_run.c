/* graph_run.c - running a built graph (docs/GRAPH.md, "Run"): inputs
 * written, one command buffer and one submit per run (one pass per node
 * with timestamps when profiled), outputs read back, stats and profiles.
 * The types are in graph_impl.h; building is graph.c's. */
#include "graph/graph_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- run --------------------------------------------------------------------- */

static wgnn_status set_input(wgnn_graph *g, wgnn_value input, const void *data, size_t bytes) {
    wgnn_context *ctx = g->ctx;
    wgnn_status s = check_value(g, input, "graph_set_input");
    if (s != WGNN_OK) return s;
    if (g->failed) return check_open(g, "graph_set_input");
    const gvalue *v = &g->v[input];
    if (v->kind != V_INPUT)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_set_input: value %d is not an input of the graph",
                         (int)input);
    if (!data)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_set_input of input %d '%s': data must not be NULL",
                         (int)input, v->name);
    if (bytes != v->nbytes)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_set_input of input %d '%s': %zu bytes given, the input holds %llu", (int)input, v->name,
                         bytes, (unsigned long long)v->nbytes);
    s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    return wgnn__buffer_write(ctx, v->t->buf, data, bytes, "graph_set_input");
}

wgnn_status wgnn_graph_set_input(wgnn_graph *g, wgnn_value input, const void *data, size_t bytes) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, set_input(g, input, data, bytes));
}

/* Query sets for 2 timestamps a node, made at the first profiled run. */
static wgnn_status ensure_queries(wgnn_graph *g) {
    wgnn_context *ctx = g->ctx;
    if (g->qsets || g->n_nodes == 0) return WGNN_OK;
    uint64_t nq = 2ull * (uint64_t)g->n_nodes;
    uint32_t ns = (uint32_t)((nq + QSET_CAP - 1) / QSET_CAP);
    g->qsets = calloc(ns, sizeof *g->qsets);
    if (!g->qsets) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_run: out of host memory");
    g->n_qsets = ns;
    wgnn__scope_push(ctx);
    for (uint32_t i = 0; i < ns; i++) {
        WGPUQuerySetDescriptor d = WGPU_QUERY_SET_DESCRIPTOR_INIT;
        d.type = WGPUQueryType_Timestamp;
        d.count = i + 1 < ns ? QSET_CAP : (uint32_t)(nq - (uint64_t)i * QSET_CAP);
        g->qsets[i] = wgpuDeviceCreateQuerySet(ctx->device, &d);
    }
    wgnn_status s = wgnn__scope_pop(ctx, "graph_run: creating timestamp query sets");
    if (s == WGNN_OK)
        s = wgnn__buffer_create(ctx, (uint64_t)ns * QSET_CAP * 8u, WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc,
                                "graph timestamps", &g->resolve);
    for (uint32_t i = 0; s == WGNN_OK && i < ns; i++)
        if (!g->qsets[i]) s = wgnn__err(ctx, WGNN_ERR_GPU, "graph_run: no timestamp query set");
    if (s != WGNN_OK) { /* the next profiled run tries again */
        for (uint32_t i = 0; i < ns; i++)
            if (g->qsets[i]) wgpuQuerySetRelease(g->qsets[i]);
        free(g->qsets);
        g->qsets = NULL;
        g->n_qsets = 0;
    }
    return s;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The checks and the eager work before a run. */
static wgnn_status run_prologue(wgnn_graph *g, bool timed) { /* timed: nodes or span */
    wgnn_context *ctx = g->ctx;
    if (g->failed) return check_open(g, "graph_run");
    if (!g->built) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_run: build the graph first (wgnn_graph_build)");
    wgnn_status s = wgnn__check_health(ctx);
    if (s != WGNN_OK) return s;
    g->profiled = false;
    if (timed) {
        s = ensure_queries(g);
        if (s != WGNN_OK) return s;
    }
    /* eager work recorded before (e.g. an op writing a constant) goes first */
    if (ctx->enc) {
        s = wgnn__flush(ctx, false);
        if (s != WGNN_OK) return s;
    }
    return WGNN_OK;
}

/* Drops the run recorded ahead (g->pre), if any. */
void wgnn__graph_drop_pre(wgnn_graph *g) {
    for (int i = 0; i < g->pre_n; i++) wgpuCommandBufferRelease(g->pre[i]);
    g->pre_n = 0;
}

/* One recorded piece: submitted, or (keep) finished and kept in g->pre for
 * the next plain run. false: out of host memory for g->pre. */
static bool emit(wgnn_graph *g, WGPUCommandEncoder enc, bool keep) {
    if (!keep) {
        wgnn__finish_submit(g->ctx, enc);
        return true;
    }
    WGPUCommandBufferDescriptor cd = WGPU_COMMAND_BUFFER_DESCRIPTOR_INIT;
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, &cd);
    wgpuCommandEncoderRelease(enc);
    if (!cb) return true; /* the error scope has the reason */
    if (g->pre_n == g->pre_cap) {
        int cap = g->pre_cap ? 2 * g->pre_cap : 8;
        WGPUCommandBuffer *p = realloc(g->pre, (size_t)cap * sizeof *p);
        if (!p) {
            wgpuCommandBufferRelease(cb);
            return false;
        }
        g->pre = p;
        g->pre_cap = cap;
    }
    g->pre[g->pre_n++] = cb;
    return true;
}

/* Records the nodes (in pieces of ctx->knobs.graph_chunk dispatches, each
 * submitted as soon as it is recorded; one pass per node with timestamps
 * when timed; one pass with a timestamp at each end when span) and submits
 * them, or (keep: a plain run, recorded ahead) keeps the pieces in g->pre.
 * slot >= 0 (an async run's read-back): the
 * values of g->stage_*[slot] are copied at the end of the run into that
 * slot's buffer, with the context's data-error words after them. */
static wgnn_status record_submit(wgnn_graph *g, bool timed, bool span, int slot, bool keep) {
    wgnn_context *ctx = g->ctx;
    wgnn_status s;
    wgnn__scope_push(ctx);
    double t0 = now_ms();
    /* one command buffer every ctx->knobs.graph_chunk dispatches (unprofiled
     * runs; 0: one for the run), so that the GPU starts on the first while
     * the rest is recorded: recording costs the host a few us a dispatch.
     * An async run (copy_src: a pipelined decode step) is one command
     * buffer unless WGNN_GRAPH_CHUNK says otherwise: the step before it
     * keeps the GPU busy while it is recorded, and pieces only add submit
     * boundaries (a Qwen3-0.6B step on the H200: 1.58 ms one submit, 1.62
     * every 40 dispatches) */
    uint32_t chunk = timed || span || (slot >= 0 && !ctx->knobs.graph_chunk_set) ? 0 : ctx->knobs.graph_chunk;
    bool grow = ctx->knobs.graph_chunk_grow;
    /* a run recorded ahead: pieces of 16, 32, 64, ... dispatches (Dawn
     * translates each piece for the GPU at its submit, so a small first
     * piece starts the GPU soonest). The H200, ViT-B/16 at batch 1, a
     * synchronous call: 2.296 / 2.274 ms in pieces of 40, 2.258 / 2.240 in
     * these, 2.461 / 2.500 in one (session 14 call 6) */
    if (keep && !ctx->knobs.graph_chunk_set) {
        chunk = 16;
        grow = true;
    }
    WGPUCommandEncoderDescriptor ed = WGPU_COMMAND_ENCODER_DESCRIPTOR_INIT;
    WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(ctx->device, &ed);
    bool enc_ok = enc != NULL;
    if (enc) {
        WGPUComputePassEncoder pass = NULL;
        uint32_t since = 0; /* dispatches recorded since the last submit */
        for (int i = 0; i < g->n_nodes; i++) {
            const gnode *nd = &g->nodes[i];
            if (!pass || timed) {
                WGPUComputePassDescriptor pd = WGPU_COMPUTE_PASS_DESCRIPTOR_INIT;
                WGPUPassTimestampWrites tw = WGPU_PASS_TIMESTAMP_WRITES_INIT;
                if (timed) {
                    uint32_t q = 2u * (uint32_t)i;
                    tw.querySet = g->qsets[q / QSET_CAP];
                    tw.beginningOfPassWriteIndex = q % QSET_CAP;
                    tw.endOfPassWriteIndex = q % QSET_CAP + 1;
                    pd.timestampWrites = &tw;
                } else if (span) { /* the run's one pass (chunk 0) */
                    tw.querySet = g->qsets[0];
                    tw.beginningOfPassWriteIndex = 0;
                    tw.endOfPassWriteIndex = 1;
                    pd.timestampWrites = &tw;
                }
                pass = wgpuCommandEncoderBeginComputePass(enc, &pd);
                if (!pass) break;
            }
            for (uint32_t j = nd->first; j < nd->first + nd->count; j++) {
                const gdispatch *d = &g->disp[j];
                wgpuComputePassEncoderSetPipeline(pass, d->pipe);
                wgpuComputePassEncoderSetBindGroup(pass, 0, d->bg, 0, NULL);
                if (d->grid[0] && d->grid[1] && d->grid[2])
                    wgpuComputePassEncoderDispatchWorkgroups(pass, d->grid[0], d->grid[1], d->grid[2]);
            }
            since += nd->count;
            bool cut = chunk && since >= chunk && i + 1 < g->n_nodes;
            if (timed || cut || i + 1 == g->n_nodes) {
                wgpuComputePassEncoderEnd(pass);
                wgpuComputePassEncoderRelease(pass);
                pass = NULL;
            }
            if (cut && grow) chunk *= 2;
            if (cut) {
                if (!emit(g, enc, keep)) enc_ok = false;
                enc = enc_ok ? wgpuDeviceCreateCommandEncoder(ctx->device, &ed) : NULL;
                since = 0;
                if (!enc) {
                    enc_ok = false;
                    break;
                }
            }
        }
        if (enc && span) wgpuCommandEncoderResolveQuerySet(enc, g->qsets[0], 0, 2, g->resolve, 0);
        if (enc && timed) {
            uint64_t nq = 2ull * (uint64_t)g->n_nodes;
            for (uint32_t k = 0; k < g->n_qsets; k++) {
                uint32_t cnt = k + 1 < g->n_qsets ? QSET_CAP : (uint32_t)(nq - (uint64_t)k * QSET_CAP);
                wgpuCommandEncoderResolveQuerySet(enc, g->qsets[k], 0, cnt, g->resolve, (uint64_t)k * QSET_CAP * 8u);
            }
        }
        /* a plain run ends by copying the data-error words into its own
         * read-back buffer: its wait is that buffer's map, with no further
         * submit and no staging buffer made for it */
        if (enc && !timed && !span && slot < 0 && g->err_stage)
            wgpuCommandEncoderCopyBufferToBuffer(enc, wgnn__data_error_buffer(ctx), 0, g->err_stage, 0, 16);
        if (enc && slot >= 0) {
            for (int i = 0; i < g->stage_n[slot]; i++)
                wgpuCommandEncoderCopyBufferToBuffer(enc, g->v[g->stage_v[slot][i]].t->buf, 0, g->stage[slot],
                                                     g->stage_off[slot][i], (g->stage_bytes[slot][i] + 3u) & ~3ull);
            wgpuCommandEncoderCopyBufferToBuffer(enc, wgnn__data_error_buffer(ctx), 0, g->stage[slot],
                                                 g->stage_err[slot], 16);
        }
        if (enc && !emit(g, enc, keep)) enc_ok = false;
    }
    double t1 = now_ms();
    if (!keep) g->last_record_ms = t1 - t0;
    s = wgnn__scope_pop(ctx, "graph_run: recording and submitting");
    if (s == WGNN_OK && !enc_ok) s = wgnn__err(ctx, WGNN_ERR_GPU, "graph_run: could not create a command encoder");
    if (s != WGNN_OK) {
        if (keep) wgnn__graph_drop_pre(g);
        return s;
    }
    if (!keep) ctx->unwaited_flushes++;
    return WGNN_OK;
}

/* A plain run: the pieces recorded ahead by the run before, or recorded
 * now. Then, when the graph is being run again and again (this is not its
 * first run), the next run is recorded while the GPU works on this one, so
 * that the next run's GPU work starts as soon as it is submitted instead of
 * after the host has recorded its first piece (WGNN_GRAPH_PRERECORD=0: not
 * so). Dawn validates each piece as it is recorded; a piece that failed is
 * dropped with the rest, and the next run records its own (and reports
 * the error). The pieces stay valid until the graph is destroyed: nothing
 * changes a built graph's pipelines, bind groups or buffers. */
static wgnn_status plain_submit(wgnn_graph *g) {
    wgnn_context *ctx = g->ctx;
    wgnn_status s = WGNN_OK;
    if (!g->err_stage) { /* the pieces recorded ahead, if any, copy into no buffer: record anew */
        wgnn__graph_drop_pre(g);
        s = wgnn__buffer_create(ctx, 16, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "graph data-error read-back",
                                &g->err_stage);
        if (s != WGNN_OK) return s;
    }
    if (g->pre_n > 0) {
        double t0 = now_ms();
        wgnn__scope_push(ctx);
        for (int i = 0; i < g->pre_n; i++) {
            wgpuQueueSubmit(ctx->queue, 1, &g->pre[i]);
            wgpuCommandBufferRelease(g->pre[i]);
        }
        g->pre_n = 0;
        g->last_record_ms = now_ms() - t0;
        s = wgnn__scope_pop(ctx, "graph_run: submitting the run recorded ahead");
        if (s != WGNN_OK) return s;
        ctx->unwaited_flushes++;
    } else if ((s = record_submit(g, false, false, -1, false)) != WGNN_OK) {
        return s;
    }
    if (g->runs >= 1 && !ctx->knobs.no_graph_prerecord) {
        double t0 = now_ms();
        (void)record_submit(g, false, false, -1, true);
        g->last_ahead_ms = now_ms() - t0;
    }
    return WGNN_OK;
}

static wgnn_status graph_run(wgnn_graph *g, int profile) {
    wgnn_context *ctx = g->ctx;
    bool stamps = profile && ctx->has_timestamps && g->n_nodes > 0;
    bool span = stamps && profile == WGNN_PROFILE_SPAN, timed = stamps && !span;
    wgnn_status s = run_prologue(g, timed || span);
    g->last_ahead_ms = 0;
    double t0 = now_ms();
    if (s == WGNN_OK) s = timed || span ? record_submit(g, timed, span, -1, false) : plain_submit(g);
    if (s != WGNN_OK) return s;
    double t1 = now_ms();

    /* wait; data errors (an embedding index out of range) come back with it */
    uint64_t *ts = NULL;
    size_t ts_bytes = 0;
    if (timed) {
        ts_bytes = (size_t)g->n_nodes * 16u;
        ts = malloc(ts_bytes);
        if (!ts) return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_run: out of host memory");
    }
    /* the resolve buffer holds the sets QSET_CAP apart: read a packed copy
     * when there is one set (the usual case), else the whole buffer */
    uint64_t rb = timed ? (g->n_qsets == 1 ? (uint64_t)ts_bytes : (uint64_t)g->n_qsets * QSET_CAP * 8u) : 0;
    uint64_t sp[2] = {0, 0};
    if (span) rb = sizeof sp;
    uint64_t *all = ts;
    if (timed && g->n_qsets > 1) {
        all = malloc((size_t)rb);
        if (!all) {
            free(ts);
            return wgnn__err(ctx, WGNN_ERR_OUT_OF_MEMORY, "graph_run: out of host memory");
        }
    }
    if (timed || span) {
        s = wgnn__read_buffer(ctx, g->resolve, rb, span ? sp : all, (size_t)rb);
    } else {
        /* a plain run ends about when the last one did after its submit: the
         * wait blocks until a margin before that, then polls (the wake-up
         * of a wait that blocks to the end costs ~0.1 ms; a margin of 0.25
         * ms + 1/16 of the run covers it and the run-to-run spread; ViT-B/16
         * at batch 1 on the H200: docs/PERFORMANCE.md, session 17). Not on
         * a CPU adapter (lavapipe), whose work runs on the cores a poll
         * would take. */
        double margin = 0.25 + g->last_plain_ms / 16.0, at = t0 + g->last_plain_ms - margin;
        if (!ctx->knobs.no_wait_hybrid && strcmp(ctx->info.type, "CPU") != 0 && g->last_plain_ms > 2.0 * margin &&
            at > now_ms())
            ctx->spin_from_ns = (uint64_t)(at * 1e6);
        s = wgnn__map_read_n(ctx, g->err_stage, 0, 0, NULL, NULL, NULL, "graph_run");
        ctx->spin_from_ns = 0;
        g->last_plain_ms = s == WGNN_OK ? now_ms() - t0 : 0;
        if (s == WGNN_ERR_TIMEOUT || s == WGNN_ERR_GPU) { /* it may still be mapping: a fresh one next time */
            wgnn__graph_drop_pre(g);
            wgpuBufferRelease(g->err_stage);
            g->err_stage = NULL;
        }
    }
    if (s == WGNN_OK) {
        g->runs++;
        if (span) {
            g->prof_total = sp[1] > sp[0] ? sp[1] - sp[0] : 0;
            g->prof_n = 0;
            g->profiled = true;
        }
        if (timed) {
            if (all != ts) memcpy(ts, all, ts_bytes); /* queries are contiguous across full sets */
            for (int i = 0; i < g->n_nodes; i++) {
                const gnode *nd = &g->nodes[i];
                wgnn_graph_prof *r = &g->prof[i];
                r->node = i;
                r->value = nd->n.n_out ? nd->out[0] : -1;
                r->op = nd->n.op->info.name;
                r->label = nd->label ? nd->label : "";
                r->dispatches = (int)nd->count;
                r->gpu_ns = ts[2 * i + 1] > ts[2 * i] ? ts[2 * i + 1] - ts[2 * i] : 0;
            }
            uint64_t a = ts[0], b = ts[2 * (size_t)g->n_nodes - 1];
            g->prof_total = b > a ? b - a : 0;
            g->prof_n = g->n_nodes;
            g->profiled = true;
        }
        if (profile && ctx->has_timestamps && g->n_nodes == 0) { /* nothing to time: an empty profile */
            g->prof_total = 0;
            g->prof_n = 0;
            g->profiled = true;
        }
    }
    if (all != ts) free(all);
    free(ts);
    g->last_wait_ms = now_ms() - t1;
    return s;
}

wgnn_status wgnn_graph_run(wgnn_graph *g, int profile) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_run(g, profile));
}

static wgnn_status read_output(wgnn_graph *g, wgnn_value v, void *data, size_t bytes) {
    wgnn_context *ctx = g->ctx;
    wgnn_status s = check_value(g, v, "graph_read_output");
    if (s != WGNN_OK) return s;
    if (g->failed) return check_open(g, "graph_read_output");
    const gvalue *x = &g->v[v];
    if (!x->output)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_read_output: value %d is not an output (mark it with wgnn_graph_output before the "
                         "build; other values do not keep their data)",
                         (int)v);
    if (!g->built || g->runs == 0)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                         "graph_read_output: no run of the graph has succeeded yet (wgnn_graph_run's status says why "
                         "a run failed)");
    if (!data) return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_read_output: data must not be NULL");
    if (bytes != x->nbytes)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_read_output: %zu bytes given, value %d holds %llu",
                         bytes, (int)v, (unsigned long long)x->nbytes);
    return wgnn__read_buffer(ctx, x->t->buf, x->t->buf_size, data, bytes);
}

wgnn_status wgnn_graph_read_output(wgnn_graph *g, wgnn_value v, void *data, size_t bytes) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, read_output(g, v, data, bytes));
}

wgnn_status wgnn_graph_tensor(wgnn_graph *g, wgnn_value v, wgnn_tensor **out) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    s = check_value(g, v, "graph_tensor");
    if (s == WGNN_OK && !out) s = wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_tensor: out must not be NULL");
    if (s == WGNN_OK) {
        const gvalue *x = &g->v[v];
        if (x->kind == V_INPUT || (x->output && g->built && x->t))
            *out = x->t;
        else
            s = wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT,
                          "graph_tensor: value %d is neither an input nor an output of a built graph", (int)v);
    }
    return wgnn__leave(g->ctx, s);
}

/* ---- async runs -------------------------------------------------------------------- */

static uint64_t round16(uint64_t x) { return (x + 15u) & ~15ull; }

static wgnn_status graph_submit(wgnn_graph *g, const wgnn_value *v, int n, int slot) {
    wgnn_context *ctx = g->ctx;
    if (slot < 0 || slot >= WGNN__SLOTS || n < 1 || n > WGNN__STAGE_MAX || !v)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_submit: slot %d or %d values out of range", slot, n);
    uint64_t off[WGNN__STAGE_MAX], bytes[WGNN__STAGE_MAX], end = 0;
    for (int i = 0; i < n; i++) {
        wgnn_status s = check_value(g, v[i], "graph_submit");
        if (s != WGNN_OK) return s;
        const gvalue *x = &g->v[v[i]];
        if (!(x->output || x->kind == V_INPUT) || !x->t)
            return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_submit: value %d is not an input or output",
                             (int)v[i]);
        off[i] = end;
        bytes[i] = x->nbytes;
        end = round16(end + x->nbytes);
    }
    wgnn_status s = run_prologue(g, false);
    if (s != WGNN_OK) return s;
    uint64_t size = end + 16u;
    if (!g->stage[slot] || g->stage_size[slot] != size) {
        if (g->stage[slot]) wgpuBufferRelease(g->stage[slot]);
        g->stage[slot] = NULL;
        s = wgnn__buffer_create(ctx, size, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "graph read-back slot",
                                &g->stage[slot]);
        if (s != WGNN_OK) return s;
        g->stage_size[slot] = size;
    }
    g->stage_n[slot] = n;
    for (int i = 0; i < n; i++) {
        g->stage_v[slot][i] = v[i];
        g->stage_off[slot][i] = off[i];
        g->stage_bytes[slot][i] = bytes[i];
    }
    g->stage_err[slot] = end;
    s = record_submit(g, false, false, slot, false);
    if (s == WGNN_OK) g->runs++;
    else g->stage_n[slot] = 0;
    return s;
}

wgnn_status wgnn__graph_submit_n(wgnn_graph *g, const wgnn_value *v, int n, int slot) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_submit(g, v, n, slot));
}

wgnn_status wgnn__graph_submit(wgnn_graph *g, wgnn_value v, int slot) { return wgnn__graph_submit_n(g, &v, 1, slot); }

static wgnn_status graph_fetch(wgnn_graph *g, int slot, int n, void *const *data, const size_t *bytes) {
    wgnn_context *ctx = g->ctx;
    bool ok = slot >= 0 && slot < WGNN__SLOTS && g->stage[slot] && n == g->stage_n[slot] && data && bytes;
    for (int i = 0; ok && i < n; i++) ok = !data[i] || bytes[i] == g->stage_bytes[slot][i];
    if (!ok)
        return wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_fetch: slot %d holds no run of those %d values", slot,
                         n);
    double t0 = now_ms();
    wgnn_status s = wgnn__map_read_n(ctx, g->stage[slot], g->stage_err[slot], n, data, g->stage_off[slot], bytes,
                                     "graph_fetch");
    if (s == WGNN_ERR_TIMEOUT || s == WGNN_ERR_GPU) { /* the slot may still be mapping: a fresh one next time */
        wgpuBufferRelease(g->stage[slot]);
        g->stage[slot] = NULL;
    }
    g->stage_n[slot] = 0;
    g->last_wait_ms = now_ms() - t0;
    return s;
}

wgnn_status wgnn__graph_fetch_n(wgnn_graph *g, int slot, int n, void *const *data, const size_t *bytes) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    return wgnn__leave(g->ctx, graph_fetch(g, slot, n, data, bytes));
}

wgnn_status wgnn__graph_fetch(wgnn_graph *g, int slot, void *data, size_t bytes) {
    if (!data) return WGNN_ERR_INVALID_ARGUMENT;
    return wgnn__graph_fetch_n(g, slot, 1, &data, &bytes);
}

/* ---- stats, profile, destroy ----------------------------------------------------- */

wgnn_status wgnn_graph_get_stats(const wgnn_graph *g, wgnn_graph_stats *st) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_status s = wgnn__enter(g->ctx);
    if (s != WGNN_OK) return s;
    if (!st) return wgnn__leave(g->ctx, wgnn__err(g->ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_get_stats: s is NULL"));
    memset(st, 0, sizeof *st);
    st->n_values = g->n_v;
    st->n_nodes = g->n_nodes;
    st->n_dispatches = (int)g->n_disp;
    st->n_pool_buffers = g->n_pool;
    for (int i = 0; i < g->n_v; i++) {
        const gvalue *v = &g->v[i];
        if (v->kind == V_INPUT) st->n_inputs++;
        if (v->output) st->n_outputs++;
        if (v->kind == V_OP) st->unplanned_bytes += v->nbytes;
        if (v->kind == V_CONST) st->constant_bytes += v->nbytes;
        if (v->kind == V_INPUT || (v->kind == V_OP && v->own)) st->io_bytes += v->nbytes;
    }
    for (int b = 0; b < g->n_pool; b++) st->peak_bytes += g->pool[b].size;
    for (uint32_t k = 0; k < g->n_scratch; k++) st->scratch_bytes += g->scratch_size[k];
    st->uniform_bytes = g->uni_bytes;
    st->last_record_ms = g->last_record_ms;
    st->last_wait_ms = g->last_wait_ms;
    st->last_ahead_ms = g->last_ahead_ms;
    return wgnn__leave(g->ctx, WGNN_OK);
}

wgnn_status wgnn_graph_profile(const wgnn_graph *g, const wgnn_graph_prof **recs, int *n, uint64_t *total_ns) {
    if (!g) return WGNN_ERR_INVALID_ARGUMENT;
    wgnn_context *ctx = g->ctx;
    wgnn_status s = wgnn__enter(ctx);
    if (s != WGNN_OK) return s;
    if (!recs || !n)
        s = wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT, "graph_profile: recs and n must not be NULL");
    else if (!ctx->has_timestamps)
        s = wgnn__err(ctx, WGNN_ERR_UNSUPPORTED, "graph_profile: the device has no timestamp queries");
    else if (!g->profiled)
        s = wgnn__err(ctx, WGNN_ERR_INVALID_ARGUMENT,
                      "graph_profile: the last run was not profiled: run it with wgnn_graph_run(g, WGNN_PROFILE_NODES) "
                      "or WGNN_PROFILE_SPAN first");
    if (s == WGNN_OK) {
        *recs = g->prof;
        *n = g->prof_n;
        if (total_ns) *total_ns = g->prof_total;
    }
    return wgnn__leave(ctx, s);
}
