// Attention with sinks, causal, sliding window, GQA; then the KV-cache store (MetalBackend.attention).
//
// Reference: row i (position p = start + i), query head h, KV head g = h / group;
//   keys j in [lo, p], lo = max(0, p - W + 1) when window W > 0 else 0;
//   k/v of j from cache slot j % slots when j < start, else row j - start of k/v;
//   s_j = (q_h . k_j) * scale;  sink S[h] not scaled;  m = max(max_j s_j, S[h]);
//   Z = sum_j e^(s_j - m) + e^(S[h] - m);  out[i, h*hd + d] = sum_j e^(s_j - m) / Z * v_j[d]
//   kv_store: for i in [first, T): slot = (start + i) % slots; kc[slot] = k[i]; vc[slot] = v[i]

#include "common.h"

// ---- attention with sinks, causal, optional sliding window, GQA; one simdgroup per (token, head) ------
// Lanes take keys j = lo + lane, lo + lane + 32, ... with an online softmax each, merged at the end.
#define HD_MAX 256
struct AttnParams { uint T; uint start; uint heads; uint hd; uint group; uint slots; uint window; uint qDim; uint kvDim; float scale; };

KERNEL(attention)(BUF(device const float *, q, 0), BUF(device const float *, k, 1), BUF(device const float *, v, 2),
                  BUF(device const float *, kc, 3), BUF(device const float *, vc, 4), BUF(device const float *, sinks, 5),
                  BUF(device float *, out, 6), PARAMS(AttnParams, p, 7), TG_POS(tg), SIMD_LANE(lane)) {
    uint h = tg % p.heads, i = tg / p.heads;
    uint pos = p.start + i, g = h / p.group;
    uint lo = (p.window > 0 && pos + 1 > p.window) ? pos + 1 - p.window : 0;
    device const float *qr = q + i * p.qDim + h * p.hd;
    float acc[HD_MAX];
    for (uint d = 0; d < p.hd; d++) acc[d] = 0.0f;
    float m = NEG_BIG, z = 0.0f;
    bool seen = false;
    for (uint j = lo + lane; j <= pos; j += 32) {
        device const float *kr;
        device const float *vr;
        if (j < p.start) {
            uint slot = j % p.slots;
            kr = kc + slot * p.kvDim + g * p.hd;
            vr = vc + slot * p.kvDim + g * p.hd;
        } else {
            kr = k + (j - p.start) * p.kvDim + g * p.hd;
            vr = v + (j - p.start) * p.kvDim + g * p.hd;
        }
        float s = 0.0f;
        for (uint d = 0; d < p.hd; d++) s += qr[d] * kr[d];
        s *= p.scale;
        if (!seen || s > m) {
            float f = seen ? exp(m - s) : 0.0f;
            z *= f;
            for (uint d = 0; d < p.hd; d++) acc[d] *= f;
            m = s;
            seen = true;
        }
        float e = exp(s - m);
        z += e;
        for (uint d = 0; d < p.hd; d++) acc[d] += e * vr[d];
    }
    float sink = sinks[h];
    float M = max(simd_max(m), sink);
    float f = seen ? exp(m - M) : 0.0f;
    float Z = simd_sum(z * f) + exp(sink - M);
    for (uint d = 0; d < p.hd; d++) {
        float o = simd_sum(acc[d] * f);
        if (lane == 0) out[i * p.qDim + h * p.hd + d] = o / Z;
    }
}

// Stores rows first..T-1 of the batch's k/v into the cache (slot = position % slots).
struct StoreParams { uint T; uint start; uint slots; uint kvDim; uint first; };

KERNEL(kv_store)(BUF(device const float *, k, 0), BUF(device const float *, v, 1), BUF(device float *, kc, 2),
                 BUF(device float *, vc, 3), PARAMS(StoreParams, p, 4), GRID_POS(gid)) {
    if (gid >= (p.T - p.first) * p.kvDim) return;
    uint i = p.first + gid / p.kvDim, c = gid % p.kvDim;
    uint slot = (p.start + i) % p.slots;
    kc[slot * p.kvDim + c] = k[i * p.kvDim + c];
    vc[slot * p.kvDim + c] = v[i * p.kvDim + c];
}
