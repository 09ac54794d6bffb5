/*
 * Scaled dot-product attention with sinks (causal, optional sliding window, grouped-query) of one sequence
 * of a batch: its rows row0 .. row0+T-1 of q, k, v and out. For its row i (position p = start + i) and query
 * head h, KV head g = h / group (grouped, never h % kv):
 *   allowed keys j: lo <= j <= p, lo = max(0, p - W + 1) on sliding layers (window W > 0), else 0;
 *   key/value j from the cache slot j % slots when j < start, else from row row0 + j - start of k/v;
 *   s_j = (q_h . k_{g,j}) * scale,  scale = 1/sqrt(hd);  sink S[h] (not scaled)
 *   m = max(max_j s_j, S[h]),  Z = sum_j e^(s_j - m) + e^(S[h] - m)
 *   out[row0 + i, h*hd + d] = sum_j e^(s_j - m) / Z * v_{g,j}[d]
 * Every kernel takes its buffers, then one AttentionParams (io.gossgpu.device.AttentionParams, the same struct in
 * attention.cu and attention.metal); it reads start from pos[0] and moves q, k, v and out to the sequence's first
 * row (row0), then indexes its rows from 0.
 * One work-group per (h, i): keys are taken in chunks of the work-group size (one key per work item),
 * with an online (running max) softmax so the context length is unbounded; the accumulator of hd
 * values lives in local memory. Local size = GOSS_OPENCL_ATTENTION_WG. The cache store is kv_store below,
 * enqueued after this kernel (in-order queue): the batch attends before it is stored.
 *
 * The cache stores its numbers as AttentionParams.kvType says (the io.gossgpu.backend.KvType ordinals); a buffer of
 * n = slots rows of kvDim numbers holds x' = what each number reads back as:
 *   KV_F32 : n*kvDim floats, x' = x
 *   KV_F16 : n*kvDim IEEE halves, x' = f16(x) (round to nearest even)
 *   KV_BF16: n*kvDim bf16, x' = the float's upper 16 bits after round to nearest even
 *   KV_Q8_0: per block of 32 consecutive numbers of a row (the last block of a row may be shorter)
 *              amax = max |x|, d = amax / 127, dh = f16(d), q = clamp(rint(x / d), -127, 127) (q = 0 when d = 0),
 *              x' = q * dh;
 *            first n*kvDim int8 q, row-major, then n*nb f16 dh (nb = ceil(kvDim / 32); row r's block b at r*nb + b)
 * With a type other than F32, kv_round first rounds the batch's own rows of k and v in place to x', so that the batch
 * attends to its keys and values as later steps read them back; the attention kernels decode the cache (kv_load).
 */
#define KV_F32 0
#define KV_F16 1
#define KV_BF16 2
#define KV_Q8_0 3
#define KV_BLOCK 32

/* Scale dh of Q8_0 block b of cache row r: read as two bytes (the scale region may start at an odd byte). */
inline float kv_q8_scale(__global const uchar* c, long r, int b, int kvDim, int slots) {
    __global const uchar* s = c + (long) slots * kvDim + 2 * (r * ((kvDim + KV_BLOCK - 1) / KV_BLOCK) + b);
    return f16_to_f32((uint) s[0] | ((uint) s[1] << 8));
}

/* x' of number col of cache row r, stored as type (not F32: that path reads the floats directly). */
inline float kv_load(__global const uchar* c, int type, long r, int col, int kvDim, int slots) {
    long e = r * kvDim + col;
    if (type == KV_F16) return vload_half(e, (__global const half*) c);
    if (type == KV_BF16) return bf16_to_f32(((__global const ushort*) c)[e]);
    return (float) ((__global const char*) c)[e] * kv_q8_scale(c, r, col / KV_BLOCK, kvDim, slots);
}

/* Q8_0's d = amax / 127, correctly rounded with float multiply and fma only (OpenCL's '/' may be off by ulps):
 * q0 = amax * fl(1/127), then one correction by the exact residual amax - 127 q0. Checked against Java's amax / 127f for
 * every finite float amax >= 0. */
