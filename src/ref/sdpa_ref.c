/* sdpa_ref.c - CPU reference attention in double precision. */
#include "wgnn.h"

#include <math.h>
#include <stdlib.h>

void wgnn_ref_sdpa(const float *q, const float *k, const float *v, const float *mask, uint64_t batch,
                   uint64_t s_q, uint64_t s_kv, uint64_t d, double scale, float *out) {
    wgnn_ref_sdpa_ex(q, k, v, mask, batch, 1, s_q, s_kv, d, scale, WGNN_SDPA_CAUSAL_NONE, out);
}

void wgnn_ref_sdpa_ex(const float *q, const float *k, const float *v, const float *mask, uint64_t batch,
                      uint64_t group, uint64_t s_q, uint64_t s_kv, uint64_t d, double scale, int causal,
                      float *out) {
    if (group == 0) group = 1;
    double *s = malloc((size_t)s_kv * sizeof *s);
    double *acc = malloc((size_t)d * sizeof *acc);
    if (!s || !acc) { /* reference only: leave out untouched rather than abort */
        free(s);
        free(acc);
        return;
    }
    for (uint64_t b = 0; b < batch; b++) {
        const float *kb = k + b / group * s_kv * d, *vb = v + b / group * s_kv * d;
        for (uint64_t i = 0; i < s_q; i++) {
            const float *qi = q + (b * s_q + i) * d;
            const float *mi = mask ? mask + (b * s_q + i) * s_kv : NULL;
            /* keys [0, vis) are visible to row i */
            int64_t vis = (int64_t)s_kv;
            if (causal == WGNN_SDPA_CAUSAL_TOP_LEFT) vis = (int64_t)i + 1;
            else if (causal == WGNN_SDPA_CAUSAL_BOTTOM_RIGHT) vis = (int64_t)i + 1 + (int64_t)s_kv - (int64_t)s_q;
            if (vis > (int64_t)s_kv) vis = (int64_t)s_kv;
            double m = -INFINITY;
            for (uint64_t j = 0; j < s_kv; j++) {
                if ((int64_t)j >= vis) {
                    s[j] = -INFINITY;
                    continue;
                }
                double dot = 0;
                for (uint64_t x = 0; x < d; x++) dot += (double)qi[x] * (double)kb[j * d + x];
                s[j] = dot * scale + (mi ? (double)mi[j] : 0.0);
                if (s[j] > m) m = s[j];
            }
            for (uint64_t x = 0; x < d; x++) acc[x] = 0;
            float *oi = out + (b * s_q + i) * d;
            if (m == -INFINITY) { /* fully masked row: zeros, as PyTorch */
                for (uint64_t x = 0; x < d; x++) oi[x] = 0.0f;
                continue;
            }
            double l = 0;
            for (uint64_t j = 0; j < s_kv; j++) {
                if (s[j] == -INFINITY) continue;
                double p = exp(s[j] - m);
                l += p;
                for (uint64_t x = 0; x < d; x++) acc[x] += p * (double)vb[j * d + x];
            }
            for (uint64_t x = 0; x < d; x++) oi[x] = (float)(acc[x] / l);
        }
    }
    free(s);
    free(acc);
}
