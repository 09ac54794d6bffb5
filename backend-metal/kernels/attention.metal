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
//
// The cache stores its numbers as p.kvType says (io.gossgpu.backend.KvType, its ordinal): a cached k/v number reads
// back as round(x) (KvType.round); kv_round rounds the batch's own rows of k and v in place first, so the batch
// attends to them as later steps will read them from the cache.
#include "common.h"

// The scalars of every attention kernel (io.gossgpu.device.AttentionParams); a kernel leaves the fields it has no use
// for unread (splits, tileQueries: Metal has no split kernels).
struct AttentionParams {
    uint tokens; uint row0; uint heads; uint group; uint headDim; uint kvDim; uint slots; uint window; float scale; uint splits;
    uint tileQueries; uint first; uint kvType;
};

// ---- KV cache types (p.kvType: 0 F32, 1 F16, 2 BF16, 3 Q8_0) --------------------------------------
//   F16: IEEE half, round to nearest even;  BF16: the upper 16 bits of the float after round to nearest even;
//   Q8_0: blocks of 32 consecutive numbers of a row (the last block of a row may be shorter):
//     amax = max |x|, d = amax / 127, dh = f16(d), q = clamp(rint(x / d), -127, 127) (q = 0 when d = 0), x' = q * dh.
// A cache of `slots` rows of kvDim numbers: F32 floats, F16/BF16 ushorts; Q8_0 first every row's quants (int8,
// row-major, slots * kvDim bytes), then every row's scales (f16; row s, block b at index s * blocks + b of the scale
// region, which starts at byte slots * kvDim and is read and written a byte at a time: it may be odd-aligned).
#define KV_F32 0u
#define KV_F16 1u
#define KV_BF16 2u
#define KV_Q8_0 3u
#define Q8_BLOCK 32u

