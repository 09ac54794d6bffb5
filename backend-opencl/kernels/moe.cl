/*
 * Fused MXFP4 mixture of experts (without the residual). For row t and each chosen expert
 * e = ids[t, j] with weight w = weights[t, j]:
 *   a = gate_e . x_t + gateBias_e,  b = up_e . x_t + upBias_e
 *   a = min(a, L),  b = clamp(b, -L, L)                    (L = swiglu_limit)
 *   h = a * sigmoid(1.702 a) * (b + 1)
 *   y = down_e . h + downBias_e;     out[t] = sum_j w_j * y_j
 * Weights are MXFP4: value = FP4[code] * 2^(scale - 127), in OpenAI's layout (GGUF's ggml block_mxfp4
 * is repacked to it at upload, io.gossgpu.device.Mxfp4Repack): codes row-contiguous, scales in their own
 * buffer. Row r of a matrix: codes at r*cols/2, scales at r*cols/32. Code rows are 16·(cols/32) bytes, so
 * each 16-byte block is one aligned uint4 (buffers are allocated aligned; the little-endian byte order of a
 * uint is the file's byte order).
 * Each work item takes whole 32-value blocks; the block's partial sum is scaled once with ldexp.
 * Local size = GOSS_OPENCL_MOE_WG.
 */

/* sum over this work item's blocks of row `row` (cols values) times x. */
inline float mx_dot_part(__global const uchar* codes, __global const uchar* scales, long row, int cols,
                         __global const float* x, int lid, int wg) {
    int nb = cols / 32;
    float acc = 0.0f;
    /* OpenAI rows are cols/2 = 16·nb bytes: every block is 16-byte aligned, one uint4 load */
    __global const uint4* r = (__global const uint4*) (codes + row * (long) (cols / 2));
    __global const uchar* sc = scales + row * (long) nb;
    for (int b = lid; b < nb; b += wg) {
        uint4 w = r[b];
        uint words[4] = {w.x, w.y, w.z, w.w};
        __global const float4* xb = (__global const float4*) (x + b * 32);
        float s = 0.0f;
        for (int q = 0; q < 4; q++) {
            uint wd = words[q]; /* bytes 4q..4q+3 = elements 8q..8q+7, low nibble first */
            float4 xa = xb[2 * q], xc = xb[2 * q + 1];
            s = fma(FP4_VALUES[wd & 15u], xa.x, s);
            s = fma(FP4_VALUES[(wd >> 4) & 15u], xa.y, s);
            s = fma(FP4_VALUES[(wd >> 8) & 15u], xa.z, s);
            s = fma(FP4_VALUES[(wd >> 12) & 15u], xa.w, s);
            s = fma(FP4_VALUES[(wd >> 16) & 15u], xc.x, s);
            s = fma(FP4_VALUES[(wd >> 20) & 15u], xc.y, s);
            s = fma(FP4_VALUES[(wd >> 24) & 15u], xc.z, s);
            s = fma(FP4_VALUES[wd >> 28], xc.w, s);
        }
        acc += mx_scaled(s, sc[b]);
    }
    return acc;
}

/* SwiGLU's clamps keep a NaN, as the reference's (torch.clamp) do: fmin/fmax would return the limit for it and the
 * reply would go on from finite garbage, past the non-finite guard (BackendConformanceKit.nanBeforeSwigluStaysNaN). */
