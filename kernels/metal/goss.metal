// goss-gpu Metal kernels (all of them, one library).
//
// This file is valid Metal and is ALSO compiled as C++ (g++ -DGOSS_METAL_EMU, native/metal-emu/
// metal_emu.h) into the emulated Metal device that CI uses. To keep both true, kernels follow a thin
// macro convention instead of writing Metal's attribute syntax directly:
//
//   KERNEL(name)(args...)            kernel void name(args...)
//   BUF(type, name, i)               type name [[buffer(i)]]              (type is a device pointer)
//   PARAMS(Struct, name, i)          constant Struct &name [[buffer(i)]]  (small constants, setBytes)
//   TG_POS(n) TID(n) TG_SIZE(n) GRID_POS(n) SIMD_LANE(n) SIMD_GROUP(n)
//                                    uint n [[threadgroup_position_in_grid]], [[thread_position_in_threadgroup]],
//                                    [[threads_per_threadgroup]], [[thread_position_in_grid]],
//                                    [[thread_index_in_simdgroup]], [[simdgroup_index_in_threadgroup]]
//   TG_ARRAY(type, name, n)          threadgroup type name[n]
//   EMU_REGISTER(name)               nothing in Metal; registers the kernel by name in the emulator
//
// A line that starts with "KERNEL(" declares a kernel (the emulator checks at library creation that it
// compiled every one of them). Only 1-D grids, scalar types, threadgroup_barrier and simd_sum/simd_max/
// simd_shuffle_down are used: the emulator implements exactly those and refuses to compile the rest.
// Sizes and offsets are element indices in uint (gpt-oss-120b's largest tensor has < 2^32 elements).

#ifndef GOSS_METAL_EMU
#include <metal_stdlib>
using namespace metal;
#define KERNEL(name) kernel void name
#define BUF(type, name, index) type name [[buffer(index)]]
#define PARAMS(type, name, index) constant type &name [[buffer(index)]]
#define TG_BUF(type, name, index) threadgroup type *name [[threadgroup(index)]]
#define TG_POS(name) uint name [[threadgroup_position_in_grid]]
#define TID(name) uint name [[thread_position_in_threadgroup]]
#define TG_SIZE(name) uint name [[threads_per_threadgroup]]
#define GRID_POS(name) uint name [[thread_position_in_grid]]
#define SIMD_LANE(name) uint name [[thread_index_in_simdgroup]]
#define SIMD_GROUP(name) uint name [[simdgroup_index_in_threadgroup]]
#define TG_ARRAY(type, name, n) threadgroup type name[n]
#define EMU_REGISTER(name)
#endif

// A large finite "minus infinity": Metal compiles with fast math, which may assume no infinities.
#define NEG_BIG (-3.0e38f)

// Dense weight formats (repacked at upload): 0 = F32, 1 = BF16.
inline float load_w(device const uchar *w, uint fmt, uint i) {
    if (fmt == 1) return as_type<float>(uint(((device const ushort *) w)[i]) << 16);
    return ((device const float *) w)[i];
}

// ---- embedding ------------------------------------------------------------------------------------
struct EmbedParams { uint H; uint fmt; };

KERNEL(embed)(BUF(device const uchar *, table, 0), BUF(device const int *, tokens, 1), BUF(device float *, out, 2),
              PARAMS(EmbedParams, p, 3), TG_POS(row), TID(tid), TG_SIZE(nt)) {
    uint tok = uint(tokens[row]);
    for (uint c = tid; c < p.H; c += nt) out[row * p.H + c] = load_w(table, p.fmt, tok * p.H + c);
}

// ---- RMSNorm: one threadgroup per row ---------------------------------------------------------------
struct NormParams { uint n; float eps; };

KERNEL(rmsnorm)(BUF(device const float *, x, 0), BUF(device const float *, scale, 1), BUF(device float *, out, 2),
                PARAMS(NormParams, p, 3), TG_POS(row), TID(tid), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    TG_ARRAY(float, partial, 32);
    device const float *xr = x + row * p.n;
    float ss = 0.0f;
    for (uint c = tid; c < p.n; c += nt) ss += xr[c] * xr[c];
    ss = simd_sum(ss);
    if (lane == 0) partial[sg] = ss;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float total = 0.0f;
    uint nsg = (nt + 31) / 32;
    for (uint i = 0; i < nsg; i++) total += partial[i];
    float inv = rsqrt(total / float(p.n) + p.eps);
    for (uint c = tid; c < p.n; c += nt) out[row * p.n + c] = xr[c] * inv * scale[c];
}

