/* sdpa_fused.c - the fused attention's plan (shaders/sdpa_fused.wgsl and
 * its split-KV reduce, shaders/sdpa_fused_reduce.wgsl; D = 128's
 * long-sequence kernel shaders/sdpa_fused_vh.wgsl, vh_tile) for the rows that
 * run it: sdpa and sdpa_qkvpacked (src/ops/sdpa.c), sdpa_kvcache and
 * qkv_sdpa_kvcache (src/ops/sdpa_kvcache.c). Picks the tile (fused_tile,
 * as measured on the H200 and lavapipe), the key splits, the heads a
 * dispatch takes (one storage binding each) and the rows' strides. */
#include "norm.h"
#include "op.h"
#include "sdpa.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Params of the kernels, written once (see WGNN__PARAMS_STRUCT). */
#define FUSED_PARAMS(X, S)                                                                           \
    X(S, u32, n_groups) /* workgroups: n_split * B*H * n_qtiles (2-D fold) */                        \
    X(S, u32, n_qtiles) /* ceil(S_q / BR) */                                                         \
    X(S, u32, s_q) X(S, u32, s_kv)                                                                   \
    X(S, f32, qscale)   /* scale * log2(e) */                                                        \
    X(S, u32, kv_chunk) /* keys per split (SPLIT), a multiple of BC */                               \
    X(S, u32, n_bh)     /* B*H of this dispatch */                                                  \
    X(S, u32, group)    /* H / H_kv: q head bh reads kv head bh / group */                           \
    X(S, i32, causal_off) /* CAUSAL: row i sees keys j <= i + causal_off */                        \
    X(S, u32, bh_base)  /* KVLEN: first (batch, head) of this dispatch */                          \
    X(S, u32, n_h)      /* q heads per batch element */                                             \
    X(S, u32, d4)       /* LEAN: D / 4, the score loop's bound (not unrolled at compile time) */     \
    X(S, u32, q_rs) X(S, u32, q_hs) X(S, u32, q_bs) /* q's row, head, batch strides (vec4s) */       \
    X(S, u32, kv_rs) X(S, u32, kv_hs) X(S, u32, kv_bs) X(S, u32, k_off) X(S, u32, v_off)            \
    X(S, u32, o_rs) X(S, u32, o_hs) X(S, u32, o_bs) /* out's */
#define REDUCE_PARAMS(X, S)                                                                          \
    X(S, u32, n_rows) X(S, u32, d4) X(S, u32, n_split) X(S, u32, s_q) X(S, u32, n_h) X(S, u32, o_rs)  \
    X(S, u32, o_hs) X(S, u32, o_bs)                                                                   \
    X(S, u32, kv_blk) /* decode splits: split s holds keys only if s < ceil(L / kv_blk) */          \
    X(S, u32, rows_b) /* decode splits: rows a batch element (its L: lens[row / rows_b]) */         \
    X(S, u32, s_kv)   /* decode splits: L clamped to [0, s_kv] */
WGNN__PARAMS_STRUCT(fused_params, FUSED_PARAMS);
WGNN__PARAMS_STRUCT(reduce_params, REDUCE_PARAMS);
WGNN__PARAMS_CHECK(fused_params, FUSED_PARAMS)
WGNN__PARAMS_CHECK(reduce_params, REDUCE_PARAMS)

typedef struct fused_cfg {
    uint32_t ty, tx, ke, rg, oj, pf;
    bool sacc, use_sg;
    bool lean;       /* the kernel's LEAN variant (one prefetch buffer, loops to uniform bounds) */
    bool qg;         /* LEAN: Q read from global memory in the score loop, no sQ tile */
    bool swz;        /* unpadded rows, swizzled sKV, sP as [row group][key] (the kernel's SWZ) */
    uint32_t ju, cu; /* LEAN: unrolled steps of the d4 loop and of the P.V key loop */
    uint32_t srn;    /* vec4 entries of sR */
    uint32_t n_split, kv_chunk; /* n_split > 1: split-KV + sdpa_fused_reduce */
    bool vh;                    /* shaders/sdpa_fused_vh.wgsl (vh_tile): ty, tx, rg, ju, cu */
} fused_cfg;


/* Workgroup memory of shaders/sdpa_fused.wgsl (its one array SM): sQ (none
 * with qg), sKV, sP, sR (srn vec4); rows padded by one vec4 unless swz. */
static uint64_t fused_smem(uint32_t d4, uint32_t ty, uint32_t tx, uint32_t ke, uint32_t rg, uint32_t srn, bool qg,
                           bool swz) {
    uint64_t rs = swz ? d4 : d4 + 1u;
    uint64_t n = (qg ? 0 : 4ull * rg * ty * rs) + (uint64_t)ke * tx * rs + (uint64_t)ke * tx * (rg * ty + (swz ? 0 : 1)) + srn;
    return 16u * (n ? n : 1);
}

/* S_q and S_kv >= 1024: the LEAN tile's shapes (fused_tile). */
static bool long_seq(const sdpa_shape *sh) { return sh->s_q >= 1024 && sh->s_kv >= 1024; }

/* The largest power of two <= want that divides n (want >= 1). */
static uint32_t pow2_divisor(uint32_t n, uint32_t want) {
    uint32_t u = 1;
    while (u * 2 <= want && n % (u * 2) == 0) u *= 2;
    return u;
}

/* Query rows S_q pads to in tiles of br rows. */
static uint64_t padded_rows(uint64_t s_q, uint64_t br) { return (s_q + br - 1) / br * br; }

