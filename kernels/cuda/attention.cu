// Attention with sinks (io.gossgpu.device.AttentionPipeline), causal, sliding window, GQA; then the KV-cache store.
// Every kernel takes its buffers, then one AttentionParams (the same struct in attention.cl and attention.metal); it
// indexes the sequence's rows from p.row0 and reads its first position from pos[0].
//
// attention_gqa (the default, prefill and decode): one block per (KV head g, tile of TQ query rows, key split
// z) handles all `group` query heads that share g (GQA: the 8 heads of one KV head of gpt-oss in one block), so
// each tile of keys and values is loaded into shared memory once for all of them. Prefill runs one split
// (gridDim.z = 1) and writes the output. Decode (T = 1) splits the keys over gridDim.z blocks per KV head (a
// fixed count, so that a CUDA graph of the step replays for every position: each block takes an equal share of
// the keys the position has), writes partial softmax states, and attention_combine merges them in split order.
//
// Reference formula (Backend.attention is the contract; io.gossgpu.cpu.ReferenceBackend the oracle):
//   row i (position p = start + i, start = pos[0] from the step buffer), query head h, KV head g = h / group;
//   keys j in [lo, p], lo = max(0, p - W + 1) when window W > 0 else 0;
//   k/v of j from cache slot j % slots when j < start, else row j - start of k/v;
//   s_j = (q_h . k_j) * scale;  sink S[h] not scaled;  m = max(max_j s_j, S[h]);
//   Z = sum_j e^(s_j - m) + e^(S[h] - m);  out[i, h*hd + d] = sum_j e^(s_j - m) / Z * v_j[d]
//   kv_store: for i in [first, T): slot = (start + i) % slots; ck[slot] = k[i]; cv[slot] = v[i]
// Online softmax started from the sink (m = S[h], l = 0), F32 throughout, no fast math. kv_store runs after the
// attention kernel. `attention` is the plain kernel, one block per (query head, row), for the shapes attention_gqa
// does not take (head_dim over 128, more than 16 query heads per KV head) and GOSS_CUDA_ATTENTION_PREFILL_MIN_T /
// GOSS_CUDA_ATTENTION_SPLITS = 0.

#include "common.cuh"

#define ATTN_WARPS 8      // block size 256
#define ATTN_PAIRS_W 2    // (query row, head) pairs per warp
#define ATTN_PAIRS 16     // per block: TQ * group <= 16
#define ATTN_TK 32        // keys per tile: one per lane
#define ATTN_HD_MAX 128   // hd <= 128: hd/32 <= 4 accumulators per lane and pair

// ---- attention: one block per (query head h, token i) ------------------------------------------------
// grid (heads, min(T, 65535)), block B; dynamic shared memory 4 * (2*hd + B) bytes.
// Keys are taken in chunks of B (one key per thread), online softmax started from the sink (m = S[h],
// l = 0), the hd accumulators in shared memory. The cache store is kv_store, launched after this kernel.
// The scalars of every attention kernel (io.gossgpu.device.AttentionParams); a kernel leaves the fields it has no
// use for unread.
struct AttentionParams {
    int tokens;      // T: the sequence's rows
    int row0;        // its first row of q, k, v and out
    int heads;       // query heads
    int group;       // query heads per KV head
    int headDim;     // hd
    int kvDim;       // values per row of k, v and the cache
    int slots;       // cache slots
    int window;      // W, 0: none
    float scale;
    int splits;      // key splits of attention_gqa, merged by attention_combine (1: none)
    int tileQueries; // tq: query rows per block of attention_gqa
    int first;       // kv_store: the first row stored
};