inline float q8_scale_of(float amax) {
    const float r127 = 0x1.020408p-7f; /* fl(1/127) */
    float q0 = amax * r127;
    return fma(fma(-q0, 127.0f, amax), r127, q0);
}

/* Q8_0's q of x under d: clamp(rint(x / d), -127, 127), 0 when d = 0. Where '/' is not correctly rounded (OpenCL allows
 * 2.5 ulp), a quotient within a few ulps of a half-integer may round the other way than Java's: q off by one, x' by one
 * step dh, in rare numbers (at most ~1e-5 of them for a 2-ulp division, on Gaussian data); PoCL's division is
 * exact. */
inline int q8_quant(float x, float d) {
    return d == 0.0f ? 0 : (int) clamp(rint(x / d), -127.0f, 127.0f);
}

/* d of the n (<= 32) numbers x[0 .. n). */
inline float q8_block_scale(__global const float* x, int n) {
    float amax = 0.0f;
    for (int e = 0; e < n; e++) amax = fmax(amax, fabs(x[e]));
    return q8_scale_of(amax);
}

/* sum_d lq[d] * x'[r, col0 + d] for d < hd, in d order, over a cache row stored as type (not F32). */
inline float kv_dot(__local const float* lq, __global const uchar* c, int type, long r, int col0, int hd, int kvDim,
                    int slots) {
    float dot = 0.0f;
    for (int d = 0; d < hd; d++) dot = fma(lq[d], kv_load(c, type, r, col0 + d, kvDim, slots), dot);
    return dot;
}

/*
 * The online softmax over keys jb .. je of KV head g for the query in lq (one work-group, one key per work item
 * per chunk of the work-group size): updates the running max *m, the running sum *l = sum e^(s_j - *m) and
 * lacc[d] = sum e^(s_j - *m) v_j[d]. Every work item of the group calls it (it holds barriers).
 */
