/* graph_state.c - graph state that outlives a run, against the references
 * run the same way on the host: index_copy into a constant cache
 * (wgnn_graph_op_into), qkv_rope_cache and qkv_sdpa_kvcache writing two
 * caches in place (wgnn_graph_op_into_n) over several runs, the same ops
 * eager in place, and the refusals. Run by test_graph's main
 * (tests/test_graph.c); shared pieces: test_graph.h. */
#include "test_graph.h"

void test_state(wgnn_context *ctx) {
    /* cache [1, 2, 6, 4] as a constant; each run writes two rows (positions
     * from an input) in place and reads the whole cache after the write. */
    int64_t cd[4] = {1, 2, 6, 4}, sd[4] = {1, 2, 2, 4}, pd[1] = {2};
    float host_cache[48], want[48], got[48], src[16];
    for (int i = 0; i < 48; i++) host_cache[i] = want[i] = (float)(100 + i);
    wgnn_tensor *cache = NULL;
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &cache);
    wgnn_tensor_upload(ctx, cache, host_cache, sizeof host_cache);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value c, pos, x, y;
    wgnn_graph_constant(g, cache, 0, &c);
    wgnn_graph_input(g, "pos", WGNN_I32, 1, pd, &pos);
    wgnn_graph_input(g, "x", WGNN_F32, 4, sd, &x);
    const char *dim2[1] = {"dim=2"};
    wgnn_value before = gop(g, ctx, "relu", &c, 1, NULL, 0); /* reads the old contents */
    wgnn_status s = wgnn_graph_op_into(g, "index_copy", (wgnn_value[]){c, pos, x}, 3, dim2, 1, c);
    CHECK(s == WGNN_OK, "op_into index_copy: %s", wgnn_context_error(ctx));
    y = gop(g, ctx, "relu", &c, 1, NULL, 0); /* reads the new contents */
    wgnn_graph_output(g, before);
    wgnn_graph_output(g, y);
    s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "state build: %s", wgnn_context_error(ctx));
    for (int run = 0; s == WGNN_OK && run < 3; run++) {
        int32_t p[2] = {run * 2, run * 2 + 1};
        if (run == 2) p[0] = 5, p[1] = 0; /* out of order */
        float old[48];
        memcpy(old, want, sizeof old);
        for (int i = 0; i < 16; i++) src[i] = (float)(run * 16 + i + 1);
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 2; j++)
                for (int e = 0; e < 4; e++) want[(h * 6 + p[j]) * 4 + e] = src[(h * 2 + j) * 4 + e];
        wgnn_graph_set_input(g, pos, p, sizeof p);
        wgnn_graph_set_input(g, x, src, sizeof src);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "state run %d: %s", run, wgnn_context_error(ctx));
        if (s != WGNN_OK) break;
        wgnn_graph_read_output(g, before, got, sizeof got);
        CHECK(memcmp(got, old, sizeof got) == 0, "state run %d: the node before the write saw new data", run);
        wgnn_graph_read_output(g, y, got, sizeof got);
        CHECK(memcmp(got, want, sizeof got) == 0, "state run %d: cache after the write differs", run);
    }
    wgnn_tensor_download(ctx, cache, got, sizeof got);
    CHECK(memcmp(got, want, sizeof got) == 0, "state: the constant's own data differs");

    /* an index out of range: nothing written, the run reports it */
    int32_t bad[2] = {1, 6};
    wgnn_graph_set_input(g, pos, bad, sizeof bad);
    s = wgnn_graph_run(g, 0);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "out of range"),
          "state: index 6 of 6 gave %d (%s)", (int)s, wgnn_context_error(ctx));
    wgnn_graph_destroy(g);

    /* refused nodes */
    wgnn_graph_create(ctx, &g);
    wgnn_graph_constant(g, cache, 0, &c);
    wgnn_graph_input(g, "pos", WGNN_I32, 1, pd, &pos);
    wgnn_graph_input(g, "x", WGNN_F32, 4, sd, &x);
    wgnn_value r = gop(g, ctx, "relu", &c, 1, NULL, 0);
    s = wgnn_graph_op_into(g, "relu", &c, 1, NULL, 0, r);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "must be an input or a constant"),
          "op_into an op output: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "relu", &x, 1, NULL, 0, c);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "but dst is float32 [1,2,6,4]"),
          "op_into a mis-shaped dst: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "relu", &c, 1, NULL, 0, c);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "does not work in place"),
          "op_into relu in place: %s", wgnn_context_error(ctx));
    wgnn_value cv;
    wgnn_graph_view(g, c, 2, (int64_t[]){12, 4}, &cv);
    int64_t xd2[2] = {12, 4};
    wgnn_value x2;
    wgnn_graph_input(g, "x2", WGNN_F32, 2, xd2, &x2);
    s = wgnn_graph_op_into(g, "add", (wgnn_value[]){x2, cv}, 2, NULL, 0, x2);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "input 0 reads dst"),
          "op_into add reading dst: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "index_copy", (wgnn_value[]){c, pos, x}, 3, dim2, 1, -1);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT, "op_into dst -1");
    wgnn_graph_destroy(g);

    /* eager: index_copy in place; other ops refuse an output that is an input */
    wgnn_tensor *ti = NULL, *tx = NULL;
    wgnn_tensor_create(ctx, WGNN_I32, 1, pd, &ti);
    wgnn_tensor_create(ctx, WGNN_F32, 4, sd, &tx);
    int32_t p2[2] = {3, 1};
    wgnn_tensor_upload(ctx, ti, p2, sizeof p2);
    for (int i = 0; i < 16; i++) src[i] = (float)(-1 - i);
    wgnn_tensor_upload(ctx, tx, src, sizeof src);
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 2; j++)
            for (int e = 0; e < 4; e++) want[(h * 6 + p2[j]) * 4 + e] = src[(h * 2 + j) * 4 + e];
    const wgnn_tensor *ein[3] = {cache, ti, tx};
    s = wgnn_op(ctx, "index_copy", ein, 3, dim2, 1, &cache, 1);
    CHECK(s == WGNN_OK, "eager index_copy in place: %s", wgnn_context_error(ctx));
    wgnn_tensor_download(ctx, cache, got, sizeof got);
    CHECK(memcmp(got, want, sizeof got) == 0, "eager index_copy in place: data differs");
    s = wgnn_op(ctx, "relu", ein, 1, NULL, 0, &cache, 1);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "output 0 is also input 0"),
          "eager relu in place: %s", wgnn_context_error(ctx));
    wgnn_tensor_destroy(ti);
    wgnn_tensor_destroy(tx);
    wgnn_tensor_destroy(cache);
}