extern "C" __global__ void attention(const float* __restrict__ q, const float* __restrict__ k,
                                    const float* __restrict__ v, const float* __restrict__ ck,
                                    const float* __restrict__ cv, const float* __restrict__ sinks,
                                    float* __restrict__ out, const int* __restrict__ pos, const AttentionParams p)
{
    const int T = p.tokens, row0 = p.row0, heads = p.heads, group = p.group, hd = p.headDim, kvDim = p.kvDim,
              slots = p.slots, window = p.window;
    const float scale = p.scale;
    const int start = pos[0];
    q += (size_t) row0 * heads * hd;
    out += (size_t) row0 * heads * hd;
    k += (size_t) row0 * kvDim;
    v += (size_t) row0 * kvDim;
    DYNAMIC_SHARED(float, smem);
    float* lq = smem;            // hd
    float* lacc = smem + hd;     // hd
    float* ls = smem + 2 * hd;   // blockDim.x
    const int h = blockIdx.x;
    const int tid = threadIdx.x;
    const int B = blockDim.x;
    const int qDim = heads * hd;
    const int g = h / group;
    const float sink = sinks[h];
    for (int i = blockIdx.y; i < T; i += gridDim.y) {
        const int p = start + i;
        const int lo = window > 0 ? max(0, p - window + 1) : 0;
        __syncthreads(); // the previous row's readers of lq/lacc are done
        for (int d = tid; d < hd; d += B) {
            lq[d] = q[(size_t) i * qDim + (size_t) h * hd + d];
            lacc[d] = 0.0f;
        }
        __syncthreads();
        float m = sink;
        float l = 0.0f;
        for (int j0 = lo; j0 <= p; j0 += B) {
            const int n = min(B, p - j0 + 1);
            const int j = j0 + tid;
            float s = -INFINITY;
            if (tid < n) {
                const float* kr = j < start ? ck + (size_t) (j % slots) * kvDim + (size_t) g * hd
                                            : k + (size_t) (j - start) * kvDim + (size_t) g * hd;
                float dot = 0.0f;
                for (int d = 0; d < hd; d++) {
                    dot = fmaf(lq[d], kr[d], dot);
                }
                s = dot * scale;
            }
            ls[tid] = s;
            __syncthreads();
            float cm = m;
            for (int u = 0; u < n; u++) {
                cm = fmaxf(cm, ls[u]);
            }
            __syncthreads();
            ls[tid] = tid < n ? expf(s - cm) : 0.0f;
            __syncthreads();
            const float corr = expf(m - cm);
            float add = 0.0f;
            for (int u = 0; u < n; u++) {
                add += ls[u];
            }
            l = l * corr + add;
            for (int d = tid; d < hd; d += B) {
                float a = lacc[d] * corr;
                for (int u = 0; u < n; u++) {
                    const int jj = j0 + u;
                    const float* vr = jj < start ? cv + (size_t) (jj % slots) * kvDim + (size_t) g * hd
                                                 : v + (size_t) (jj - start) * kvDim + (size_t) g * hd;
                    a = fmaf(ls[u], vr[d], a);
                }
                lacc[d] = a;
            }
            m = cm;
            __syncthreads();
        }
        const float z = l + expf(sink - m);
        for (int d = tid; d < hd; d += B) {
            out[(size_t) i * qDim + (size_t) h * hd + d] = lacc[d] / z;
        }
    }
}

// ---- kv_store: grid (ceil(kvDim / B), min(T - first, 65535)), block B ----------------------------
extern "C" __global__ void kv_store(const float* __restrict__ k, const float* __restrict__ v, float* ck, float* cv,
                                        const int* __restrict__ pos, const AttentionParams p)
{
    const int T = p.tokens, slots = p.slots, kvDim = p.kvDim, first = p.first;
    const int start = pos[0];
    k += (size_t) p.row0 * kvDim;
    v += (size_t) p.row0 * kvDim;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= kvDim) {
        return;
    }
    for (int i = first + blockIdx.y; i < T; i += gridDim.y) {
        const size_t slot = (size_t) ((start + i) % slots);
        ck[slot * kvDim + c] = k[(size_t) i * kvDim + c];
        cv[slot * kvDim + c] = v[(size_t) i * kvDim + c];
    }
}