/* *c for tile t = {TY, TX, KE, RG} with these variant bits (qg, swz: the
 * kernel's QG and SWZ; u: LEAN's score-loop unroll), or false where the
 * tile passes the adapter's workgroup memory or size limits. */
static bool tile_config(const wgnn_context *ctx, uint32_t d4, const uint32_t t[4], bool lean, bool qg, bool swz,
                        uint32_t u, fused_cfg *c) {
    const WGPULimits *L = &ctx->limits;
    uint32_t ty = t[0], tx = t[1], ke = t[2], rg = t[3];
    /* Subgroup row maxima where a row's TX lanes fit one subgroup. This
     * relies on consecutive local_invocation_index values being
     * consecutive subgroup lanes, which WGSL does not promise but the
     * NVIDIA and lavapipe drivers do (both checked against the CPU
     * reference); WGNN_FUSED_FLAGS without 'g' turns it off. */
    bool use_sg = ctx->has_subgroups && (tx & (tx - 1)) == 0 && ctx->info.subgroup_min_size >= tx;
    if (ctx->knobs.fused_sg >= 0) use_sg = use_sg && ctx->knobs.fused_sg != 0;
    uint32_t srn = lean && use_sg ? 0 : rg * ty * tx;
    swz = swz && d4 % 8 == 0;
    if (fused_smem(d4, ty, tx, ke, rg, srn, qg, swz) > L->maxComputeWorkgroupStorageSize ||
        ty * tx > L->maxComputeInvocationsPerWorkgroup || tx > L->maxComputeWorkgroupSizeX ||
        ty > L->maxComputeWorkgroupSizeY)
        return false;
    c->vh = false;
    c->ty = ty;
    c->tx = tx;
    c->ke = ke;
    c->rg = rg;
    c->oj = (d4 + tx - 1) / tx;
    c->pf = (ke * tx * d4 + tx * ty - 1) / (tx * ty);
    c->use_sg = use_sg;
    c->lean = lean;
    c->qg = qg;
    c->swz = swz;
    c->srn = srn;
    /* vec4 partial sums pay off once D > 64 (measured), plain dots below;
     * LEAN's scalar fma chains need no extra accumulators */
    c->sacc = d4 > 16 && !lean;
    if (ctx->knobs.fused_sacc >= 0) c->sacc = ctx->knobs.fused_sacc != 0;
    c->ju = lean ? pow2_divisor(d4, u) : d4;
    /* the P.V loop unrolled 4u times, at most 16 (the score loop's unroll
     * doubled instead lost: session 12 call 10). The H200, call 11, two
     * rounds, CU = 4 / 8 / 16 / 32: (1,12,4096,4096,64) 1.790 / 1.742 /
     * 1.713 / 2.103 ms, (1,16,16384,16384,64) 37.20 / 36.15 / 35.47 / 41.0;
     * (4,16,4096,4096,128) CU = 8 / 16 / 32: 20.10 / 19.93 / 22.51;
     * registers unchanged (248, 255) */
    uint32_t cu = ctx->knobs.fused_cunroll ? ctx->knobs.fused_cunroll : 4 * u < 16 ? 4 * u : 16;
    c->cu = lean ? pow2_divisor(ke * tx, cu) : ke * tx;
    return true;
}

/* The first tile that fits the adapter's workgroup memory and size limits,
 * in the order measured fastest (docs/PERFORMANCE.md). {TY, TX, KE, RG}:
 * TY*TX threads, 4*RG*TY query rows, KE*TX keys a tile. On CPU adapters
 * (lavapipe) small tiles first. WGNN_FUSED_TILE=TYxTXxKExRG puts a tile
 * first, for tuning; WGNN_FUSED_FLAGS with 'l' takes the kernel's LEAN
 * variant (its tile then also from this list, or the knob), 'uN' its
 * unroll (default 4; the long-sequence tiles' own below), 'cN' its P.V
 * loop's (default 4 x the unroll, at most 16), 'q' with 'l' its Q read from global memory (QG; not
 * with sdpa_qkvpacked's bias), 'w' the swizzled layout without padding
 * (SWZ; D/4 a multiple of 8). S_q: a GPU starts at the 32-row tile where the
 * 64-row one pads S_q by over a tenth. */
