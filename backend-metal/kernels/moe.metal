// The MXFP4 mixture of experts (io.gossgpu.device.MoePipeline): per (token, slot) for decode, batched by expert for prefill.
//
// Reference: slot s = t*k + j is token t's j-th chosen expert e with weight w:
//   a = gate_e . x_t + gb_e,  b = up_e . x_t + ub_e,  a = min(a, L),  b = clamp(b, -L, L)
//   h_s = a * sigmoid(1.702 a) * (b + 1)                        (moe_gate_up, moe_gate_up_tiled)
//   y_s = down_e . h_s + db_e;  out[t] = sum_j w[t*k + j] * y_{t*k + j}   (moe_down; moe_down_tiled + moe_combine)
//   MXFP4 value = FP4[code] * 2^(scale - 127)

#include "common.h"

// ---- MoE with MXFP4 experts ------------------------------------------------------------------------
// Repacked layout: codes [E][rows][cols/2] (low nibble = even element), scales [E][rows][cols/32] (E8M0).
// MXFP4 value = kFp4[code] * e8m0(scale) (common.h).

// This lane's share of row·x (the caller sums over the simdgroup).
inline float mxfp4_dot_part(device const uchar *codes, device const uchar *scales, device const float *x, uint cols, uint lane) {
    float acc = 0.0f;
    for (uint b = lane; b < cols / 2; b += 32) {
        uchar q = codes[b];
        float pair = kFp4[q & 15] * x[2 * b] + kFp4[q >> 4] * x[2 * b + 1];
        acc += pair * e8m0(scales[b / 16]);
    }
    return acc;
}