inline ushort f16_bits(float x) { return as_type<ushort>(half(x)); }
inline float f16_value(ushort b) { return float(as_type<half>(b)); }
// round to nearest even on the upper 16 bits; a NaN stays a (quiet) NaN
inline ushort bf16_bits(float x) {
    uint b = as_type<uint>(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) return ushort((b >> 16) | 0x40u);
    return ushort((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
inline float bf16_value(ushort b) { return as_type<float>(uint(b) << 16); }
inline uint q8_blocks(uint kvDim) { return (kvDim + Q8_BLOCK - 1) / Q8_BLOCK; }
// d = max |x[0 .. n)| / 127, the unrounded scale of a block
inline float q8_scale(device const float *x, uint n) {
    float amax = 0.0f;
    for (uint i = 0; i < n; i++) amax = max(amax, fabs(x[i]));
    return amax / 127.0f;
}
inline int q8_quant(float x, float d) { return d == 0.0f ? 0 : int(clamp(rint(x / d), -127.0f, 127.0f)); }
inline float q8_value(uchar q) { return float(int(uint(q) ^ 0x80u) - 128); } // int8 two's complement
// Byte offset of the scale of (slot, block) in a Q8_0 cache.
inline uint q8_scale_at(uint slots, uint kvDim, uint slot, uint block) {
    return slots * kvDim + 2u * (slot * q8_blocks(kvDim) + block);
}

// The f16 scale of block `block` of row `slot` of a Q8_0 cache.
inline float q8_dh(device const uchar *c, uint slots, uint kvDim, uint slot, uint block) {
    uint s = q8_scale_at(slots, kvDim, slot, block);
    return f16_value(ushort(uint(c[s]) | (uint(c[s + 1]) << 8)));
}

// sum_d x[d] * row[d] over the n numbers from column col of row `slot` of a typed cache (F16, BF16 or Q8_0).
inline float kv_dot(device const float *x, device const uchar *c, uint type, uint slots, uint kvDim, uint slot, uint col,
                    uint n) {
    uint at = slot * kvDim + col;
    float s = 0.0f;
    if (type == KV_Q8_0) {
        float dh = 0.0f;
        for (uint d = 0; d < n; d++) {
            if (d == 0 || (col + d) % Q8_BLOCK == 0) dh = q8_dh(c, slots, kvDim, slot, (col + d) / Q8_BLOCK);
            s += x[d] * (q8_value(c[at + d]) * dh);
        }
        return s;
    }
    device const ushort *h = (device const ushort *) c + at;
    if (type == KV_F16)
        for (uint d = 0; d < n; d++) s += x[d] * f16_value(h[d]);
    else
        for (uint d = 0; d < n; d++) s += x[d] * bf16_value(h[d]);
    return s;
}

// acc[d] += e * row[d] over the n numbers from column col of row `slot` of a typed cache (F16, BF16 or Q8_0).
inline void kv_axpy(thread float *acc, float e, device const uchar *c, uint type, uint slots, uint kvDim, uint slot,
                    uint col, uint n) {
    uint at = slot * kvDim + col;
    if (type == KV_Q8_0) {
        float dh = 0.0f;
        for (uint d = 0; d < n; d++) {
            if (d == 0 || (col + d) % Q8_BLOCK == 0) dh = q8_dh(c, slots, kvDim, slot, (col + d) / Q8_BLOCK);
            acc[d] += e * (q8_value(c[at + d]) * dh);
        }
        return;
    }
    device const ushort *h = (device const ushort *) c + at;
    if (type == KV_F16)
        for (uint d = 0; d < n; d++) acc[d] += e * f16_value(h[d]);
    else
        for (uint d = 0; d < n; d++) acc[d] += e * bf16_value(h[d]);
}

// x[0 .. n) (n <= 32: one Q8_0 block of a row) in place to what a cache of `type` stores.
inline void kv_round_block(device float *x, uint n, uint type) {
    if (type == KV_F16)
        for (uint i = 0; i < n; i++) x[i] = f16_value(f16_bits(x[i]));
    else if (type == KV_BF16)
        for (uint i = 0; i < n; i++) x[i] = bf16_value(bf16_bits(x[i]));
    else if (type == KV_Q8_0) {
        float d = q8_scale(x, n), dh = f16_value(f16_bits(d));
        for (uint i = 0; i < n; i++) x[i] = float(q8_quant(x[i], d)) * dh;
    }
}

// Encodes x[0 .. n), block `block` of a row, into row `slot` of a Q8_0 cache.
inline void q8_store(device uchar *c, uint slots, uint kvDim, uint slot, uint block, device const float *x, uint n) {
    float d = q8_scale(x, n);
    device uchar *q = c + slot * kvDim + block * Q8_BLOCK;
    for (uint i = 0; i < n; i++) q[i] = uchar(uint(q8_quant(x[i], d)) & 0xffu);
    uint s = q8_scale_at(slots, kvDim, slot, block), dh = f16_bits(d);
    c[s] = uchar(dh & 0xffu);
    c[s + 1] = uchar(dh >> 8);
}

// ---- kv_round: rows row0 .. row0 + T - 1 of k and v rounded in place per p.kvType (KvType.round) ----------
// Reference: x[i, c] = round(x[i, c]) for every row i < T and column c < kvDim of k and of v (Q8_0 per block of
// 32 columns). One thread per (row, 32-column block) rounds that block of k and of v.
KERNEL(kv_round)(BUF(device float *, k, 0), BUF(device float *, v, 1), PARAMS(AttentionParams, p, 2), GRID_POS(gid)) {
    uint blocks = q8_blocks(p.kvDim);
    if (gid >= p.tokens * blocks) return;
    uint i = gid / blocks, c = (gid % blocks) * Q8_BLOCK, n = min(Q8_BLOCK, p.kvDim - c);
    uint at = (p.row0 + i) * p.kvDim + c;
    kv_round_block(k + at, n, p.kvType);
    kv_round_block(v + at, n, p.kvType);
}

// ---- attention with sinks, causal, optional sliding window, GQA; one simdgroup per (token, head) ------
// Lanes take keys j = lo + lane, lo + lane + 32, ... with an online softmax each, merged at the end.
#define HD_MAX 256
KERNEL(attention)(BUF(device const float *, q, 0), BUF(device const float *, k, 1), BUF(device const float *, v, 2),
                  BUF(device const uchar *, kc, 3), BUF(device const uchar *, vc, 4), BUF(device const float *, sinks, 5),
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
        // float rows (the batch's own, or an F32 cache's), else a typed cache row decoded as it is read
        device const float *kr = k;
        device const float *vr = v;
        uint slot = j % p.slots;
        bool typed = j < start && p.kvType != KV_F32;
        if (j >= start) {
            kr = k + (p.row0 + j - start) * kvDim + g * hd;
            vr = v + (p.row0 + j - start) * kvDim + g * hd;
        } else if (!typed) {
            kr = (device const float *) kc + slot * kvDim + g * hd;
            vr = (device const float *) vc + slot * kvDim + g * hd;
        }
        float s = 0.0f;
        if (typed)
            s = kv_dot(qr, kc, p.kvType, p.slots, kvDim, slot, g * hd, hd);
        else
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
        if (typed)
            kv_axpy(acc, e, vc, p.kvType, p.slots, kvDim, slot, g * hd, hd);
        else
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

// Stores rows first..T-1 of the sequence's k/v into the cache (slot = position % slots), encoded per p.kvType: one
// thread per number, or per 32-number block of a row for Q8_0 (its scale is the block's). Rows k, v already hold
// what the cache reads back (kv_round ran before the attention), so encoding them again changes no number.
KERNEL(kv_store)(BUF(device const float *, k, 0), BUF(device const float *, v, 1), BUF(device uchar *, kc, 2),
                 BUF(device uchar *, vc, 3), BUF(device const int *, positions, 4), PARAMS(AttentionParams, p, 5), GRID_POS(gid)) {
    uint per = p.kvType == KV_Q8_0 ? q8_blocks(p.kvDim) : p.kvDim;
    if (gid >= (p.tokens - p.first) * per) return;
    uint i = p.first + gid / per, c = gid % per;
    uint slot = (uint(positions[0]) + i) % p.slots;
    device const float *kr = k + (p.row0 + i) * p.kvDim;
    device const float *vr = v + (p.row0 + i) * p.kvDim;
    uint at = slot * p.kvDim + c;
    if (p.kvType == KV_F16 || p.kvType == KV_BF16) {
        bool h = p.kvType == KV_F16;
        ((device ushort *) kc)[at] = h ? f16_bits(kr[c]) : bf16_bits(kr[c]);
        ((device ushort *) vc)[at] = h ? f16_bits(vr[c]) : bf16_bits(vr[c]);
    } else if (p.kvType == KV_Q8_0) {
        uint n = min(Q8_BLOCK, p.kvDim - c * Q8_BLOCK);
        q8_store(kc, p.slots, p.kvDim, slot, c, kr + c * Q8_BLOCK, n);
        q8_store(vc, p.slots, p.kvDim, slot, c, vr + c * Q8_BLOCK, n);
    } else {
        ((device float *) kc)[at] = kr[c];
        ((device float *) vc)[at] = vr[c];
    }
}