static bool fused_tile(const wgnn_context *ctx, const sdpa_shape *sh, fused_cfg *c) {
    uint32_t d4 = (uint32_t)(sh->d / 4);
    uint64_t s_q = sh->s_q, s_kv = sh->s_kv;
    bool long_s = long_seq(sh), qbias = sh->qbias;
    static const uint32_t gpu[][4] = {{16, 16, 2, 1}, {8, 16, 2, 1}, {16, 8, 4, 1}, {8, 8, 4, 1}, {16, 4, 4, 1},
                                      {8, 4, 4, 1},  {4, 4, 4, 1},  {4, 2, 4, 1},  {2, 2, 4, 1}, {1, 2, 4, 1},
                                      {1, 1, 4, 1}};
    /* Long sequences on a GPU (S_q and S_kv >= 1024, no knob set): the LEAN
     * variant, unroll 8, 8 rows a thread (8x16x2x2) where it fits, else the
     * list above (D=128: 8x16x2x1). The H200, two calls: (1,12,4096,4096,64)
     * 2.013 -> 1.961 ms, (1,16,16384,16384,64) 42.14 -> 40.13, (4,16,4096,
     * 4096,128) 23.69 -> 22.77; at ViT size (S = 197) it is slower (0.023 ->
     * 0.024 ms), so short sequences keep the plain kernel. */
    static const uint32_t gpu_long[4] = {8, 16, 2, 2};
    /* D = 128 (16 < D/4 <= 32), long sequences, no q|k|v bias, no causal
     * mask: 128 query rows a workgroup at 256 threads with Q read from
     * global memory (QG), the 64-row tiles not fitting 48 KiB with an sQ
     * tile. The H200, (4,16,4096,4096,128), four calls: 22.61 -> 20.11-20.27
     * ms (8x16x2x1, 32 rows, before), K and V read from L2 a quarter as
     * often; 255 registers, one workgroup an SM (session 12,
     * docs/PERFORMANCE.md). Causal rows keep 8x16x2x1: 128-row tiles were
     * slower there (causal GQA prefill 16 x 8 heads, S = 2048: 0.882 ->
     * 1.072 ms; 4096: 3.156 -> 3.298, call 6). */
    static const uint32_t gpu_long_qg[4] = {16, 16, 2, 2};
    /* D = 64, long sequences: 8 rows and 4 keys a thread (64-key tiles,
     * half the broadcast Q reads of 2 keys per FMA), which fit 48 KiB only
     * in the SWZ layout with subgroup maxima (no sR), unroll 4. The H200
     * (session 12 call 5): (1,12,4096,4096,64) 1.933 -> 1.798 ms,
     * (1,16,16384,16384,64) 38.48 -> 37.20; 248 registers against 168, two
     * workgroups an SM against three. */
    static const uint32_t gpu_long_swz[4] = {8, 16, 4, 2};
    /* ViT's sequences (S_q and S_kv at most 256, 32-row tiles): 16 keys a
     * tile, 8 x 8 threads. The H200, ViT-B/16 at batch 32 (one call): 32.20
     * -> 32.03 ms a pipelined run, SigLIP-B/16 32.69 -> 32.57; batch 1 and
     * 8 within the spread; (32,12,197,197,64) 0.237 -> 0.227 ms. */
    static const uint32_t gpu_short[4] = {8, 8, 2, 1};
    static const uint32_t cpu[][4] = {{8, 4, 4, 2}, {4, 4, 4, 2}, {8, 4, 4, 1}, {8, 8, 4, 1}, {4, 4, 4, 1},
                                      {4, 2, 4, 1}, {2, 2, 4, 1}, {1, 2, 4, 1}, {1, 1, 4, 1}};
    bool is_cpu = wgnn__cpu_adapter(ctx);
    const uint32_t(*cand)[4] = is_cpu ? cpu : gpu;
    size_t n = is_cpu ? sizeof cpu / sizeof cpu[0] : sizeof gpu / sizeof gpu[0];
    bool knobs = ctx->knobs.fused_tile[0] != 0 || ctx->knobs.fused_lean >= 0 || ctx->knobs.fused_unroll != 0;
    bool lean_long = long_s && !is_cpu && !knobs;
    /* A GPU's first tile (64 query rows) leaves over a tenth of the rows
     * as padding where 32-row tiles leave less (ViT's S = 197: 256 rows
     * against 224): start at the 32-row tile. The H200, (32,12,197,197,64):
     * 0.265 -> 0.240 ms, (1,12,197,197,64): 0.0235 -> 0.0228. */
    size_t first = 1;
    if (!is_cpu && s_q > 64 && padded_rows(s_q, 32) < padded_rows(s_q, 64) &&
        (padded_rows(s_q, 64) - s_q) * 10 > s_q)
        first = 2;
    bool short_s = first == 2 && s_q <= 256 && s_kv <= 256 && !knobs;
    /* the session-12 long-sequence tiles first; where one does not fit
     * (no subgroups: sR then takes 4 KiB the 48 KiB SWZ tile lacks),
     * gpu_long and the list below */
    bool long_qg = lean_long && d4 > 16 && d4 <= 32 && !qbias && sh->causal == WGNN_SDPA_CAUSAL_NONE;
    bool long_swz = lean_long && d4 == 16;
    if (long_qg && tile_config(ctx, d4, gpu_long_qg, true, true, false, 8, c)) return true;
    if (long_swz && tile_config(ctx, d4, gpu_long_swz, true, false, true, 4, c)) return true;
    const uint32_t *e = lean_long ? gpu_long : short_s ? gpu_short : ctx->knobs.fused_tile;
    bool lean = ctx->knobs.fused_lean > 0 || lean_long;
    bool qg = lean && !qbias && ctx->knobs.fused_qg > 0, swz = ctx->knobs.fused_swz > 0;
    uint32_t u = ctx->knobs.fused_unroll ? ctx->knobs.fused_unroll : lean_long ? 8 : 4;
    for (size_t i = e[0] != 0 ? 0 : first; i < n + 1; i++)
        if (tile_config(ctx, d4, i == 0 ? e : cand[i - 1], lean, qg, swz, u, c)) return true;
    return false;
}

/* Split-KV when the query tiles alone leave the GPU mostly idle (few query
 * rows, long S_kv): aim at ~256 workgroups, two key tiles per split at least.
 * WGNN_FUSED_SPLIT=N forces N splits (tests, tuning). */
