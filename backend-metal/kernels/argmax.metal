// Greedy pick on the device (MetalBackend.argmax).
//
// Reference: out[t] = argmax_r logits[t, r], ties -> lower id; -1 (TemperatureDraw.NOT_FINITE) when the row holds NaN
// or an infinity (tested by the exponent bits: fast math may fold isnan away), which the executor's guard reports

#include "common.h"

// ---- argmax over each row of logits: ties to the lower index ---------------------------------------
struct ArgmaxParams { uint rows; uint vocab; }; // one threadgroup per row: rows unread

inline bool better(float v, uint i, float bv, uint bi) { return v > bv || (v == bv && i < bi); }

KERNEL(argmax)(BUF(device const float *, logits, 0), BUF(device int *, out, 1), PARAMS(ArgmaxParams, p, 2),
               TG_POS(row), TID(tid), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    TG_ARRAY(float, bestV, 32);
    TG_ARRAY(uint, bestI, 32);
    TG_ARRAY(uint, bad, 1); // any thread read NaN/Inf
    if (tid == 0) bad[0] = 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float bv = NEG_BIG;
    uint bi = 0xffffffffu;
    for (uint c = tid; c < p.vocab; c += nt) {
        float v = logits[row * p.vocab + c];
        if ((as_type<uint>(v) & 0x7f800000u) == 0x7f800000u) bad[0] = 1;
        else if (better(v, c, bv, bi)) { bv = v; bi = c; }
    }
    for (ushort off = 16; off > 0; off /= 2) {
        float ov = simd_shuffle_down(bv, off);
        uint oi = simd_shuffle_down(bi, off);
        if (better(ov, oi, bv, bi)) { bv = ov; bi = oi; }
    }
    if (lane == 0) { bestV[sg] = bv; bestI[sg] = bi; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        uint nsg = (nt + 31) / 32;
        for (uint i = 1; i < nsg; i++)
            if (better(bestV[i], bestI[i], bv, bi)) { bv = bestV[i]; bi = bestI[i]; }
        out[row] = bad[0] != 0 ? -1 : int(bi);
    }
}