static void attend_keys(__global const float* k, __global const float* v, __global const uchar* ck, __global const uchar* cv,
                        int type, __local const float* lq, __local float* ls, __local float* lacc, int jb, int je, int g,
                        int hd, int kvDim, int start, int slots, float scale, float* mp, float* lp) {
    int lid = get_local_id(0), wg = get_local_size(0);
    float m = *mp, l = *lp;
    for (int j0 = jb; j0 <= je; j0 += wg) {
        int n = min(wg, je - j0 + 1);
        int j = j0 + lid;
        float s = -INFINITY;
        if (lid < n) {
            float dot = 0.0f;
            if (type != KV_F32 && j < start) {
                dot = kv_dot(lq, ck, type, j % slots, g * hd, hd, kvDim, slots);
            } else {
                __global const float* kr = j < start ? (__global const float*) ck + (long) (j % slots) * kvDim + g * hd
                                                     : k + (long) (j - start) * kvDim + g * hd;
                for (int d = 0; d < hd; d++) dot = fma(lq[d], kr[d], dot);
            }
            s = dot * scale;
        }
        ls[lid] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        float cm = m;
        for (int u = 0; u < n; u++) cm = fmax(cm, ls[u]);
        barrier(CLK_LOCAL_MEM_FENCE);
        ls[lid] = lid < n ? exp(s - cm) : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        float corr = exp(m - cm); /* m = -inf on a split's first chunk: 0 */
        float add = 0.0f;
        for (int u = 0; u < n; u++) add += ls[u];
        l = l * corr + add;
        for (int d = lid; d < hd; d += wg) {
            float a = lacc[d] * corr;
            if (type == KV_F32) {
                for (int u = 0; u < n; u++) {
                    int jj = j0 + u;
                    __global const float* vr = jj < start ? (__global const float*) cv + (long) (jj % slots) * kvDim + g * hd
                                                          : v + (long) (jj - start) * kvDim + g * hd;
                    a = fma(ls[u], vr[d], a);
                }
            } else {
                for (int u = 0; u < n; u++) {
                    int jj = j0 + u;
                    float vd = jj < start ? kv_load(cv, type, jj % slots, g * hd + d, kvDim, slots)
                                          : v[(long) (jj - start) * kvDim + g * hd + d];
                    a = fma(ls[u], vd, a);
                }
            }
            lacc[d] = a;
        }
        m = cm;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *mp = m;
    *lp = l;
}

typedef struct {
    int tokens; int row0; int heads; int group; int headDim; int kvDim; int slots; int window; float scale; int splits;
    int tileQueries; int first; int kvType;
} AttentionParams;

/* The keys of row i are cut into nsplit ranges of this many: the longest row's keys (the last) over nsplit. */
static int split_len(int start, int T, int window, int nsplit) {
    int maxKeys = window > 0 ? min(window, start + T) : start + T;
    return (maxKeys + nsplit - 1) / nsplit;
}

__kernel void attention(__global const float* q, __global const float* k, __global const float* v,
                        __global const uchar* ck, __global const uchar* cv, __global const float* sinks,
                        __global float* out, __global const int* pos, __local float* lq, __local float* ls, __local float* lacc,
                        const AttentionParams params) {
    const int start = pos[0], row0 = params.row0, heads = params.heads, group = params.group, hd = params.headDim, kvDim = params.kvDim,
              slots = params.slots, window = params.window;
    const float scale = params.scale;
    int h = get_group_id(0), i = get_group_id(1);
    int lid = get_local_id(0), wg = get_local_size(0);
    int qDim = heads * hd, g = h / group, p = start + i;
    q += (long) row0 * qDim; out += (long) row0 * qDim;
    k += (long) row0 * kvDim; v += (long) row0 * kvDim;
    int lo = window > 0 ? max(0, p - window + 1) : 0;
    for (int d = lid; d < hd; d += wg) {
        lq[d] = q[(long) i * qDim + h * hd + d];
        lacc[d] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float sink = sinks[h];
    float m = sink, l = 0.0f;
    attend_keys(k, v, ck, cv, params.kvType, lq, ls, lacc, lo, p, g, hd, kvDim, start, slots, scale, &m, &l);
    float z = l + exp(sink - m);
    for (int d = lid; d < hd; d += wg) out[(long) i * qDim + h * hd + d] = lacc[d] / z;
}

/*
 * KV cache store after attention: for i in first .. T-1 (first = max(0, T - slots)),
 * slot = (start + i) % slots: ck[slot, :] = k[row0 + i, :], cv[slot, :] = v[row0 + i, :], encoded as p.kvType says
 * (F16, BF16: round to nearest even; Q8_0: d, dh, q of the block as in the header). The rows are kv_round's already
 * (not F32), so encoding them is exact: a Q8_0 block of q * dh finds d = dh and the same q.
 * Global (kvDim, T - first); for Q8_0 (ceil(kvDim / 32), T - first): one work item per block.
 */
__kernel void kv_store(__global const float* k, __global const float* v, __global uchar* ck, __global uchar* cv,
                       __global const int* pos, const AttentionParams p) {
    const int start = pos[0], row0 = p.row0, slots = p.slots, kvDim = p.kvDim, first = p.first, type = p.kvType;
    int c = get_global_id(0), i = first + (int) get_global_id(1);
    long slot = (start + i) % slots;
    __global const float* kr = k + (long) (row0 + i) * kvDim;
    __global const float* vr = v + (long) (row0 + i) * kvDim;
    if (type == KV_Q8_0) {
        int c0 = c * KV_BLOCK;
        if (c0 >= kvDim) return;
        int n = min(KV_BLOCK, kvDim - c0);
        long s = (long) slots * kvDim + 2 * (slot * ((kvDim + KV_BLOCK - 1) / KV_BLOCK) + c);
        for (int t = 0; t < 2; t++) {
            __global const float* x = (t == 0 ? kr : vr) + c0;
            __global uchar* out = t == 0 ? ck : cv;
            float d = q8_block_scale(x, n);
            ushort dh = f16_bits(d);
            for (int e = 0; e < n; e++) ((__global char*) out)[slot * kvDim + c0 + e] = (char) q8_quant(x[e], d);
            out[s] = (uchar) dh;
            out[s + 1] = (uchar) (dh >> 8);
        }
        return;
    }
    if (c >= kvDim) return;
    long e = slot * kvDim + c;
    if (type == KV_F32) {
        ((__global float*) ck)[e] = kr[c];
        ((__global float*) cv)[e] = vr[c];
    } else if (type == KV_F16) {
        vstore_half_rte(kr[c], e, (__global half*) ck);
        vstore_half_rte(vr[c], e, (__global half*) cv);
    } else {
        ((__global ushort*) ck)[e] = bf16_bits(kr[c]);
        ((__global ushort*) cv)[e] = bf16_bits(vr[c]);
    }
}

/*
 * Before attention on a cache that is not F32: rows row0 .. row0+T-1 of k and v rounded in place to x', what the cache
 * will hold (io.gossgpu.backend.KvType.round): F16 f16(x), BF16 bf16(x), Q8_0 q * dh of each block (the header's
 * formulas). Rounding is idempotent, so kv_store later encodes exactly these numbers.
 * Global (kvDim, T); for Q8_0 (ceil(kvDim / 32), T): one work item per block.
 */
__kernel void kv_round(__global float* k, __global float* v, const AttentionParams p) {
    const int kvDim = p.kvDim, type = p.kvType;
    int c = get_global_id(0), i = get_global_id(1);
    __global float* kr = k + (long) (p.row0 + i) * kvDim;
    __global float* vr = v + (long) (p.row0 + i) * kvDim;
    if (type == KV_Q8_0) {
        int c0 = c * KV_BLOCK;
        if (c0 >= kvDim) return;
        int n = min(KV_BLOCK, kvDim - c0);
        for (int t = 0; t < 2; t++) {
            __global float* x = (t == 0 ? kr : vr) + c0;
            float d = q8_block_scale(x, n);
            float dh = f16_to_f32(f16_bits(d));
            for (int e = 0; e < n; e++) x[e] = (float) q8_quant(x[e], d) * dh;
        }
        return;
    }
    if (c >= kvDim) return;
    if (type == KV_F16) {
        kr[c] = f16_to_f32(f16_bits(kr[c]));
        vr[c] = f16_to_f32(f16_bits(vr[c]));
    } else if (type == KV_BF16) {
        kr[c] = bf16_to_f32(bf16_bits(kr[c]));
        vr[c] = bf16_to_f32(bf16_bits(vr[c]));
    }
}

/*
 * Split-K attention for batches too small to fill the device (decode): the allowed keys of row i, lo..p,
 * are cut into nsplit ranges of splitLen keys (split_len); work-group (h, i, s) runs the same online softmax over its
 * range, starting from m = -inf (no sink), and writes its partial (m_s, l_s = sum e^(s_j - m_s),
 * acc_s[d] = sum e^(s_j - m_s) v_j[d]) to part[((i*heads + h)*nsplit + s)*(hd + 2) ..]. attention_combine then
 * folds in the sink: M = max(S[h], max_s m_s), Z = sum_s l_s e^(m_s - M) + e^(S[h] - M),
 * out[i, h*hd + d] = sum_s acc_s[d] e^(m_s - M) / Z — the same formula as attention above.
 */
__kernel void attention_split(__global const float* q, __global const float* k, __global const float* v,
                              __global const uchar* ck, __global const uchar* cv, __global const float* sinks,
                              __global float* out, __global const int* pos, __global float* part,
                              __local float* lq, __local float* ls, __local float* lacc, const AttentionParams params) {
    const int start = pos[0], row0 = params.row0, heads = params.heads, group = params.group, hd = params.headDim, kvDim = params.kvDim,
              slots = params.slots, window = params.window, nsplit = params.splits,
              splitLen = split_len(start, params.tokens, window, nsplit);
    const float scale = params.scale;
    int h = get_group_id(0), i = get_group_id(1), sp = get_group_id(2);
    int lid = get_local_id(0), wg = get_local_size(0);
    int qDim = heads * hd, g = h / group, p = start + i;
    q += (long) row0 * qDim;
    k += (long) row0 * kvDim; v += (long) row0 * kvDim;
    int lo = window > 0 ? max(0, p - window + 1) : 0;
    int jb = lo + sp * splitLen, je = min(p, jb + splitLen - 1);
    for (int d = lid; d < hd; d += wg) {
        lq[d] = q[(long) i * qDim + h * hd + d];
        lacc[d] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float m = -INFINITY, l = 0.0f;
    attend_keys(k, v, ck, cv, params.kvType, lq, ls, lacc, jb, je, g, hd, kvDim, start, slots, scale, &m, &l);
    __global float* pp = part + (((long) i * heads + h) * nsplit + sp) * (hd + 2);
    if (lid == 0) {
        pp[0] = m;
        pp[1] = l;
    }
    for (int d = lid; d < hd; d += wg) pp[2 + d] = lacc[d];
}

/* Folds the nsplit partials of (i, h) and the sink into row row0 + i of out. Global (hd, heads, T). */
__kernel void attention_combine(__global const float* part, __global const float* sinks, __global float* out,
                                const AttentionParams p) {
    const int heads = p.heads, hd = p.headDim, nsplit = p.splits, row0 = p.row0;
    int d = get_global_id(0), h = get_global_id(1), i = get_global_id(2);
    if (d >= hd) return;
    __global const float* pp = part + ((long) i * heads + h) * nsplit * (hd + 2);
    float sink = sinks[h];
    float mx = sink;
    for (int s = 0; s < nsplit; s++) mx = fmax(mx, pp[s * (hd + 2)]);
    float z = exp(sink - mx), acc = 0.0f;
    for (int s = 0; s < nsplit; s++) {
        float ms = pp[s * (hd + 2)];
        float f = ms == -INFINITY ? 0.0f : exp(ms - mx);
        z = fma(pp[s * (hd + 2) + 1], f, z);
        acc = fma(pp[s * (hd + 2) + 2 + d], f, acc);
    }
    out[(long) (row0 + i) * heads * hd + h * hd + d] = acc / z;
}

/*
 * The same attention with the query heads of one KV head together (GQA-shared): work-group (g, i, s)
 * runs the online softmax for heads h = g*group .. g*group + group - 1 over the keys of split s, so each
 * key and value row is read once per group instead of once per head. nsplit == 1: m starts at the sink
 * and the result goes to out; nsplit > 1: m starts at -inf and partials go to part for attention_combine.
 * group <= GQA_MAX (a build option, 16). Local size = GOSS_OPENCL_ATTENTION_WG.
 */
#ifndef GQA_MAX
#define GQA_MAX 16
#endif

__kernel void attention_gqa(__global const float* q, __global const float* k, __global const float* v,
                            __global const uchar* ck, __global const uchar* cv, __global const float* sinks,
                            __global float* out, __global const int* pos, __global float* part,
                            __local float* lq, __local float* ls, __local float* lacc, const AttentionParams params) {
    const int start = pos[0], row0 = params.row0, heads = params.heads, group = params.group, hd = params.headDim, kvDim = params.kvDim,
              slots = params.slots, window = params.window, nsplit = params.splits,
              splitLen = split_len(start, params.tokens, window, nsplit), type = params.kvType;
    const float scale = params.scale;
    int g = get_group_id(0), i = get_group_id(1), sp = get_group_id(2);
    int lid = get_local_id(0), wg = get_local_size(0);
    int qDim = heads * hd, h0 = g * group, p = start + i;
    q += (long) row0 * qDim; out += (long) row0 * qDim;
    k += (long) row0 * kvDim; v += (long) row0 * kvDim;
    int lo = window > 0 ? max(0, p - window + 1) : 0;
    int jb = lo + sp * splitLen, je = nsplit == 1 ? p : min(p, jb + splitLen - 1);
    for (int e = lid; e < group * hd; e += wg) {
        lq[e] = q[(long) i * qDim + h0 * hd + e];
        lacc[e] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float m[GQA_MAX], l[GQA_MAX], sc[GQA_MAX];
    for (int a = 0; a < GQA_MAX; a++) {
        m[a] = a < group ? (nsplit == 1 ? sinks[h0 + a] : -INFINITY) : 0.0f;
        l[a] = 0.0f;
    }
    for (int j0 = jb; j0 <= je; j0 += wg) {
        int n = min(wg, je - j0 + 1);
        int j = j0 + lid;
        for (int a = 0; a < GQA_MAX; a++) sc[a] = 0.0f;
        if (lid < n) {
            if (type != KV_F32 && j < start) {
                for (int d = 0; d < hd; d++) {
                    float kd = kv_load(ck, type, j % slots, g * hd + d, kvDim, slots);
                    for (int a = 0; a < GQA_MAX; a++) {
                        if (a >= group) break;
                        sc[a] = fma(lq[a * hd + d], kd, sc[a]);
                    }
                }
            } else {
                __global const float* kr = j < start ? (__global const float*) ck + (long) (j % slots) * kvDim + g * hd
                                                     : k + (long) (j - start) * kvDim + g * hd;
                for (int d = 0; d < hd; d++) {
                    float kd = kr[d];
                    for (int a = 0; a < GQA_MAX; a++) {
                        if (a >= group) break;
                        sc[a] = fma(lq[a * hd + d], kd, sc[a]);
                    }
                }
            }
        }
        for (int a = 0; a < group; a++) ls[a * wg + lid] = lid < n ? sc[a] * scale : -INFINITY;
        barrier(CLK_LOCAL_MEM_FENCE);
        float cm[GQA_MAX];
        for (int a = 0; a < GQA_MAX; a++) {
            if (a >= group) break;
            float c = m[a];
            for (int u = 0; u < n; u++) c = fmax(c, ls[a * wg + u]);
            cm[a] = c;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int a = 0; a < group; a++) ls[a * wg + lid] = lid < n ? exp(sc[a] * scale - cm[a]) : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int a = 0; a < GQA_MAX; a++) {
            if (a >= group) break;
            float corr = exp(m[a] - cm[a]);
            float add = 0.0f;
            for (int u = 0; u < n; u++) add += ls[a * wg + u];
            l[a] = l[a] * corr + add;
            sc[a] = corr; /* reused below as this head's rescale factor */
            m[a] = cm[a];
        }
        for (int d = lid; d < hd; d += wg) {
            float acc[GQA_MAX];
            for (int a = 0; a < GQA_MAX; a++) acc[a] = a < group ? lacc[a * hd + d] * sc[a] : 0.0f;
            for (int u = 0; u < n; u++) {
                int jj = j0 + u;
                float vd = jj >= start ? v[(long) (jj - start) * kvDim + g * hd + d]
                           : type == KV_F32 ? ((__global const float*) cv)[(long) (jj % slots) * kvDim + g * hd + d]
                                            : kv_load(cv, type, jj % slots, g * hd + d, kvDim, slots);
                for (int a = 0; a < GQA_MAX; a++) {
                    if (a >= group) break;
                    acc[a] = fma(ls[a * wg + u], vd, acc[a]);
                }
            }
            for (int a = 0; a < group; a++) lacc[a * hd + d] = acc[a];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (nsplit == 1) {
        for (int e = lid; e < group * hd; e += wg) {
            int a = e / hd;
            float z = l[a] + exp(sinks[h0 + a] - m[a]);
            out[(long) i * qDim + h0 * hd + e] = lacc[e] / z;
        }
    } else {
        for (int a = 0; a < group; a++) {
            __global float* pp = part + (((long) i * heads + h0 + a) * nsplit + sp) * (hd + 2);
            if (lid == 0) {
                pp[0] = m[a];
                pp[1] = l[a];
            }
            for (int d = lid; d < hd; d += wg) pp[2 + d] = lacc[a * hd + d];
        }
    }
}