static void fused_split(const wgnn_context *ctx, const sdpa_shape *sh, fused_cfg *c) {
    uint64_t bc = (uint64_t)c->ke * c->tx, br = 4ull * c->rg * c->ty;
    uint64_t groups = sh->bh * ((sh->s_q + br - 1) / br);
    uint64_t want = 1;
    if (groups < 128 && sh->s_kv >= 4 * bc) {
        want = (256 + groups - 1) / groups;
        uint64_t most = sh->s_kv / (2 * bc);
        if (want > most) want = most;
    }
    if (ctx->knobs.fused_split) want = ctx->knobs.fused_split;
    if (want < 1) want = 1;
    uint64_t chunk = (sh->s_kv + want - 1) / want;
    chunk = (chunk + bc - 1) / bc * bc;
    uint64_t n = (sh->s_kv + chunk - 1) / chunk;
    /* partials must fit one binding */
    uint64_t rows = sh->bh * sh->s_q;
    while (n > 1 && n * rows * (sh->d * 4u) > ctx->limits.maxStorageBufferBindingSize) {
        chunk *= 2;
        n = (sh->s_kv + chunk - 1) / chunk;
    }
    c->n_split = (uint32_t)n;
    c->kv_chunk = (uint32_t)chunk;
}

/* Heads (of B*H) per fused dispatch: all of them when every tensor fits one
 * storage binding, else the most whose slices of q, k, v, out and mask each
 * fit, rounded so every slice starts at a multiple of
 * minStorageBufferOffsetAlignment. 0 when one head alone does not fit.
 * Counted in kv heads, each with its group of q heads, so that a chunk
 * never splits a group. */
static uint64_t fused_chunk(const wgnn_context *ctx, const sdpa_shape *sh) {
    uint64_t es = sh->f16 ? 2u : 4u, g = sh->group;
    uint64_t per[3] = {g * sh->s_q * sh->d * es, sh->s_kv * sh->d * es, sh->mask ? g * sh->s_q * sh->s_kv * 4u : 0};
    return wgnn__units_per_binding(ctx, per, 3, sh->bh / g) * g;
}

/* D = 128 (D/4 = 2 x TX with TX = 16), long sequences on a GPU:
 * shaders/sdpa_fused_vh.wgsl, Q resident in workgroup memory for 64 rows
 * and V staged in two halves of D, where the 128-row tile of fused_tile
 * reads Q through the L1 cache in its score loop. An H100, (4,16,4096,
 * 4096,128) two rounds: 19.93 -> 19.18 ms (float16 storage 22.34 -> 20.39;
 * (1,16,8192,8192,128) 19.92 -> 19.12), 228 registers; unrolls JU 4 and CU
 * 8 measured best of 1-4 and 4-32 (docs/PERFORMANCE.md, session 26). Not
 * for masks, causal rows, the KV cache or sdpa_qkvpacked's bias, nor where
 * the heads need more than one binding. WGNN_FUSED_VH=TY,RG,JU,CU takes it
 * wherever it can run (any D/4 = 2 x TX and sequence length; TX = 8 where
 * subgroups are smaller than 16, as on lavapipe), =0 never; the other fused
 * knobs (WGNN_FUSED_TILE, _FLAGS, _SPLIT) leave it off. */
static bool vh_tile(const wgnn_context *ctx, const sdpa_shape *sh, fused_cfg *c) {
    const wgnn__knobs *k = &ctx->knobs;
    uint32_t d4 = (uint32_t)(sh->d / 4), tx = ctx->info.subgroup_min_size >= 16 ? 16 : 8;
    bool forced = k->fused_vh[0] != 0;
    bool others = k->fused_tile[0] != 0 || k->fused_lean >= 0 || k->fused_unroll != 0 || k->fused_cunroll != 0 ||
                  k->fused_sg >= 0 || k->fused_split != 0;
    bool dflt = !k->fused_vh_off && !others && !wgnn__cpu_adapter(ctx) && tx == 16 && long_seq(sh);
    if (!forced && !dflt) return false;
    if (sh->mask || sh->kvlen || sh->qbias || sh->causal != WGNN_SDPA_CAUSAL_NONE || !ctx->has_subgroups ||
        ctx->info.subgroup_min_size < tx || d4 != 2 * tx || fused_chunk(ctx, sh) != sh->bh)
        return false;
    uint32_t ty = forced ? k->fused_vh[0] : 8, rg = forced ? k->fused_vh[1] : 2;
    uint64_t nt = (uint64_t)tx * ty, bc = 2ull * tx, br = 4ull * rg * ty;
    uint64_t reg = bc * d4, alt = bc * (d4 / 2) + rg * ty * bc;
    if (16ull * (br * d4 + (reg > alt ? reg : alt)) > ctx->limits.maxComputeWorkgroupStorageSize ||
        nt > ctx->limits.maxComputeInvocationsPerWorkgroup || ty > ctx->limits.maxComputeWorkgroupSizeY)
        return false;
    memset(c, 0, sizeof *c);
    c->vh = true;
    c->ty = ty;
    c->tx = tx;
    c->ke = 2;
    c->rg = rg;
    c->oj = 2;
    c->use_sg = true;
    c->ju = pow2_divisor(d4, forced ? k->fused_vh[2] : 4);
    c->cu = pow2_divisor((uint32_t)bc, forced ? k->fused_vh[3] : 8);
    c->pf = (uint32_t)((bc * d4 + nt - 1) / nt);
    c->n_split = 1;
    return true;
}

/* The whole fused plan, shared by wgnn_sdpa and wgnn_sdpa_scratch_bytes so
 * they cannot disagree: tile, heads per dispatch (*shc is one such chunk)
 * and key splits. */
static wgnn_status fused_plan(wgnn_context *ctx, const sdpa_shape *sh, fused_cfg *c, sdpa_shape *shc) {
    if (vh_tile(ctx, sh, c)) {
        *shc = *sh;
        return WGNN_OK;
    }
    if (!fused_tile(ctx, sh, c))
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa fused: D=%llu needs more workgroup memory than the device's "
                         "maxComputeWorkgroupStorageSize (%u bytes) has; use the three-pass implementation",
                         (unsigned long long)sh->d, ctx->limits.maxComputeWorkgroupStorageSize);
    *shc = *sh;
    shc->bh = fused_chunk(ctx, sh);
    if (shc->bh == 0)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa fused: one head's q, k, v or mask slice passes the device's "
                         "maxStorageBufferBindingSize (%llu bytes)",
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    fused_split(ctx, shc, c);
    return WGNN_OK;
}

