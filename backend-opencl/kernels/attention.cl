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
 */
/*
 * The online softmax over keys jb .. je of KV head g for the query in lq (one work-group, one key per work item
 * per chunk of the work-group size): updates the running max *m, the running sum *l = sum e^(s_j - *m) and
 * lacc[d] = sum e^(s_j - *m) v_j[d]. Every work item of the group calls it (it holds barriers).
 */
static void attend_keys(__global const float* k, __global const float* v, __global const float* ck, __global const float* cv,
                        __local const float* lq, __local float* ls, __local float* lacc, int jb, int je, int g, int hd,
                        int kvDim, int start, int slots, float scale, float* mp, float* lp) {
    int lid = get_local_id(0), wg = get_local_size(0);
    float m = *mp, l = *lp;
    for (int j0 = jb; j0 <= je; j0 += wg) {
        int n = min(wg, je - j0 + 1);
        int j = j0 + lid;
        float s = -INFINITY;
        if (lid < n) {
            __global const float* kr = j < start ? ck + (long) (j % slots) * kvDim + g * hd
                                                 : k + (long) (j - start) * kvDim + g * hd;
            float dot = 0.0f;
            for (int d = 0; d < hd; d++) dot = fma(lq[d], kr[d], dot);
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
            for (int u = 0; u < n; u++) {
                int jj = j0 + u;
                __global const float* vr = jj < start ? cv + (long) (jj % slots) * kvDim + g * hd
                                                      : v + (long) (jj - start) * kvDim + g * hd;
                a = fma(ls[u], vr[d], a);
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
                        __global const float* ck, __global const float* cv, __global const float* sinks,
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
    attend_keys(k, v, ck, cv, lq, ls, lacc, lo, p, g, hd, kvDim, start, slots, scale, &m, &l);
    float z = l + exp(sink - m);
    for (int d = lid; d < hd; d += wg) out[(long) i * qDim + h * hd + d] = lacc[d] / z;
}

/*
 * KV cache store after attention: for i in first .. T-1 (first = max(0, T - slots)),
 * slot = (start + i) % slots: ck[slot, :] = k[row0 + i, :], cv[slot, :] = v[row0 + i, :]. Global (kvDim, T - first).
 */
__kernel void kv_store(__global const float* k, __global const float* v, __global float* ck, __global float* cv,
                       __global const int* pos, const AttentionParams p) {
    const int start = pos[0], row0 = p.row0, slots = p.slots, kvDim = p.kvDim, first = p.first;
    int c = get_global_id(0), i = first + (int) get_global_id(1);
    if (c >= kvDim) return;
    long slot = (start + i) % slots;
    ck[slot * kvDim + c] = k[(long) (row0 + i) * kvDim + c];
    cv[slot * kvDim + c] = v[(long) (row0 + i) * kvDim + c];
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
                              __global const float* ck, __global const float* cv, __global const float* sinks,
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
    attend_keys(k, v, ck, cv, lq, ls, lacc, jb, je, g, hd, kvDim, start, slots, scale, &m, &l);
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
                            __global const float* ck, __global const float* cv, __global const float* sinks,
                            __global float* out, __global const int* pos, __global float* part,
                            __local float* lq, __local float* ls, __local float* lacc, const AttentionParams params) {
    const int start = pos[0], row0 = params.row0, heads = params.heads, group = params.group, hd = params.headDim, kvDim = params.kvDim,
              slots = params.slots, window = params.window, nsplit = params.splits,
              splitLen = split_len(start, params.tokens, window, nsplit);
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
            __global const float* kr = j < start ? ck + (long) (j % slots) * kvDim + g * hd
                                                 : k + (long) (j - start) * kvDim + g * hd;
            for (int d = 0; d < hd; d++) {
                float kd = kr[d];
                for (int a = 0; a < GQA_MAX; a++) {
                    if (a >= group) break;
                    sc[a] = fma(lq[a * hd + d], kd, sc[a]);
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
                float vd = (jj < start ? cv + (long) (jj % slots) * kvDim : v + (long) (jj - start) * kvDim)[g * hd + d];
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