/* A new graph with qkv_rope_cache's inputs: qkv, cos, sin, pos as inputs
 * (1 token, 2 heads on 1 of D = 4) and the caches tk, tv as constants. */
static wgnn_graph *rope_cache_graph(wgnn_context *ctx, wgnn_tensor *tk, wgnn_tensor *tv, wgnn_value in[6]) {
    int64_t qd[3] = {1, 1, 16}, td[2] = {1, 4}, pd[1] = {1};
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_graph_input(g, "qkv", WGNN_F32, 3, qd, &in[0]);
    wgnn_graph_input(g, "cos", WGNN_F32, 2, td, &in[1]);
    wgnn_graph_input(g, "sin", WGNN_F32, 2, td, &in[2]);
    wgnn_graph_input(g, "pos", WGNN_I32, 1, pd, &in[3]);
    wgnn_graph_constant(g, tk, 0, &in[4]);
    wgnn_graph_constant(g, tv, 0, &in[5]);
    return g;
}

/* qkv_rope_cache writing two caches in place (wgnn_graph_op_into_n): one
 * token a run at positions 3, 1, 4; the caches and q against the reference
 * run the same way. */
void test_state_multi(wgnn_context *ctx) {
    int64_t qd[3] = {1, 1, 16}, td[2] = {1, 4}, cd[4] = {1, 1, 5, 4}, pd[1] = {1};
    const char *args[2] = {"num_heads=2", "num_kv_heads=1"};
    ht kc = ht_rand(4, cd, -1, 1), vc = ht_rand(4, cd, -1, 1);
    wgnn_tensor *tk = NULL, *tv = NULL;
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tk);
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tv);
    wgnn_tensor_upload(ctx, tk, kc.p, ht_n(&kc) * 4);
    wgnn_tensor_upload(ctx, tv, vc.p, ht_n(&vc) * 4);
    wgnn_value in[6], outs[3];
    wgnn_graph *g = rope_cache_graph(ctx, tk, tv, in);
    wgnn_value x = in[0], c = in[1], sn = in[2], pos = in[3], k = in[4], v = in[5];
    int n_out = 0;
    wgnn_status s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in, 6, args, 2, (wgnn_value[]){-1, k, v}, 3, outs, 3, &n_out);
    CHECK(s == WGNN_OK && n_out == 3 && outs[1] == k && outs[2] == v, "op_into_n qkv_rope_cache: %s",
          wgnn_context_error(ctx));
    wgnn_graph_output(g, outs[0]);
    s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "op_into_n build: %s", wgnn_context_error(ctx));
    static const int32_t order[3] = {3, 1, 4};
    for (int run = 0; s == WGNN_OK && run < 3; run++) {
        ht hx = ht_rand(3, qd, -1, 1), hc = ht_rand(2, td, -1, 1), hs = ht_rand(2, td, -1, 1), hp = ht_new(1, pd);
        hp.d.dtype = WGNN_I32;
        memcpy(hp.p, &order[run], 4);
        wgnn_graph_set_input(g, x, hx.p, ht_n(&hx) * 4);
        wgnn_graph_set_input(g, c, hc.p, ht_n(&hc) * 4);
        wgnn_graph_set_input(g, sn, hs.p, ht_n(&hs) * 4);
        wgnn_graph_set_input(g, pos, &order[run], 4);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "op_into_n run %d: %s", run, wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, hp, kc, vc}, r[3];
        int nr = href("qkv_rope_cache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            compare_output(g, ctx, outs[0], &r[0], 1e-5, "op_into_n q");
            float got[20];
            double md;
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, 20, 1e-5, 1e-5, &md), "op_into_n run %d: k cache differs by %g", run, md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, 20, 1e-5, 1e-5, &md), "op_into_n run %d: v cache differs by %g", run, md);
            memcpy(kc.p, r[1].p, 20 * 4); /* the reference's caches carry over too */
            memcpy(vc.p, r[2].p, 20 * 4);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        free(hx.p), free(hc.p), free(hs.p), free(hp.p);
    }
    wgnn_graph_destroy(g);

    /* refused: more dst values than outputs; an input reading a dst that is
     * not the output's in-place input; one dst for two outputs */
    wgnn_value in2[6];
    g = rope_cache_graph(ctx, tk, tv, in2);
    k = in2[4];
    v = in2[5];
    s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in2, 6, args, 2, (wgnn_value[]){-1, k, v, -1}, 4, outs, 3, &n_out);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "4 dst values for the op's 3 outputs"),
          "op_into_n 4 dst: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in2, 6, args, 2, (wgnn_value[]){-1, v, k}, 3, outs, 3, &n_out);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "reads dst"),
          "op_into_n swapped caches: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into_n(g, "qkv_rope_cache", in2, 6, args, 2, (wgnn_value[]){-1, k, k}, 3, outs, 3, &n_out);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "have one dst"),
          "op_into_n one dst twice: %s", wgnn_context_error(ctx));
    s = wgnn_graph_op_into(g, "qkv_rope_cache", in2, 6, args, 2, k);
    CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "op_into takes one"),
          "op_into of a 3-output op: %s", wgnn_context_error(ctx));
    wgnn_graph_destroy(g);

    /* eager, in place: the caches passed as outputs 1 and 2 get only row 2
     * written; swapped (k_cache as output 2) is refused */
    {
        ht hx = ht_rand(3, qd, -1, 1), hc = ht_rand(2, td, -1, 1), hs = ht_rand(2, td, -1, 1), hp = ht_new(1, pd);
        hp.d.dtype = WGNN_I32;
        int32_t p2 = 2;
        memcpy(hp.p, &p2, 4);
        wgnn_tensor *ex = upload(ctx, &hx), *ec = upload(ctx, &hc), *es = upload(ctx, &hs), *ep = upload(ctx, &hp),
                    *eq = NULL;
        wgnn_tensor_create(ctx, WGNN_F32, 4, (int64_t[]){1, 2, 1, 4}, &eq);
        wgnn_tensor_download(ctx, tk, kc.p, ht_n(&kc) * 4); /* the caches as the runs above left them */
        wgnn_tensor_download(ctx, tv, vc.p, ht_n(&vc) * 4);
        const wgnn_tensor *ein[6] = {ex, ec, es, ep, tk, tv};
        s = wgnn_op(ctx, "qkv_rope_cache", ein, 6, args, 2, (wgnn_tensor *[]){eq, tk, tv}, 3);
        CHECK(s == WGNN_OK, "eager qkv_rope_cache in place: %s", wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, hp, kc, vc}, r[3];
        int nr = href("qkv_rope_cache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            float got[20];
            double md;
            wgnn_tensor_download(ctx, eq, got, 8 * sizeof(float));
            CHECK(tu_close(got, r[0].p, 8, 1e-5, 1e-5, &md), "eager in place: q differs by %g", md);
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, 20, 1e-5, 1e-5, &md), "eager in place: k cache differs by %g", md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, 20, 1e-5, 1e-5, &md), "eager in place: v cache differs by %g", md);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        s = wgnn_op(ctx, "qkv_rope_cache", ein, 6, args, 2, (wgnn_tensor *[]){eq, tv, tk}, 3);
        CHECK(s == WGNN_ERR_INVALID_ARGUMENT && has(wgnn_context_error(ctx), "is also input"),
              "eager qkv_rope_cache with swapped caches: %s", wgnn_context_error(ctx));
        wgnn_tensor *ts[5] = {ex, ec, es, ep, eq};
        for (int i = 0; i < 5; i++) wgnn_tensor_destroy(ts[i]);
        free(hx.p), free(hc.p), free(hs.p), free(hp.p);
    }
    free(kc.p);
    free(vc.p);
    wgnn_tensor_destroy(tk);
    wgnn_tensor_destroy(tv);
}