// ---- attention_gqa: grid (kvHeads, ceil(T / tq), splits), block 256, tq = max(1, 16 / group), group <= 16 ------
// hd <= 128; dynamic shared memory 4 * (16*hd + 32*(hd+1) + 32*hd) bytes. Pair n = w + 8u (warp w, u < 2) of
// the block is query row i0 + n / group and head g*group + n % group, for n < tq*group.
// splits = 1: out as the formula says. splits > 1: the block's keys are split z of the block's key range cut
// into `splits` pieces of equal length (a multiple of 32); it writes (m, l, acc[hd]) of its online softmax
// (started from the sink, l without the sink's term) to part[((z*T + i)*heads + h)*(hd + 2) ...] for
// attention_combine; a split without keys writes (S[h], 0, 0...).
extern "C" __global__ void attention_gqa(const float* __restrict__ q, const float* __restrict__ k,
                                          const float* __restrict__ v, const float* __restrict__ ck,
                                          const float* __restrict__ cv, const float* __restrict__ sinks,
                                          float* __restrict__ out, const int* __restrict__ pos,
                                          float* __restrict__ part, const AttentionParams p)
{
    const int T = p.tokens, heads = p.heads, group = p.group, hd = p.headDim, kvDim = p.kvDim, slots = p.slots,
              window = p.window, tq = p.tileQueries;
    const float scale = p.scale;
    q += (size_t) p.row0 * heads * hd;
    out += (size_t) p.row0 * heads * hd;
    k += (size_t) p.row0 * kvDim;
    v += (size_t) p.row0 * kvDim;
    DYNAMIC_SHARED(float, smem);
    float* qs = smem;                            // ATTN_PAIRS x hd
    float* ks = qs + ATTN_PAIRS * hd;            // ATTN_TK x (hd + 1): lane j reads row j without bank conflicts
    float* vs = ks + ATTN_TK * (hd + 1);         // ATTN_TK x hd
    const int start = pos[0];
    const int g = blockIdx.x;
    const int i0 = blockIdx.y * tq;
    const int rows = min(tq, T - i0);
    const int npairs = rows * group;
    const int qDim = heads * hd;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;

    for (int idx = tid; idx < ATTN_PAIRS * hd; idx += blockDim.x) {
        const int n = idx / hd;
        const int d = idx % hd;
        float x = 0.0f;
        if (n < npairs) {
            x = q[(size_t) (i0 + n / group) * qDim + (size_t) (g * group + n % group) * hd + d];
        }
        qs[idx] = x;
    }

    // this warp's pairs: position, first key, sink; online softmax state
    int pp[ATTN_PAIRS_W], plo[ATTN_PAIRS_W];
    float m[ATTN_PAIRS_W], l[ATTN_PAIRS_W], sink[ATTN_PAIRS_W], acc[ATTN_PAIRS_W][ATTN_HD_MAX / 32];
    for (int u = 0; u < ATTN_PAIRS_W; u++) {
        const int n = warp + ATTN_WARPS * u;
        pp[u] = -1;
        plo[u] = 0;
        sink[u] = 0.0f;
        if (n < npairs) {
            pp[u] = start + i0 + n / group;
            plo[u] = window > 0 ? max(0, pp[u] - window + 1) : 0;
            sink[u] = sinks[g * group + n % group];
        }
        m[u] = sink[u];
        l[u] = 0.0f;
        for (int r = 0; r < ATTN_HD_MAX / 32; r++) {
            acc[u][r] = 0.0f;
        }
    }

    int pLast = start + i0 + rows - 1;
    int jFirst = window > 0 ? max(0, start + i0 - window + 1) : 0;
    if (gridDim.z > 1) {
        const int keys = pLast - jFirst + 1;
        const int per = (keys + (int) gridDim.z * ATTN_TK - 1) / ((int) gridDim.z * ATTN_TK) * ATTN_TK;
        jFirst += (int) blockIdx.z * per;
        pLast = min(pLast, jFirst + per - 1); // pairs keep their own p: keys past pLast are not in this split
    }
    for (int j0 = jFirst; j0 <= pLast; j0 += ATTN_TK) {
        __syncthreads(); // q loaded / the previous tile's readers are done
        for (int idx = tid; idx < ATTN_TK * hd; idx += blockDim.x) {
            const int jj = idx / hd;
            const int d = idx % hd;
            const int j = j0 + jj;
            float kx = 0.0f, vx = 0.0f;
            if (j <= pLast) {
                const size_t off = (size_t) g * hd + d;
                if (j < start) {
                    const size_t row = (size_t) (j % slots) * kvDim;
                    kx = ck[row + off];
                    vx = cv[row + off];
                } else {
                    const size_t row = (size_t) (j - start) * kvDim;
                    kx = k[row + off];
                    vx = v[row + off];
                }
            }
            ks[jj * (hd + 1) + d] = kx;
            vs[jj * hd + d] = vx;
        }
        __syncthreads();
        for (int u = 0; u < ATTN_PAIRS_W; u++) {
            const int n = warp + ATTN_WARPS * u;
            // warp-uniform: pairs past the end, and tiles wholly outside this pair's keys, are skipped
            if (n >= npairs || j0 > pp[u] || j0 + ATTN_TK - 1 < plo[u]) {
                continue;
            }
            const int j = j0 + lane;
            const bool ok = j >= plo[u] && j <= pp[u] && j <= pLast;
            float s = -INFINITY;
            if (ok) {
                const float* qn = qs + n * hd;
                const float* kj = ks + lane * (hd + 1);
                float dot = 0.0f;
                for (int d = 0; d < hd; d++) {
                    dot = fmaf(qn[d], kj[d], dot);
                }
                s = dot * scale;
            }
            const float mNew = fmaxf(m[u], warp_max(s));
            const float e = ok ? expf(s - mNew) : 0.0f;
            const float corr = expf(m[u] - mNew);
            l[u] = l[u] * corr + warp_sum(e);
            m[u] = mNew;
            for (int r = 0; r < ATTN_HD_MAX / 32; r++) {
                acc[u][r] *= corr;
            }
            for (int jj = 0; jj < ATTN_TK; jj++) {
                const float ej = __shfl_sync(0xffffffffu, e, jj);
                for (int r = 0; r < ATTN_HD_MAX / 32; r++) {
                    const int d = lane + 32 * r;
                    if (d < hd) {
                        acc[u][r] = fmaf(ej, vs[jj * hd + d], acc[u][r]);
                    }
                }
            }
        }
    }

    for (int u = 0; u < ATTN_PAIRS_W; u++) {
        const int n = warp + ATTN_WARPS * u;
        if (n < npairs && gridDim.z > 1) {
            float* pt = part + (((size_t) blockIdx.z * T + i0 + n / group) * heads + g * group + n % group) * (hd + 2);
            if (lane == 0) {
                pt[0] = m[u];
                pt[1] = l[u];
            }
            for (int r = 0; r < ATTN_HD_MAX / 32; r++) {
                const int d = lane + 32 * r;
                if (d < hd) {
                    pt[2 + d] = acc[u][r];
                }
            }
        } else if (n < npairs) {
            const float z = l[u] + expf(sink[u] - m[u]);
            float* o = out + (size_t) (i0 + n / group) * qDim + (size_t) (g * group + n % group) * hd;
            for (int r = 0; r < ATTN_HD_MAX / 32; r++) {
                const int d = lane + 32 * r;
                if (d < hd) {
                    o[d] = acc[u][r] / z;
                }
            }
        }
    }
}

