/* sdpa_ref.c - CPU reference attention in double precision. */
#include "wgnn.h"

#include <math.h>
#include <stdlib.h>

void wgnn_ref_sdpa(const float *q, const float *k, const float *v, const float *mask, uint64_t batch,
                   uint64_t s_q, uint64_t s_kv, uint64_t d, double scale, float *out) {
    double *s = malloc((size_t)s_kv * sizeof *s);
    double *acc = malloc((size_t)d * sizeof *acc);
    if (!s || !acc) { /* reference only: leave out untouched rather than abort */
        free(s);
        free(acc);
        return;
    }
    for (uint64_t b = 0; b < batch; b++) {
        const float *kb = k + b * s_kv * d, *vb = v + b * s_kv * d;
        for (uint64_t i = 0; i < s_q; i++) {
            const float *qi = q + (b * s_q + i) * d;
            const float *mi = mask ? mask + (b * s_q + i) * s_kv : NULL;
            double m = -INFINITY;
            for (uint64_t j = 0; j < s_kv; j++) {
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