/* Four elements of q, k, v (IN4) and of out (OUT4): float32 as vec4<f32>;
 * float16 as vec2<u32> words of two halves, converted with WGSL's core
 * unpack2x16float / pack2x16float, so float16 needs no shader-f16. */
const char wgnn__sdpa_in4_f32[] = "alias IN4 = vec4<f32>;\nfn ld4(x: IN4) -> vec4<f32> { return x; }\n";
const char wgnn__sdpa_in4_f16[] = "alias IN4 = vec2<u32>;\n"
                                "fn ld4(x: IN4) -> vec4<f32> { return vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y)); }\n";
const char wgnn__sdpa_out4_f32[] = "alias OUT4 = vec4<f32>;\nfn st4(x: vec4<f32>) -> OUT4 { return x; }\n";
const char wgnn__sdpa_out4_f16[] = "alias OUT4 = vec2<u32>;\n"
                                 "fn st4(x: vec4<f32>) -> OUT4 { return vec2<u32>(pack2x16float(x.xy), pack2x16float(x.zw)); }\n";

/* Where q, k, v and out rows are, in vec4s (the fused kernel's and its
 * reduce's strides): [B, H, S, D] tensors, or sdpa_qkvpacked's qkv
 * [B, S, 3, H, D] and out [B, S, H, D]. */
typedef struct sdpa_layout {
    uint32_t n_h;
    uint32_t q_rs, q_hs, q_bs, kv_rs, kv_hs, kv_bs, k_off, v_off, o_rs, o_hs, o_bs;
} sdpa_layout;

static bool layout_of(const sdpa_shape *sh, sdpa_layout *lo) {
    uint64_t d4 = sh->d / 4, h = sh->n_h && sh->n_h % sh->group == 0 ? sh->n_h : sh->group, hk = h / sh->group;
    uint64_t v[11];
    if (sh->packed) { /* group == 1 */
        uint64_t row = 3 * h * d4;
        uint64_t w[11] = {row, d4, sh->s_q * row, row, d4, sh->s_kv * row, h * d4, 2 * h * d4, h * d4, d4, sh->s_q * h * d4};
        memcpy(v, w, sizeof v);
    } else {
        uint64_t w[11] = {d4, sh->s_q * d4, h * sh->s_q * d4, d4, sh->s_kv * d4, hk * sh->s_kv * d4, 0, 0,
                          d4, sh->s_q * d4, h * sh->s_q * d4};
        memcpy(v, w, sizeof v);
    }
    for (int i = 0; i < 11; i++)
        if (v[i] > UINT32_MAX) return false;
    *lo = (sdpa_layout){(uint32_t)h,        (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2],
                        (uint32_t)v[3],     (uint32_t)v[4], (uint32_t)v[5], (uint32_t)v[6],
                        (uint32_t)v[7],     (uint32_t)v[8], (uint32_t)v[9], (uint32_t)v[10]};
    return true;
}

/* sdpa_qkvpacked's bias for a kernel's prelude (QBIAS, qkv_bias4) at binding `at` */
static void qbias_wgsl(char *buf, size_t size, bool on, int at) {
    if (on)
        snprintf(buf, size,
                 "const QBIAS: bool = true;\n@group(0) @binding(%d) var<storage, read> QB: array<vec4<f32>>;\n"
                 "fn qkv_bias4(i: u32) -> vec4<f32> { return QB[i]; }\n",
                 at);
    else
        snprintf(buf, size, "const QBIAS: bool = false;\nfn qkv_bias4(i: u32) -> vec4<f32> { return vec4<f32>(0.0); }\n");
}

/* sdpa_fused_reduce over the split-KV partials into out rows by lo's
 * strides (NULL: contiguous rows); qbias: sdpa_qkvpacked's bias (v's part
 * added to each row), or NULL. */
/* kv (optional, never with qbias): the decode kernel's splits, of which
 * only those below ceil(L / kv->blk) hold keys (and wrote partials). */