// ---- dense linear: one simdgroup per output row, every token of the batch --------------------------
struct LinearParams { uint rows; uint cols; uint T; uint fmt; uint hasBias; uint xStride; uint outStride; };

KERNEL(linear)(BUF(device const uchar *, W, 0), BUF(device const float *, bias, 1), BUF(device const float *, x, 2),
               BUF(device float *, out, 3), PARAMS(LinearParams, p, 4), TG_POS(tg), TG_SIZE(nt), SIMD_LANE(lane),
               SIMD_GROUP(sg)) {
    uint r = tg * (nt / 32) + sg;
    if (r >= p.rows) return; // uniform across the simdgroup
    uint wrow = r * p.cols;
    float b = p.hasBias != 0 ? bias[r] : 0.0f;
    for (uint t = 0; t < p.T; t++) {
        device const float *xr = x + t * p.xStride;
        float acc = 0.0f;
        for (uint c = lane; c < p.cols; c += 32) acc += load_w(W, p.fmt, wrow + c) * xr[c];
        acc = simd_sum(acc);
        if (lane == 0) out[t * p.outStride + r] = acc + b;
    }
}

// ---- dense linear for prefill: a threadgroup computes a tile of LT_R output rows × LT_T tokens -------
// W and x chunks of LT_K columns are staged in threadgroup memory (rows padded to LT_KP against bank
// conflicts); each thread accumulates up to 8 outputs of the tile (any threadgroup size from 32 up).
#define LT_R 32
#define LT_T 8
#define LT_K 32
#define LT_KP 33