inline float min_keep_nan(float x, float hi) { return x > hi ? hi : x; }
inline float clamp_keep_nan(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* The scalars of every MoE kernel, the same struct in moe.cu and moe.metal (io.gossgpu.device.MoeParams; the down
 * kernels do not read limit). */
typedef struct { int tokens; int k; int hidden; int inter; int experts; float limit; } MoeParams;

/*
 * mlp1 + SwiGLU. One work-group per (unit u, token-slot t*K + j). hout is (T*K) x I.
 */

__kernel void moe_gate_up(__global const uchar* gCodes, __global const uchar* gScales,
                          __global const uchar* uCodes, __global const uchar* uScales,
                          __global const float* gBias, __global const float* uBias,
                          __global const float* x, __global const int* ids,
                          __global float* hout, __local float* scratch, const MoeParams p) {
    const int K = p.k, H = p.hidden, I = p.inter;
    const float limit = p.limit;
    int u = get_group_id(0), tj = get_group_id(1);
    int lid = get_local_id(0), wg = get_local_size(0);
    int t = tj / K, e = ids[tj];
    long row = (long) e * I + u;
    __global const float* xt = x + (long) t * H;
    float pa = mx_dot_part(gCodes, gScales, row, H, xt, lid, wg);
    float pb = mx_dot_part(uCodes, uScales, row, H, xt, lid, wg);
    float a = wg_sum(scratch, pa);
    float b = wg_sum(scratch, pb);
    if (lid == 0) {
        a += gBias[row];
        b += uBias[row];
        a = min_keep_nan(a, limit);
        b = clamp_keep_nan(b, -limit, limit);
        hout[(long) tj * I + u] = a / (1.0f + exp(-1.702f * a)) * (b + 1.0f);
    }
}

/*
 * mlp2 and the weighted sum over the K chosen experts. One work-group per (output d, token t).
 */
__kernel void moe_down(__global const uchar* dCodes, __global const uchar* dScales,
                       __global const float* dBias, __global const float* hin, __global const int* ids,
                       __global const float* weights, __global float* out, __local float* scratch, const MoeParams p) {
    const int K = p.k, H = p.hidden, I = p.inter;
    int d = get_group_id(0), t = get_group_id(1);
    int lid = get_local_id(0), wg = get_local_size(0);
    float acc = 0.0f;
    for (int j = 0; j < K; j++) {
        int e = ids[(long) t * K + j];
        float w = weights[(long) t * K + j];
        acc = fma(w, mx_dot_part(dCodes, dScales, (long) e * H + d, I, hin + ((long) t * K + j) * I, lid, wg), acc);
    }
    float total = wg_sum(scratch, acc);
    if (lid == 0) {
        for (int j = 0; j < K; j++) {
            int e = ids[(long) t * K + j];
            total = fma(weights[(long) t * K + j], dBias[(long) e * H + d], total);
        }
        out[(long) t * H + d] = total;
    }
}

/*
 * Prefill path (T > 1): token-slots grouped by expert so that each expert's weights are read once per
 * tile of MOE_TILE slots instead of once per slot. Same formulas as above; y_j is stored per slot and
 * moe_combine sums the K weighted slots of each token in slot order (deterministic, no atomics).
 */
#ifndef MOE_TILE
#define MOE_TILE 8
#endif

/* Counting sort of the n = T*K token-slots by expert into the groups buffer: offsets[0..E], cursor[E] (scratch),
 * list[n] = slots ordered by expert then slot. Ids outside 0..E-1 are left out. One work item. */
__kernel void moe_sort(__global const int* ids, __global int* groups, const MoeParams p) {
    const int n = p.tokens * p.k, E = p.experts;
    __global int* offsets = groups;
    __global int* cursor = groups + E + 1;
    __global int* list = cursor + E;
    if (get_global_id(0) != 0) return;
    for (int e = 0; e <= E; e++) offsets[e] = 0;
    for (int s = 0; s < n; s++) {
        int e = ids[s];
        if (e >= 0 && e < E) offsets[e + 1]++;
    }
    for (int e = 0; e < E; e++) offsets[e + 1] += offsets[e];
    for (int e = 0; e < E; e++) cursor[e] = offsets[e];
    for (int s = 0; s < n; s++) {
        int e = ids[s];
        if (e >= 0 && e < E) list[cursor[e]++] = s;
    }
}

/* Decodes block b of row `row` into out[32] as FP4 values (unscaled); returns the scale byte. */
inline int mx_block(__global const uchar* codes, __global const uchar* scales, long row, int cols, int b,
                    float* out) {
    int nb = cols / 32;
    __global const uchar* blk = codes + row * (long) (cols / 2) + b * 16;
    for (int j = 0; j < 16; j++) {
        uint byte = blk[j];
        out[2 * j] = FP4_VALUES[byte & 15u];
        out[2 * j + 1] = FP4_VALUES[byte >> 4];
    }
    return scales[row * (long) nb + b];
}

/* mlp1 + SwiGLU for every slot routed to expert e. One work-group per (unit u, expert e). */
__kernel void moe_gate_up_tiled(__global const uchar* gCodes, __global const uchar* gScales,
                                __global const uchar* uCodes, __global const uchar* uScales,
                                __global const float* gBias, __global const float* uBias,
                                __global const float* x, __global const int* groups,
                                __global float* hout, __local float* scratch, const MoeParams p) {
    const int K = p.k, H = p.hidden, I = p.inter;
    __global const int* offsets = groups;
    __global const int* list = groups + 2 * p.experts + 1;
    const float limit = p.limit;
    int u = get_group_id(0), e = get_group_id(1);
    int lid = get_local_id(0), wg = get_local_size(0);
    int begin = offsets[e], end = offsets[e + 1];
    long row = (long) e * I + u;
    float gw[32], uw[32];
    for (int s0 = begin; s0 < end; s0 += MOE_TILE) {
        int n = min(MOE_TILE, end - s0);
        float pa[MOE_TILE], pb[MOE_TILE];
        for (int q = 0; q < MOE_TILE; q++) pa[q] = pb[q] = 0.0f;
        for (int b = lid; b < H / 32; b += wg) {
            int gs = mx_block(gCodes, gScales, row, H, b, gw);
            int us = mx_block(uCodes, uScales, row, H, b, uw);
            for (int q = 0; q < MOE_TILE; q++) {
                if (q >= n) break;
                __global const float* xb = x + (long) (list[s0 + q] / K) * H + b * 32;
                float sa = 0.0f, sb = 0.0f;
                for (int j = 0; j < 32; j++) {
                    sa = fma(gw[j], xb[j], sa);
                    sb = fma(uw[j], xb[j], sb);
                }
                pa[q] += mx_scaled(sa, (uint) gs);
                pb[q] += mx_scaled(sb, (uint) us);
            }
        }
        for (int q = 0; q < n; q++) {
            float a = wg_sum(scratch, pa[q]);
            float bb = wg_sum(scratch, pb[q]);
            if (lid == 0) {
                a += gBias[row];
                bb += uBias[row];
                a = min_keep_nan(a, limit);
                bb = clamp_keep_nan(bb, -limit, limit);
                hout[(long) list[s0 + q] * I + u] = a / (1.0f + exp(-1.702f * a)) * (bb + 1.0f);
            }
        }
    }
}

/* mlp2 for every slot routed to expert e: y[slot, d] = down_e[d] . h_slot + downBias_e[d].
 * One work-group per (output d, expert e). */
__kernel void moe_down_tiled(__global const uchar* dCodes, __global const uchar* dScales,
                             __global const float* dBias, __global const float* hin, __global const int* groups,
                             __global float* y, __local float* scratch, const MoeParams params) {
    const int H = params.hidden, I = params.inter;
    __global const int* offsets = groups;
    __global const int* list = groups + 2 * params.experts + 1;
    int d = get_group_id(0), e = get_group_id(1);
    int lid = get_local_id(0), wg = get_local_size(0);
    int begin = offsets[e], end = offsets[e + 1];
    long row = (long) e * H + d;
    float dw[32];
    for (int s0 = begin; s0 < end; s0 += MOE_TILE) {
        int n = min(MOE_TILE, end - s0);
        float p[MOE_TILE];
        for (int q = 0; q < MOE_TILE; q++) p[q] = 0.0f;
        for (int b = lid; b < I / 32; b += wg) {
            int ds = mx_block(dCodes, dScales, row, I, b, dw);
            for (int q = 0; q < MOE_TILE; q++) {
                if (q >= n) break;
                __global const float* hb = hin + (long) list[s0 + q] * I + b * 32;
                float s = 0.0f;
                for (int j = 0; j < 32; j++) s = fma(dw[j], hb[j], s);
                p[q] += mx_scaled(s, (uint) ds);
            }
        }
        for (int q = 0; q < n; q++) {
            float total = wg_sum(scratch, p[q]);
            if (lid == 0) {
                int slot = list[s0 + q];
                y[(long) slot * H + d] = total + dBias[row];
            }
        }
    }
}

/* out[t, d] = sum_j w[t*K + j] * y[t*K + j, d], j in slot order; a slot whose id the sort left out adds nothing.
 * Global (H, T). */
__kernel void moe_combine(__global const float* y, __global const int* ids, __global const float* weights,
                          __global float* out, const MoeParams p) {
    const int K = p.k, H = p.hidden, E = p.experts;
    int d = get_global_id(0), t = get_global_id(1);
    if (d >= H) return;
    float acc = 0.0f;
    for (int j = 0; j < K; j++) {
        long s = (long) t * K + j;
        if ((uint) ids[s] < (uint) E) {
            float wy = weights[s] * y[s * H + d]; /* the product rounded, then the sum, as before */
            acc += wy;
        }
    }
    out[(long) t * H + d] = acc;
}