static wgnn_status split_reduce(wgnn_context *ctx, wgnn__plan *p, bool f16, uint64_t rows, uint32_t d4, uint32_t n_split,
                                int part_o, int part_ml, uint64_t ml_off, WGPUBuffer out, uint64_t off, uint64_t bytes,
                                uint64_t s_q, const sdpa_layout *lo, WGPUBuffer qbias, const wgnn__sdpa_kv_splits *kv) {
    uint32_t wg = wgnn__clamp_workgroup_size(ctx, 64), rx, ry;
    wgnn__const wgc[1] = {{"WG", wg}};
    char rpre[1536], qb[256];
    qbias_wgsl(qb, sizeof qb, qbias != NULL, 4);
    static const char *const k_splits[2] = {
        "fn n_splits(row: u32) -> u32 { return P.n_split; }\n",
        "@group(0) @binding(4) var<storage, read> lens: array<i32>;\n"
        "fn n_splits(row: u32) -> u32 {\n"
        "    let len = u32(clamp(lens[row / P.rows_b], 0, i32(P.s_kv)));\n"
        "    return min(P.n_split, (len + P.kv_blk - 1u) / P.kv_blk);\n"
        "}\n"};
    snprintf(rpre, sizeof rpre, "%s%s%s%s", f16 ? wgnn__sdpa_out4_f16 : wgnn__sdpa_out4_f32, qb,
             WGNN__PARAMS_WGSL(REDUCE_PARAMS), k_splits[kv != NULL]);
    const wgnn__pipe *reduce;
    wgnn_status s = wgnn__pipeline(ctx, "sdpa_fused_reduce", rpre, wgc, 1, &reduce);
    if (s == WGNN_OK)
        s = wgnn__compute_2d_workgroup_count(ctx, (rows * d4 + wg - 1) / wg, ctx->limits.maxComputeWorkgroupsPerDimension,
                                             "sdpa split-KV reduce", &rx, &ry);
    if (s != WGNN_OK) return s;
    reduce_params rp = {(uint32_t)rows, d4, n_split, 1, 1, 0, 0, d4, 1, 1, 0};
    if (kv) {
        rp.kv_blk = kv->blk;
        rp.rows_b = kv->rows_b;
        rp.s_kv = kv->s_kv;
    }
    if (lo) {
        rp.s_q = (uint32_t)s_q;
        rp.n_h = lo->n_h;
        rp.o_rs = lo->o_rs;
        rp.o_hs = lo->o_hs;
        rp.o_bs = lo->o_bs;
    }
    wgnn__dispatch *r = wgnn__plan_add(ctx, p, reduce, &rp, sizeof rp, rx, ry, 1);
    if (!r) return WGNN_ERR_OUT_OF_MEMORY;
    wgnn__plan_bind_scratch(r, (uint32_t)part_o, 0, (uint64_t)n_split * rows * d4 * 16u);
    wgnn__plan_bind_scratch(r, (uint32_t)part_ml, ml_off, (uint64_t)n_split * rows * 8u);
    wgnn__plan_bind(r, out, off, bytes);
    if (qbias) wgnn__plan_bind(r, qbias, 0, 0); /* binding 4: a bias or the lengths, never both */
    else if (kv) wgnn__plan_bind(r, kv->lens, 0, 0);
    return WGNN_OK;
}

/* sdpa_fused_reduce over the split-KV partials (part_o, part_ml: plan
 * scratch indices) of rows query rows into out's bytes [off, off + bytes):
 * the fused kernel's splits and the decode kernel's. */
wgnn_status wgnn__sdpa_split_reduce(wgnn_context *ctx, wgnn__plan *p, bool f16, uint64_t rows, uint32_t d4,
                                    uint32_t n_split, int part_o, int part_ml, uint64_t ml_off, WGPUBuffer out,
                                    uint64_t off, uint64_t bytes, const wgnn__sdpa_kv_splits *kv) {
    return split_reduce(ctx, p, f16, rows, d4, n_split, part_o, part_ml, ml_off, out, off, bytes, 0, NULL, NULL, kv);
}

/* Bindings 1-3 of a fused dispatch over the heads [bh0, bh0 + n): q (at
 * q_at where the caller gives one), k and v; sdpa_qkvpacked's one qkv
 * tensor three times, whole. bh0 and n are multiples of the group
 * (fused_chunk). */
static void bind_qkv(wgnn__dispatch *d, const sdpa_shape *sh, const wgnn_tensor *const *in,
                     const wgnn__binding *q_at, uint64_t bh0, uint64_t n) {
    uint64_t es = sh->f16 ? 2u : 4u, per_q = sh->s_q * sh->d * es, per_kv = sh->s_kv * sh->d * es;
    if (sh->packed) {
        for (int i = 0; i < 3; i++) wgnn__plan_bind(d, in[0]->buf, 0, 0);
        return;
    }
    if (q_at) wgnn__plan_bind_range(d, q_at, bh0 * per_q, n * per_q);
    else wgnn__plan_bind(d, in[0]->buf, bh0 * per_q, n * per_q);
    wgnn__plan_bind(d, in[1]->buf, bh0 / sh->group * per_kv, n / sh->group * per_kv);
    wgnn__plan_bind(d, in[2]->buf, bh0 / sh->group * per_kv, n / sh->group * per_kv);
}

/* row_max_sg / row_sum_sg for the kernels' preludes: the max and the sum
 * over the TX lanes of a row by subgroup shuffles (after "enable
 * subgroups;"), or stubs that are never called */
static const char k_row_sg[] =
    "fn row_max_sg(x: vec4<f32>) -> vec4<f32> {\n    var r = x;\n"
    "    for (var off = 1u; off < TX; off = off * 2u) { r = max(r, subgroupShuffleXor(r, off)); }\n"
    "    return r;\n}\n"
    "fn row_sum_sg(x: vec4<f32>) -> vec4<f32> {\n    var r = x;\n"
    "    for (var off = 1u; off < TX; off = off * 2u) { r += subgroupShuffleXor(r, off); }\n"
    "    return r;\n}\n";
static const char k_row_stub[] = "fn row_max_sg(x: vec4<f32>) -> vec4<f32> { return x; }\n"
                                 "fn row_sum_sg(x: vec4<f32>) -> vec4<f32> { return x; }\n";

/* The kernels' Params for a dispatch of n_groups workgroups over the n
 * heads from bh0 (sdpa_fused's KVLEN reads bh0; kv_chunk and causal_off
 * are 0 where the kernel takes no splits or causal rows). */