// SwiGLU's clamps keep a NaN, as the reference's (torch.clamp) do: fmin/fmax would return the limit for it and the
// reply would go on from finite garbage, past the non-finite guard (BackendConformanceKit.nanBeforeSwigluStaysNaN).
inline float min_keep_nan(float x, float hi) { return x > hi ? hi : x; }
inline float clamp_keep_nan(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

// The scalars of every MoE kernel, the same struct in moe.cu and moe.cl (io.gossgpu.device.MoeParams). GGUF's ggml
// block_mxfp4 is repacked to the layout above at upload.
struct MoeParams { uint tokens; uint k; uint hidden; uint inter; uint experts; float limit; };

// act[t, j, u] = swiglu(gate_e[u]·x_t + gb, up_e[u]·x_t + ub) for expert e = experts[t, j]; one simdgroup each.
KERNEL(moe_gate_up)(BUF(device const uchar *, gcodes, 0), BUF(device const uchar *, gscales, 1), BUF(device const uchar *, ucodes, 2),
                    BUF(device const uchar *, uscales, 3), BUF(device const float *, gbias, 4), BUF(device const float *, ubias, 5),
                    BUF(device const float *, x, 6), BUF(device const int *, experts, 7), BUF(device float *, act, 8),
                    PARAMS(MoeParams, p, 9), TG_POS(tg), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    uint id = tg * (nt / 32) + sg;
    if (id >= p.tokens * p.k * p.inter) return;
    uint u = id % p.inter, tj = id / p.inter, t = tj / p.k;
    uint e = uint(experts[tj]);
    if (e >= p.experts) { if (lane == 0) act[id] = 0.0f; return; }
    uint row = e * p.inter + u;
    float a = simd_sum(mxfp4_dot_part(gcodes + row * (p.hidden / 2), gscales + row * (p.hidden / 32), x + t * p.hidden, p.hidden, lane));
    float b = simd_sum(mxfp4_dot_part(ucodes + row * (p.hidden / 2), uscales + row * (p.hidden / 32), x + t * p.hidden, p.hidden, lane));
    if (lane == 0) {
        a = min_keep_nan(a + gbias[row], p.limit);
        b = clamp_keep_nan(b + ubias[row], -p.limit, p.limit);
        act[id] = a / (1.0f + exp(-1.702f * a)) * (b + 1.0f);
    }
}

// out[t, d] = Σ_j w[t, j] · (down_e[d]·act[t, j] + db_e[d]); one simdgroup per (t, d).
KERNEL(moe_down)(BUF(device const uchar *, codes, 0), BUF(device const uchar *, scales, 1), BUF(device const float *, dbias, 2),
                 BUF(device const float *, act, 3), BUF(device const int *, experts, 4), BUF(device const float *, weights, 5),
                 BUF(device float *, out, 6), PARAMS(MoeParams, p, 7), TG_POS(tg), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    uint id = tg * (nt / 32) + sg;
    if (id >= p.tokens * p.hidden) return;
    uint d = id % p.hidden, t = id / p.hidden;
    float total = 0.0f;
    for (uint j = 0; j < p.k; j++) {
        uint e = uint(experts[t * p.k + j]);
        if (e >= p.experts) continue; // uniform across the simdgroup
        uint row = e * p.hidden + d;
        float y = simd_sum(mxfp4_dot_part(codes + row * (p.inter / 2), scales + row * (p.inter / 32), act + (t * p.k + j) * p.inter, p.inter, lane));
        total += weights[t * p.k + j] * (y + dbias[row]);
    }
    if (lane == 0) out[t * p.hidden + d] = total;
}

// ---- MoE prefill: tokens grouped by expert, then tiled MXFP4 matmuls ----------------------------------
// moe_sort: one thread per expert e lists the (token, slot) pairs routed to e, in order, in a segment of
// `pairs` starting at seg[e] (segments padded to multiples of 8 so a tile of 8 pairs has one expert);
// seg[E + e] = the count. Pair index tj = t·k + j. The groups buffer: seg[2E], then pairs.

inline uint pad8(uint c) { return (c + 7) / 8 * 8; }

KERNEL(moe_sort)(BUF(device const int *, experts, 0), BUF(device uint *, groups, 1), PARAMS(MoeParams, p, 2), GRID_POS(e)) {
    if (e >= p.experts) return;
    device uint *seg = groups;
    device uint *pairs = groups + 2 * p.experts;
    uint n = p.tokens * p.k;
    uint counts[256]; // E <= 256 (checked on the host)
    for (uint x = 0; x < p.experts; x++) counts[x] = 0;
    for (uint i = 0; i < n; i++) {
        uint x = uint(experts[i]);
        if (x < p.experts) counts[x]++;
    }
    uint start = 0;
    for (uint x = 0; x < e; x++) start += pad8(counts[x]);
    seg[e] = start;
    seg[p.experts + e] = counts[e];
    uint c = 0;
    for (uint i = 0; i < n; i++)
        if (uint(experts[i]) == e) pairs[start + c++] = i;
}

// The expert whose padded segment holds position pos (uniform per threadgroup), or 0xffffffff.
inline uint find_segment(device const uint *seg, uint E, uint pos, thread uint &base, thread uint &count) {
    uint found = 0xffffffffu;
    for (uint x = 0; x < E; x++) {
        uint s0 = seg[x], c = seg[E + x];
        if (pos >= s0 && pos < s0 + pad8(c)) { found = x; base = s0; count = c; }
    }
    return found;
}

// act[tj, u] for a tile of 32 units × 8 pairs of one expert; gate/up blocks decoded into threadgroup memory.
KERNEL(moe_gate_up_tiled)(BUF(device const uchar *, gcodes, 0), BUF(device const uchar *, gscales, 1), BUF(device const uchar *, ucodes, 2),
                          BUF(device const uchar *, uscales, 3), BUF(device const float *, gbias, 4), BUF(device const float *, ubias, 5),
                          BUF(device const float *, x, 6), BUF(device const uint *, groups, 7),
                          BUF(device float *, act, 8), PARAMS(MoeParams, p, 9), TG_POS(tg), TID(tid), TG_SIZE(nt)) {
    device const uint *seg = groups;
    device const uint *pairs = groups + 2 * p.experts;
    TG_ARRAY(float, gw, 32 * 33);
    TG_ARRAY(float, uw, 32 * 33);
    TG_ARRAY(float, xs, 8 * 33);
    uint unitTiles = (p.inter + 31) / 32;
    uint u0 = (tg % unitTiles) * 32, pos = (tg / unitTiles) * 8;
    uint base = 0, count = 0;
    uint e = find_segment(seg, p.experts, pos, base, count);
    if (e == 0xffffffffu) return; // the whole threadgroup
    uint first = pos - base;
    float ag[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    float au[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (uint k0 = 0; k0 < p.hidden; k0 += 32) {
        for (uint i = tid; i < 32 * 16; i += nt) {
            uint r = i / 16, b = i % 16, u = u0 + r;
            float g0 = 0.0f, g1 = 0.0f, v0 = 0.0f, v1 = 0.0f;
            if (u < p.inter) {
                uint row = e * p.inter + u;
                uchar qg = gcodes[row * (p.hidden / 2) + k0 / 2 + b], qu = ucodes[row * (p.hidden / 2) + k0 / 2 + b];
                float sg = e8m0(gscales[row * (p.hidden / 32) + k0 / 32]), su = e8m0(uscales[row * (p.hidden / 32) + k0 / 32]);
                g0 = kFp4[qg & 15] * sg;
                g1 = kFp4[qg >> 4] * sg;
                v0 = kFp4[qu & 15] * su;
                v1 = kFp4[qu >> 4] * su;
            }
            gw[r * 33 + 2 * b] = g0;
            gw[r * 33 + 2 * b + 1] = g1;
            uw[r * 33 + 2 * b] = v0;
            uw[r * 33 + 2 * b + 1] = v1;
        }
        for (uint i = tid; i < 8 * 32; i += nt) {
            uint j = i / 32, c = i % 32, li = first + j;
            xs[j * 33 + c] = li < count ? x[(pairs[base + li] / p.k) * p.hidden + k0 + c] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint jj = 0; jj < 8; jj++) {
            uint o = tid + jj * nt;
            if (o >= 256) break;
            uint r = o % 32, j = o / 32;
            float sg = 0.0f, su = 0.0f;
            for (uint c = 0; c < 32; c++) {
                sg += gw[r * 33 + c] * xs[j * 33 + c];
                su += uw[r * 33 + c] * xs[j * 33 + c];
            }
            ag[jj] += sg;
            au[jj] += su;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint jj = 0; jj < 8; jj++) {
        uint o = tid + jj * nt;
        if (o >= 256) break;
        uint u = u0 + o % 32, li = first + o / 32;
        if (u >= p.inter || li >= count) continue;
        uint row = e * p.inter + u;
        float a = min_keep_nan(ag[jj] + gbias[row], p.limit);
        float b = clamp_keep_nan(au[jj] + ubias[row], -p.limit, p.limit);
        act[pairs[base + li] * p.inter + u] = a / (1.0f + exp(-1.702f * a)) * (b + 1.0f);
    }
}

// y[tj, d] = down_e[d]·act[tj] + db_e[d] for a tile of 32 outputs × 8 pairs of one expert.
KERNEL(moe_down_tiled)(BUF(device const uchar *, codes, 0), BUF(device const uchar *, scales, 1), BUF(device const float *, dbias, 2),
                       BUF(device const float *, act, 3), BUF(device const uint *, groups, 4),
                       BUF(device float *, y, 5), PARAMS(MoeParams, p, 6), TG_POS(tg), TID(tid), TG_SIZE(nt)) {
    device const uint *seg = groups;
    device const uint *pairs = groups + 2 * p.experts;
    TG_ARRAY(float, dw, 32 * 33);
    TG_ARRAY(float, as, 8 * 33);
    uint outTiles = (p.hidden + 31) / 32;
    uint d0 = (tg % outTiles) * 32, pos = (tg / outTiles) * 8;
    uint base = 0, count = 0;
    uint e = find_segment(seg, p.experts, pos, base, count);
    if (e == 0xffffffffu) return;
    uint first = pos - base;
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (uint k0 = 0; k0 < p.inter; k0 += 32) {
        for (uint i = tid; i < 32 * 16; i += nt) {
            uint r = i / 16, b = i % 16, d = d0 + r;
            float w0 = 0.0f, w1 = 0.0f;
            if (d < p.hidden) {
                uint row = e * p.hidden + d;
                uchar q = codes[row * (p.inter / 2) + k0 / 2 + b];
                float s = e8m0(scales[row * (p.inter / 32) + k0 / 32]);
                w0 = kFp4[q & 15] * s;
                w1 = kFp4[q >> 4] * s;
            }
            dw[r * 33 + 2 * b] = w0;
            dw[r * 33 + 2 * b + 1] = w1;
        }
        for (uint i = tid; i < 8 * 32; i += nt) {
            uint j = i / 32, c = i % 32, li = first + j;
            as[j * 33 + c] = li < count ? act[pairs[base + li] * p.inter + k0 + c] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint jj = 0; jj < 8; jj++) {
            uint o = tid + jj * nt;
            if (o >= 256) break;
            uint r = o % 32, j = o / 32;
            float s = 0.0f;
            for (uint c = 0; c < 32; c++) s += dw[r * 33 + c] * as[j * 33 + c];
            acc[jj] += s;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint jj = 0; jj < 8; jj++) {
        uint o = tid + jj * nt;
        if (o >= 256) break;
        uint d = d0 + o % 32, li = first + o / 32;
        if (d >= p.hidden || li >= count) continue;
        y[pairs[base + li] * p.hidden + d] = acc[jj] + dbias[e * p.hidden + d];
    }
}

// out[t, d] = Σ_j w[t, j] · y[t·k + j, d], in slot order (deterministic); one thread per (t, d).
KERNEL(moe_combine)(BUF(device const float *, y, 0), BUF(device const int *, experts, 1), BUF(device const float *, weights, 2),
                    BUF(device float *, out, 3), PARAMS(MoeParams, p, 4), GRID_POS(gid)) {
    if (gid >= p.tokens * p.hidden) return;
    uint t = gid / p.hidden, d = gid % p.hidden;
    float total = 0.0f;
    for (uint j = 0; j < p.k; j++)
        if (uint(experts[t * p.k + j]) < p.experts) total += weights[t * p.k + j] * y[(t * p.k + j) * p.hidden + d];
    out[gid] = total;
}