/* qkv_sdpa_kvcache as a decoder runs it: one graph, the caches constants
 * written in place (wgnn_graph_op_into_n), one token a run at cache
 * lengths 1..4 (the decode kernel's QKV mode where the adapter has it);
 * the attention and both caches against the reference run the same way,
 * its caches carried over. Then eager in place with two tokens. */
void test_state_attention(wgnn_context *ctx) {
    int64_t qd[3] = {1, 1, 128}, td[2] = {6, 16}, cd[4] = {1, 2, 6, 16}, ld[1] = {1};
    const char *args[2] = {"num_heads=4", "num_kv_heads=2"};
    enum { NC = 2 * 6 * 16 };
    ht kc = ht_rand(4, cd, -1, 1), vc = ht_rand(4, cd, -1, 1), hc = ht_rand(2, td, -1, 1), hs = ht_rand(2, td, -1, 1);
    wgnn_tensor *tk = NULL, *tv = NULL;
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tk);
    wgnn_tensor_create(ctx, WGNN_F32, 4, cd, &tv);
    wgnn_tensor_upload(ctx, tk, kc.p, NC * 4);
    wgnn_tensor_upload(ctx, tv, vc.p, NC * 4);
    wgnn_graph *g = NULL;
    wgnn_graph_create(ctx, &g);
    wgnn_value in[6], outs[3];
    wgnn_graph_input(g, "qkv", WGNN_F32, 3, qd, &in[0]);
    wgnn_graph_input(g, "cos", WGNN_F32, 2, td, &in[1]);
    wgnn_graph_input(g, "sin", WGNN_F32, 2, td, &in[2]);
    wgnn_graph_constant(g, tk, 0, &in[3]);
    wgnn_graph_constant(g, tv, 0, &in[4]);
    wgnn_graph_input(g, "cache_seqlens", WGNN_I32, 1, ld, &in[5]);
    int n_out = 0;
    wgnn_status s = wgnn_graph_op_into_n(g, "qkv_sdpa_kvcache", in, 6, args, 2, (wgnn_value[]){-1, in[3], in[4]}, 3,
                                         outs, 3, &n_out);
    CHECK(s == WGNN_OK && n_out == 3 && outs[1] == in[3] && outs[2] == in[4], "op_into_n qkv_sdpa_kvcache: %s",
          wgnn_context_error(ctx));
    wgnn_graph_output(g, outs[0]);
    if (s == WGNN_OK) s = wgnn_graph_build(g);
    CHECK(s == WGNN_OK, "qkv_sdpa_kvcache graph build: %s", wgnn_context_error(ctx));
    for (int32_t len = 1; s == WGNN_OK && len <= 4; len++) {
        ht hx = ht_rand(3, qd, -1, 1), hl = ht_new(1, ld);
        hl.d.dtype = WGNN_I32;
        memcpy(hl.p, &len, 4);
        wgnn_graph_set_input(g, in[0], hx.p, ht_n(&hx) * 4);
        wgnn_graph_set_input(g, in[1], hc.p, ht_n(&hc) * 4);
        wgnn_graph_set_input(g, in[2], hs.p, ht_n(&hs) * 4);
        wgnn_graph_set_input(g, in[5], &len, 4);
        s = wgnn_graph_run(g, 0);
        CHECK(s == WGNN_OK, "qkv_sdpa_kvcache run at length %d: %s", len, wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, kc, vc, hl}, r[3];
        int nr = href("qkv_sdpa_kvcache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            compare_output(g, ctx, outs[0], &r[0], 1e-5, "qkv_sdpa_kvcache attention");
            float got[NC];
            double md;
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, NC, 1e-5, 1e-5, &md), "length %d: k cache differs by %g", len, md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, NC, 1e-5, 1e-5, &md), "length %d: v cache differs by %g", len, md);
            memcpy(kc.p, r[1].p, NC * 4);
            memcpy(vc.p, r[2].p, NC * 4);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        free(hx.p), free(hl.p);
    }
    wgnn_graph_destroy(g);

    /* eager, in place, two tokens at length 6 (rows 4 and 5) */
    {
        int64_t qd2[3] = {1, 2, 128};
        int32_t len = 6;
        ht hx = ht_rand(3, qd2, -1, 1), hl = ht_new(1, ld);
        hl.d.dtype = WGNN_I32;
        memcpy(hl.p, &len, 4);
        wgnn_tensor *ex = upload(ctx, &hx), *ec = upload(ctx, &hc), *es = upload(ctx, &hs), *el = upload(ctx, &hl),
                    *eo = NULL;
        wgnn_tensor_create(ctx, WGNN_F32, 4, (int64_t[]){1, 4, 2, 16}, &eo);
        wgnn_tensor_download(ctx, tk, kc.p, NC * 4); /* the caches as the runs above left them */
        wgnn_tensor_download(ctx, tv, vc.p, NC * 4);
        const wgnn_tensor *ein[6] = {ex, ec, es, tk, tv, el};
        s = wgnn_op(ctx, "qkv_sdpa_kvcache", ein, 6, args, 2, (wgnn_tensor *[]){eo, tk, tv}, 3);
        CHECK(s == WGNN_OK, "eager qkv_sdpa_kvcache in place: %s", wgnn_context_error(ctx));
        ht rin[6] = {hx, hc, hs, kc, vc, hl}, r[3];
        int nr = href("qkv_sdpa_kvcache", rin, 6, args, 2, r);
        if (s == WGNN_OK && nr == 3) {
            float got[NC];
            double md;
            wgnn_tensor_download(ctx, eo, got, 128 * sizeof(float));
            CHECK(tu_close(got, r[0].p, 128, 1e-5, 1e-5, &md), "eager in place: attention differs by %g", md);
            wgnn_tensor_download(ctx, tk, got, sizeof got);
            CHECK(tu_close(got, r[1].p, NC, 1e-5, 1e-5, &md), "eager in place: k cache differs by %g", md);
            wgnn_tensor_download(ctx, tv, got, sizeof got);
            CHECK(tu_close(got, r[2].p, NC, 1e-5, 1e-5, &md), "eager in place: v cache differs by %g", md);
        }
        for (int i = 0; i < nr; i++) free(r[i].p);
        wgnn_tensor *ts[5] = {ex, ec, es, el, eo};
        for (int i = 0; i < 5; i++) wgnn_tensor_destroy(ts[i]);
        free(hx.p), free(hl.p);
    }
    free(kc.p), free(vc.p), free(hc.p), free(hs.p);
    wgnn_tensor_destroy(tk);
    wgnn_tensor_destroy(tv);
}