static fused_params params_of(const sdpa_shape *sh, const sdpa_layout *lo, uint64_t n_groups, uint64_t n_qtiles,
                              uint32_t kv_chunk, uint64_t n, int32_t causal_off, uint64_t bh0) {
    return (fused_params){(uint32_t)n_groups, (uint32_t)n_qtiles, (uint32_t)sh->s_q, (uint32_t)sh->s_kv,
                          (float)(sh->scale * WGNN__SDPA_LOG2E), kv_chunk, (uint32_t)n, (uint32_t)sh->group,
                          causal_off, (uint32_t)bh0, lo->n_h, (uint32_t)(sh->d / 4), lo->q_rs, lo->q_hs, lo->q_bs,
                          lo->kv_rs, lo->kv_hs, lo->kv_bs, lo->k_off, lo->v_off, lo->o_rs, lo->o_hs, lo->o_bs};
}

/* sdpa_fused_vh's one dispatch (vh_tile's c): every head at once */
static wgnn_status plan_vh(wgnn_context *ctx, const sdpa_shape *sh, const fused_cfg *c, const wgnn_tensor *const *in,
                           const wgnn__binding *q_at, wgnn_tensor *out, wgnn__plan *p, const sdpa_layout *lo) {
    uint32_t d4 = (uint32_t)(sh->d / 4), nt = c->tx * c->ty, bc = 2 * c->tx;
    char prelude[2560];
    snprintf(prelude, sizeof prelude,
             "enable subgroups;\n%sconst D4: u32 = %uu;\nconst RG: u32 = %uu;\nconst JU: u32 = %uu;\n"
             "const CU: u32 = %uu;\nconst PFK: u32 = %uu;\nconst PFV: u32 = %uu;\n%s%s%s",
             WGNN__PARAMS_WGSL(FUSED_PARAMS), d4, c->rg, c->ju, c->cu, c->pf, (bc * d4 / 2 + nt - 1) / nt, sh->f16 ? wgnn__sdpa_in4_f16 : wgnn__sdpa_in4_f32,
             sh->f16 ? wgnn__sdpa_out4_f16 : wgnn__sdpa_out4_f32, k_row_sg);
    wgnn__const consts[2] = {{"TY", c->ty}, {"TX", c->tx}};
    const wgnn__pipe *pipe;
    wgnn_status s = wgnn__pipeline(ctx, "sdpa_fused_vh", prelude, consts, 2, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t br = 4ull * c->rg * c->ty, n_qtiles = (sh->s_q + br - 1) / br, n_groups = sh->bh * n_qtiles;
    if (n_groups > UINT32_MAX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa fused: %llu workgroups is too many", (unsigned long long)n_groups);
    uint32_t gx, gy;
    s = wgnn__compute_2d_workgroup_count(ctx, n_groups, ctx->limits.maxComputeWorkgroupsPerDimension, "sdpa fused", &gx,
                                         &gy);
    if (s != WGNN_OK) return s;
    fused_params fp = params_of(sh, lo, n_groups, n_qtiles, 0, sh->bh, 0, 0);
    wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &fp, sizeof fp, gx, gy, 1);
    if (!d) return WGNN_ERR_OUT_OF_MEMORY;
    bind_qkv(d, sh, in, q_at, 0, sh->bh);
    wgnn__plan_bind(d, out->buf, 0, 0);
    return WGNN_OK;
}

wgnn_status wgnn__sdpa_plan_fused(wgnn_context *ctx, const sdpa_shape *sh, const wgnn_tensor *const *in,
                                  const wgnn__binding *q_at, wgnn_tensor *out, wgnn__plan *p) {
    uint32_t d4 = (uint32_t)(sh->d / 4);
    fused_cfg c;
    sdpa_shape shc; /* one chunk of heads: what a dispatch sees */
    wgnn_status s = fused_plan(ctx, sh, &c, &shc);
    if (s != WGNN_OK) return s;
    uint64_t chunk = shc.bh;
    bool split = c.n_split > 1;
    sdpa_layout lo;
    if (!layout_of(sh, &lo)) return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa fused: a stride passes 2^32 vec4s");
    if (c.vh) return plan_vh(ctx, sh, &c, in, q_at, out, p, &lo);
    if (sh->packed && chunk < sh->bh)
        return wgnn__err(ctx, WGNN_ERR_LIMIT,
                         "sdpa_qkvpacked: qkv (%llu bytes) passes the device's maxStorageBufferBindingSize (%llu "
                         "bytes); use sdpa on q, k and v [B, H, S, D]",
                         (unsigned long long)(3 * sh->bh * sh->s_q * sh->d * (sh->f16 ? 2u : 4u)),
                         (unsigned long long)ctx->limits.maxStorageBufferBindingSize);
    char prelude[2560], qb[256];
    qbias_wgsl(qb, sizeof qb, sh->qbias, 9);
    snprintf(prelude, sizeof prelude,
             "%s%s%sconst D4: u32 = %uu;\nconst KE: u32 = %uu;\nconst RG: u32 = %uu;\nconst OJ: u32 = %uu;\n"
             "const PF: u32 = %uu;\nconst LEAN: bool = %s;\nconst JU: u32 = %uu;\nconst CU: u32 = %uu;\n"
             "const SRN: u32 = %uu;\nconst QG: bool = %s;\nconst SWZ: bool = %s;\n%s%s%s",
             c.use_sg ? "enable subgroups;\n" : "", WGNN__PARAMS_WGSL(FUSED_PARAMS), qb, d4, c.ke, c.rg, c.oj, c.pf,
             c.lean ? "true" : "false", c.ju, c.cu, c.srn, c.qg ? "true" : "false", c.swz ? "true" : "false", sh->f16 ? wgnn__sdpa_in4_f16 : wgnn__sdpa_in4_f32,
             sh->f16 && !split ? wgnn__sdpa_out4_f16 : wgnn__sdpa_out4_f32, c.use_sg ? k_row_sg : k_row_stub);
    wgnn__const consts[8] = {{"TY", c.ty},
                             {"TX", c.tx},
                             {"HAS_MASK", sh->mask ? 1 : 0},
                             {"SACC", c.sacc ? 1 : 0},
                             {"SPLIT", split ? 1 : 0},
                             {"USE_SG", c.use_sg ? 1 : 0},
                             {"CAUSAL", sh->causal != WGNN_SDPA_CAUSAL_NONE ? 1 : 0},
                             {"KVLEN", sh->kvlen ? 1 : 0}};
    const wgnn__pipe *pipe;
    s = wgnn__pipeline(ctx, "sdpa_fused", prelude, consts, 8, &pipe);
    if (s != WGNN_OK) return s;
    uint64_t br = 4ull * c.rg * c.ty;
    uint64_t n_qtiles = (sh->s_q + br - 1) / br;
    uint64_t es = sh->f16 ? 2u : 4u;
    uint64_t per_q = sh->s_q * sh->d * es, per_m = sh->s_q * sh->s_kv * 4u;
    uint32_t maxd = ctx->limits.maxComputeWorkgroupsPerDimension;
    if (chunk * n_qtiles * c.n_split > UINT32_MAX)
        return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa fused: %llu workgroups is too many",
                         (unsigned long long)(chunk * n_qtiles * c.n_split));
    int part_o = -1, part_ml = -1;
    if (split) {
        uint64_t rows = chunk * sh->s_q;
        part_o = wgnn__plan_scratch(p, (uint64_t)c.n_split * rows * sh->d * 4u);
        part_ml = wgnn__plan_scratch(p, (uint64_t)c.n_split * rows * 8u);
    }
    const wgnn_tensor *m = sh->mask ? in[3] : NULL;
    WGPUBuffer qbias = sh->qbias ? in[3]->buf : NULL; /* packed: no mask */
    if (sh->kvlen && sh->bh / sh->n_h > UINT32_MAX) return wgnn__err(ctx, WGNN_ERR_LIMIT, "sdpa_kvcache: batch too large");
    for (uint64_t bh0 = 0; bh0 < sh->bh; bh0 += chunk) {
        uint64_t n = sh->bh - bh0 < chunk ? sh->bh - bh0 : chunk;
        uint64_t n_groups = n * n_qtiles * c.n_split, rows = n * sh->s_q;
        uint32_t gx, gy;
        s = wgnn__compute_2d_workgroup_count(ctx, n_groups, maxd, "sdpa fused", &gx, &gy);
        if (s != WGNN_OK) return s;
        int64_t off = sh->causal == WGNN_SDPA_CAUSAL_BOTTOM_RIGHT ? (int64_t)sh->s_kv - (int64_t)sh->s_q : 0;
        if (off < INT32_MIN) off = INT32_MIN;
        fused_params fp = params_of(sh, &lo, n_groups, n_qtiles, c.kv_chunk, n, (int32_t)off, bh0);
        wgnn__dispatch *d = wgnn__plan_add(ctx, p, pipe, &fp, sizeof fp, gx, gy, 1);
        if (!d) return WGNN_ERR_OUT_OF_MEMORY;
        bind_qkv(d, sh, in, q_at, bh0, n);
        if (m) wgnn__plan_bind(d, m->buf, bh0 * per_m, n * per_m);
        else wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, NULL, false), 0, 0);
        /* bindings 7, 8: cache_seqlens (one int32 per batch element, read
         * whole) and the data-error words */
        WGPUBuffer lens = wgnn__make_optional_binding(ctx, sh->kvlen ? in[3]->buf : NULL, false);
        WGPUBuffer flag = wgnn__data_error_buffer(ctx);
        if (split) {
            wgnn__plan_bind_scratch(d, (uint32_t)part_o, 0, 0);
            wgnn__plan_bind_scratch(d, (uint32_t)part_ml, 0, 0);
            wgnn__plan_bind(d, lens, 0, 0);
            wgnn__plan_bind(d, flag, 0, 0);
            if (qbias) wgnn__plan_bind(d, qbias, 0, 0); /* binding 9 */
            s = split_reduce(ctx, p, sh->f16, rows, d4, c.n_split, part_o, part_ml, 0, out->buf,
                             sh->packed ? 0 : bh0 * per_q, sh->packed ? 0 : n * per_q, sh->s_q, &lo, qbias, NULL);
            if (s != WGNN_OK) return s;
        } else {
            wgnn__plan_bind(d, out->buf, sh->packed ? 0 : bh0 * per_q, sh->packed ? 0 : n * per_q);
            wgnn__plan_bind(d, wgnn__make_optional_binding(ctx, NULL, true), 0, 0);
            wgnn__plan_bind(d, lens, 0, 0);
            wgnn__plan_bind(d, flag, 0, 0);
            if (qbias) wgnn__plan_bind(d, qbias, 0, 0); /* binding 9 */
        }
    }
    return WGNN_OK;
}

uint64_t wgnn__sdpa_fused_rows(const wgnn_context *ctx, const sdpa_shape *sh) {
    fused_cfg c;
    return vh_tile(ctx, sh, &c) || fused_tile(ctx, sh, &c) ? 4ull * c.rg * c.ty : 0;
}

wgnn_status wgnn__sdpa_fused_fits(wgnn_context *ctx, const sdpa_shape *sh) {
    fused_cfg c;
    sdpa_shape shc;
    return fused_plan(ctx, sh, &c, &shc);
}