KERNEL(linear_tiled)(BUF(device const uchar *, W, 0), BUF(device const float *, bias, 1), BUF(device const float *, x, 2),
                     BUF(device float *, out, 3), PARAMS(LinearParams, p, 4), TG_POS(tg), TID(tid), TG_SIZE(nt)) {
    TG_ARRAY(float, ws, LT_R * LT_KP);
    TG_ARRAY(float, xs, LT_T * LT_KP);
    uint rowTiles = (p.rows + LT_R - 1) / LT_R;
    uint r0 = (tg % rowTiles) * LT_R, t0 = (tg / rowTiles) * LT_T;
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (uint k0 = 0; k0 < p.cols; k0 += LT_K) {
        for (uint i = tid; i < LT_R * LT_K; i += nt) {
            uint r = i / LT_K, c = i % LT_K;
            ws[r * LT_KP + c] = (r0 + r < p.rows && k0 + c < p.cols) ? load_w(W, p.fmt, (r0 + r) * p.cols + k0 + c) : 0.0f;
        }
        for (uint i = tid; i < LT_T * LT_K; i += nt) {
            uint t = i / LT_K, c = i % LT_K;
            xs[t * LT_KP + c] = (t0 + t < p.T && k0 + c < p.cols) ? x[(t0 + t) * p.xStride + k0 + c] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint j = 0; j < 8; j++) {
            uint o = tid + j * nt;
            if (o >= LT_R * LT_T) break;
            uint r = o % LT_R, t = o / LT_R;
            float s = 0.0f;
            for (uint c = 0; c < LT_K; c++) s += ws[r * LT_KP + c] * xs[t * LT_KP + c];
            acc[j] += s;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint j = 0; j < 8; j++) {
        uint o = tid + j * nt;
        if (o >= LT_R * LT_T) break;
        uint r = r0 + o % LT_R, t = t0 + o / LT_R;
        if (r < p.rows && t < p.T) out[t * p.outStride + r] = acc[j] + (p.hasBias != 0 ? bias[r] : 0.0f);
    }
}

// ---- argmax over each row of logits: ties to the lower index ---------------------------------------
struct ArgmaxParams { uint n; };

inline bool better(float v, uint i, float bv, uint bi) { return v > bv || (v == bv && i < bi); }

KERNEL(argmax)(BUF(device const float *, logits, 0), BUF(device int *, out, 1), PARAMS(ArgmaxParams, p, 2),
               TG_POS(row), TID(tid), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    TG_ARRAY(float, bestV, 32);
    TG_ARRAY(uint, bestI, 32);
    float bv = NEG_BIG;
    uint bi = 0xffffffffu;
    for (uint c = tid; c < p.n; c += nt) {
        float v = logits[row * p.n + c];
        if (better(v, c, bv, bi)) { bv = v; bi = c; }
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
        out[row] = int(bi);
    }
}

// ---- elementwise add ---------------------------------------------------------------------------------
struct AddParams { uint n; };

KERNEL(add)(BUF(device const float *, a, 0), BUF(device const float *, b, 1), BUF(device float *, out, 2),
            PARAMS(AddParams, p, 3), GRID_POS(i)) {
    if (i < p.n) out[i] = a[i] + b[i];
}

// ---- router: top-k (ties to the lower expert) and softmax over the k, one thread per token ---------
struct TopkParams { uint T; uint E; uint k; };

KERNEL(topk_softmax)(BUF(device const float *, logits, 0), BUF(device int *, experts, 1), BUF(device float *, weights, 2),
                     PARAMS(TopkParams, p, 3), GRID_POS(t)) {
    if (t >= p.T) return;
    device const float *g = logits + t * p.E;
    uint taken[8] = {0, 0, 0, 0, 0, 0, 0, 0}; // E <= 256 (checked on the host)
    for (uint j = 0; j < p.k; j++) {
        uint best = 0xffffffffu;
        for (uint e = 0; e < p.E; e++) {
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

// ---- RoPE (half-split pairs) from a cos/sin table computed in double on the host ---------------------
struct RopeParams { uint T; uint heads; uint hd; uint start; uint cols; };

KERNEL(rope)(BUF(device float *, x, 0), BUF(device const float *, table, 1), PARAMS(RopeParams, p, 2), GRID_POS(gid)) {
    uint half_ = p.hd / 2;
    if (gid >= p.T * p.heads * half_) return;
    uint j = gid % half_, h = (gid / half_) % p.heads, t = gid / (half_ * p.heads);
    uint pos = p.start + t;
    float c = table[pos * p.hd + 2 * j], s = table[pos * p.hd + 2 * j + 1];
    uint base = t * p.cols + h * p.hd;
    float x1 = x[base + j], x2 = x[base + half_ + j];
    x[base + j] = x1 * c - x2 * s;
    x[base + half_ + j] = x2 * c + x1 * s;
}

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

// ---- MoE with MXFP4 experts ------------------------------------------------------------------------
// Repacked layout: codes [E][rows][cols/2] (low nibble = even element), scales [E][rows][cols/32] (E8M0).
constant float kFp4[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                           -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

inline float e8m0(uchar s) {
    // 2^(s-127); byte 255 is NaN (OCP MX), as the reference backend defines it (io.gossgpu.quant.Mxfp4.value)
    if (s == 255) return as_type<float>(0x7fc00000u);
    return s == 0 ? as_type<float>(0x00400000u) : as_type<float>(uint(s) << 23);
}

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

struct MoeParams { uint T; uint k; uint H; uint I; uint E; float limit; };

// act[t, j, u] = swiglu(gate_e[u]·x_t + gb, up_e[u]·x_t + ub) for expert e = experts[t, j]; one simdgroup each.
KERNEL(moe_up)(BUF(device const uchar *, gcodes, 0), BUF(device const uchar *, gscales, 1), BUF(device const uchar *, ucodes, 2),
               BUF(device const uchar *, uscales, 3), BUF(device const float *, gbias, 4), BUF(device const float *, ubias, 5),
               BUF(device const float *, x, 6), BUF(device const int *, experts, 7), BUF(device float *, act, 8),
               PARAMS(MoeParams, p, 9), TG_POS(tg), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    uint id = tg * (nt / 32) + sg;
    if (id >= p.T * p.k * p.I) return;
    uint u = id % p.I, tj = id / p.I, t = tj / p.k;
    uint e = uint(experts[tj]);
    if (e >= p.E) { if (lane == 0) act[id] = 0.0f; return; }
    uint row = e * p.I + u;
    float a = simd_sum(mxfp4_dot_part(gcodes + row * (p.H / 2), gscales + row * (p.H / 32), x + t * p.H, p.H, lane));
    float b = simd_sum(mxfp4_dot_part(ucodes + row * (p.H / 2), uscales + row * (p.H / 32), x + t * p.H, p.H, lane));
    if (lane == 0) {
        a = min(a + gbias[row], p.limit);
        b = clamp(b + ubias[row], -p.limit, p.limit);
        act[id] = a / (1.0f + exp(-1.702f * a)) * (b + 1.0f);
    }
}

// out[t, d] = Σ_j w[t, j] · (down_e[d]·act[t, j] + db_e[d]); one simdgroup per (t, d).
KERNEL(moe_down)(BUF(device const uchar *, codes, 0), BUF(device const uchar *, scales, 1), BUF(device const float *, dbias, 2),
                 BUF(device const float *, act, 3), BUF(device const int *, experts, 4), BUF(device const float *, weights, 5),
                 BUF(device float *, out, 6), PARAMS(MoeParams, p, 7), TG_POS(tg), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    uint id = tg * (nt / 32) + sg;
    if (id >= p.T * p.H) return;
    uint d = id % p.H, t = id / p.H;
    float total = 0.0f;
    for (uint j = 0; j < p.k; j++) {
        uint e = uint(experts[t * p.k + j]);
        if (e >= p.E) continue; // uniform across the simdgroup
        uint row = e * p.H + d;
        float y = simd_sum(mxfp4_dot_part(codes + row * (p.I / 2), scales + row * (p.I / 32), act + (t * p.k + j) * p.I, p.I, lane));
        total += weights[t * p.k + j] * (y + dbias[row]);
    }
    if (lane == 0) out[t * p.H + d] = total;
}

// ---- MoE prefill: tokens grouped by expert, then tiled MXFP4 matmuls ----------------------------------
// moe_group: one thread per expert e lists the (token, slot) pairs routed to e, in order, in a segment of
// `pairs` starting at seg[e] (segments padded to multiples of 8 so a tile of 8 pairs has one expert);
// seg[E + e] = the count. Pair index tj = t·k + j.
struct GroupParams { uint n; uint E; };

inline uint pad8(uint c) { return (c + 7) / 8 * 8; }

KERNEL(moe_group)(BUF(device const int *, experts, 0), BUF(device uint *, seg, 1), BUF(device uint *, pairs, 2),
                  PARAMS(GroupParams, p, 3), GRID_POS(e)) {
    if (e >= p.E) return;
    uint counts[256]; // E <= 256 (checked on the host)
    for (uint x = 0; x < p.E; x++) counts[x] = 0;
    for (uint i = 0; i < p.n; i++) {
        uint x = uint(experts[i]);
        if (x < p.E) counts[x]++;
    }
    uint start = 0;
    for (uint x = 0; x < e; x++) start += pad8(counts[x]);
    seg[e] = start;
    seg[p.E + e] = counts[e];
    uint c = 0;
    for (uint i = 0; i < p.n; i++)
        if (uint(experts[i]) == e) pairs[start + c++] = i;
}

struct MoeTileParams { uint T; uint k; uint H; uint I; uint E; float limit; };

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
KERNEL(moe_up_tiled)(BUF(device const uchar *, gcodes, 0), BUF(device const uchar *, gscales, 1), BUF(device const uchar *, ucodes, 2),
                     BUF(device const uchar *, uscales, 3), BUF(device const float *, gbias, 4), BUF(device const float *, ubias, 5),
                     BUF(device const float *, x, 6), BUF(device const uint *, seg, 7), BUF(device const uint *, pairs, 8),
                     BUF(device float *, act, 9), PARAMS(MoeTileParams, p, 10), TG_POS(tg), TID(tid), TG_SIZE(nt)) {
    TG_ARRAY(float, gw, 32 * 33);
    TG_ARRAY(float, uw, 32 * 33);
    TG_ARRAY(float, xs, 8 * 33);
    uint unitTiles = (p.I + 31) / 32;
    uint u0 = (tg % unitTiles) * 32, pos = (tg / unitTiles) * 8;
    uint base = 0, count = 0;
    uint e = find_segment(seg, p.E, pos, base, count);
    if (e == 0xffffffffu) return; // the whole threadgroup
    uint first = pos - base;
    float ag[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    float au[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (uint k0 = 0; k0 < p.H; k0 += 32) {
        for (uint i = tid; i < 32 * 16; i += nt) {
            uint r = i / 16, b = i % 16, u = u0 + r;
            float g0 = 0.0f, g1 = 0.0f, v0 = 0.0f, v1 = 0.0f;
            if (u < p.I) {
                uint row = e * p.I + u;
                uchar qg = gcodes[row * (p.H / 2) + k0 / 2 + b], qu = ucodes[row * (p.H / 2) + k0 / 2 + b];
                float sg = e8m0(gscales[row * (p.H / 32) + k0 / 32]), su = e8m0(uscales[row * (p.H / 32) + k0 / 32]);
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
            xs[j * 33 + c] = li < count ? x[(pairs[base + li] / p.k) * p.H + k0 + c] : 0.0f;
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
        if (u >= p.I || li >= count) continue;
        uint row = e * p.I + u;
        float a = min(ag[jj] + gbias[row], p.limit);
        float b = clamp(au[jj] + ubias[row], -p.limit, p.limit);
        act[pairs[base + li] * p.I + u] = a / (1.0f + exp(-1.702f * a)) * (b + 1.0f);
    }
}

// y[tj, d] = down_e[d]·act[tj] + db_e[d] for a tile of 32 outputs × 8 pairs of one expert.
KERNEL(moe_down_tiled)(BUF(device const uchar *, codes, 0), BUF(device const uchar *, scales, 1), BUF(device const float *, dbias, 2),
                       BUF(device const float *, act, 3), BUF(device const uint *, seg, 4), BUF(device const uint *, pairs, 5),
                       BUF(device float *, y, 6), PARAMS(MoeTileParams, p, 7), TG_POS(tg), TID(tid), TG_SIZE(nt)) {
    TG_ARRAY(float, dw, 32 * 33);
    TG_ARRAY(float, as, 8 * 33);
    uint outTiles = (p.H + 31) / 32;
    uint d0 = (tg % outTiles) * 32, pos = (tg / outTiles) * 8;
    uint base = 0, count = 0;
    uint e = find_segment(seg, p.E, pos, base, count);
    if (e == 0xffffffffu) return;
    uint first = pos - base;
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (uint k0 = 0; k0 < p.I; k0 += 32) {
        for (uint i = tid; i < 32 * 16; i += nt) {
            uint r = i / 16, b = i % 16, d = d0 + r;
            float w0 = 0.0f, w1 = 0.0f;
            if (d < p.H) {
                uint row = e * p.H + d;
                uchar q = codes[row * (p.I / 2) + k0 / 2 + b];
                float s = e8m0(scales[row * (p.I / 32) + k0 / 32]);
                w0 = kFp4[q & 15] * s;
                w1 = kFp4[q >> 4] * s;
            }
            dw[r * 33 + 2 * b] = w0;
            dw[r * 33 + 2 * b + 1] = w1;
        }
        for (uint i = tid; i < 8 * 32; i += nt) {
            uint j = i / 32, c = i % 32, li = first + j;
            as[j * 33 + c] = li < count ? act[pairs[base + li] * p.I + k0 + c] : 0.0f;
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
        if (d >= p.H || li >= count) continue;
        y[pairs[base + li] * p.H + d] = acc[jj] + dbias[e * p.H + d];
    }
}

// out[t, d] = Σ_j w[t, j] · y[t·k + j, d], in slot order (deterministic); one thread per (t, d).
KERNEL(moe_combine)(BUF(device const float *, y, 0), BUF(device const int *, experts, 1), BUF(device const float *, weights, 2),
                    BUF(device float *, out, 3), PARAMS(MoeTileParams, p, 4), GRID_POS(gid)) {
    if (gid >= p.T * p.H) return;
    uint t = gid / p.H, d = gid % p.H;
    float total = 0.0f;
    for (uint j = 0; j < p.k; j++)
        if (uint(experts[t * p.k + j]) < p.E) total += weights[t * p.k + j] * y[(t * p.k + j) * p.H + d];
    out[gid] = total;
}

#ifdef GOSS_METAL_EMU
EMU_REGISTER(embed)
EMU_REGISTER(rmsnorm)
EMU_REGISTER(linear)
EMU_REGISTER(linear_tiled)
EMU_REGISTER(argmax)
EMU_REGISTER(add)
EMU_REGISTER(topk_softmax)
EMU_REGISTER(rope)
EMU_REGISTER(attention)
EMU_REGISTER(kv_store)
EMU_REGISTER(moe_up)
EMU_REGISTER(moe_down)
EMU_REGISTER(moe_group)
EMU_REGISTER(moe_up_tiled)
EMU_REGISTER(moe_down_tiled)
EMU_REGISTER(moe_combine)
#endif
