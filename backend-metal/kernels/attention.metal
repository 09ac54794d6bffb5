// Attention with sinks, causal, sliding window, GQA; then the KV-cache store (io.gossgpu.device.AttentionPipeline).
// Every kernel takes its buffers, then one AttentionParams (the same struct in attention.cu and attention.cl); it
// indexes the sequence's rows from p.row0 and reads its first position (start) from pos[0].
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
// The scalars of every attention kernel (io.gossgpu.device.AttentionParams); a kernel leaves the fields it has no use
// for unread (splits, tileQueries: Metal has no split kernels).
struct AttentionParams {
    uint tokens; uint row0; uint heads; uint group; uint headDim; uint kvDim; uint slots; uint window; float scale; uint splits;
    uint tileQueries; uint first; uint kvType;
};

KERNEL(attention)(BUF(device const float *, q, 0), BUF(device const float *, k, 1), BUF(device const float *, v, 2),
                  BUF(device const float *, kc, 3), BUF(device const float *, vc, 4), BUF(device const float *, sinks, 5),
                  BUF(device float *, out, 6), BUF(device const int *, positions, 7), PARAMS(AttentionParams, p, 8), TG_POS(tg),
                  SIMD_LANE(lane)) {
    uint start = uint(positions[0]), hd = p.headDim, qDim = p.heads * p.headDim, kvDim = p.kvDim;
    uint h = tg % p.heads, i = tg / p.heads;
    uint pos = start + i, g = h / p.group;
    uint lo = (p.window > 0 && pos + 1 > p.window) ? pos + 1 - p.window : 0;
    device const float *qr = q + (p.row0 + i) * qDim + h * hd;
    float acc[HD_MAX];
    for (uint d = 0; d < hd; d++) acc[d] = 0.0f;
    float m = NEG_BIG, z = 0.0f;
    bool seen = false;
    for (uint j = lo + lane; j <= pos; j += 32) {
        device const float *kr;
        device const float *vr;
        if (j < start) {
            uint slot = j % p.slots;
            kr = kc + slot * kvDim + g * hd;
            vr = vc + slot * kvDim + g * hd;
        } else {
            kr = k + (p.row0 + j - start) * kvDim + g * hd;
            vr = v + (p.row0 + j - start) * kvDim + g * hd;
        }
        float s = 0.0f;
        for (uint d = 0; d < hd; d++) s += qr[d] * kr[d];
        s *= p.scale;
        if (!seen || s > m) {
            float f = seen ? exp(m - s) : 0.0f;
            z *= f;
            for (uint d = 0; d < hd; d++) acc[d] *= f;
            m = s;
            seen = true;
        }
        float e = exp(s - m);
        z += e;
        for (uint d = 0; d < hd; d++) acc[d] += e * vr[d];
    }
    float sink = sinks[h];
    float M = max(simd_max(m), sink);
    float f = seen ? exp(m - M) : 0.0f;
    float Z = simd_sum(z * f) + exp(sink - M);
    for (uint d = 0; d < hd; d++) {
        float o = simd_sum(acc[d] * f);
        if (lane == 0) out[(p.row0 + i) * qDim + h * hd + d] = o / Z;
    }
}

// Stores rows first..T-1 of the sequence's k/v into the cache (slot = position % slots).
KERNEL(kv_store)(BUF(device const float *, k, 0), BUF(device const float *, v, 1), BUF(device float *, kc, 2),
                 BUF(device float *, vc, 3), BUF(device const int *, positions, 4), PARAMS(AttentionParams, p, 5), GRID_POS(gid)) {
    if (gid >= (p.tokens - p.first) * p.kvDim) return;
    uint i = p.first + gid / p.kvDim, c = gid % p.kvDim;
    uint slot = (uint(positions[0]) + i) % p.slots;
    kc[slot * p.kvDim + c] = k[(p.row0 + i) * p.kvDim + c];
    vc[slot * p.kvDim + c] = v[(p.row0 + i) * p.kvDim + c];
}