// ---- attention_combine: grid (heads, min(T, 65535)), block B ----------------------------------------------------
// Merges the `splits` partial states (m_z, l_z, acc_z) of row i, head h written by attention_gqa, z ascending:
// M = max_z m_z; Z = sum_z l_z e^(m_z - M) + e^(S[h] - M); out[i, h*hd + d] = sum_z acc_z[d] e^(m_z - M) / Z.
extern "C" __global__ void attention_combine(const float* __restrict__ part, const float* __restrict__ sinks,
                                            float* __restrict__ out, const AttentionParams p)
{
    const int T = p.tokens, heads = p.heads, hd = p.headDim, splits = p.splits;
    out += (size_t) p.row0 * heads * hd;
    const int h = blockIdx.x;
    const size_t stride = (size_t) T * heads * (hd + 2);
    for (int i = blockIdx.y; i < T; i += gridDim.y) {
        const float* p0 = part + ((size_t) i * heads + h) * (hd + 2);
        float mx = sinks[h];
        for (int z = 0; z < splits; z++) {
            mx = fmaxf(mx, p0[z * stride]);
        }
        float zsum = expf(sinks[h] - mx);
        for (int z = 0; z < splits; z++) {
            zsum = fmaf(p0[z * stride + 1], expf(p0[z * stride] - mx), zsum);
        }
        for (int d = threadIdx.x; d < hd; d += blockDim.x) {
            float a = 0.0f;
            for (int z = 0; z < splits; z++) {
                a = fmaf(p0[z * stride + 2 + d], expf(p0[z * stride] - mx), a);
            }
            out[((size_t) i * heads + h) * hd + d] = a / zsum;
        }
    }
}
