// The router's top-k and softmax (MetalBackend.router), after the router logits (dense.metal).
//
// Reference: per token t, over its E logits l:
//   experts[t, 0..k-1] = the k largest logits, descending, ties -> lower expert
//   w[t, j] = e^(l[experts[t, j]] - max) / sum_j' e^(l[experts[t, j']] - max)

#include "common.h"

// ---- router: top-k (ties to the lower expert) and softmax over the k, one thread per token ---------
struct TopKParams { uint tokens; uint experts; uint k; };

KERNEL(topk_softmax)(BUF(device const float *, logits, 0), BUF(device int *, experts, 1), BUF(device float *, weights, 2),
                     PARAMS(TopKParams, p, 3), GRID_POS(t)) {
    if (t >= p.tokens) return;
    device const float *g = logits + t * p.experts;
    uint taken[8] = {0, 0, 0, 0, 0, 0, 0, 0}; // E <= 256 (checked on the host)
    for (uint j = 0; j < p.k; j++) {
        uint best = 0xffffffffu;
        for (uint e = 0; e < p.experts; e++) {
            if ((taken[e / 32] >> (e % 32)) & 1u) continue;
            if (best == 0xffffffffu || g[e] > g[best]) best = e;
        }
        taken[best / 32] |= 1u << (best % 32);
        experts[t * p.k + j] = int(best);
    }
    float m = g[experts[t * p.k]];
    float z = 0.0f;
    for (uint j = 0; j < p.k; j++) z += exp(g[experts[t * p.k + j]] - m);
    for (uint j = 0; j < p.k; j++) weights[t * p.k + j] = exp(g[experts[t * p.k + j]] - m) / z;
}
