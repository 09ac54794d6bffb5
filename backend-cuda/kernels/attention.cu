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
// attention kernel. attention_mma (at the end) is attention_gqa's prefill on tensor cores (compute capability 8.0 and
// up, GOSS_CUDA_ATTENTION_MMA; products of BF16 hi + lo terms with FP32 sums). `attention` is the plain kernel, one block per (query head, row), for the shapes attention_gqa
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
    int kvType;      // how the cache stores numbers: 0 F32, 1 F16, 2 BF16, 3 Q8_0 (io.gossgpu.backend.KvType)
};

// Element d of query pair n (row i0 + n / group, head g * group + n % group) of a block's tile of pairs.
__device__ __forceinline__ float pair_q(const float* __restrict__ q, int i0, int n, int group, int g, int qDim, int hd, int d) {
    return q[(size_t) (i0 + n / group) * qDim + (size_t) (g * group + n % group) * hd + d];
}

// Key and value element off (= g * hd + d) of position j: the cache slot j % slots before the batch's first position
// start, else the batch's own row j - start.
__device__ __forceinline__ void kv_at(const float* __restrict__ ck, const float* __restrict__ cv, const float* __restrict__ k,
                                      const float* __restrict__ v, int j, int start, int slots, int kvDim, size_t off,
                                      float& kx, float& vx) {
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
// attention_combine; a split without keys writes (S[h], 0) and returns before loading q (attention_combine skips
// splits with l = 0 without reading their acc). A pair without keys in a split that has keys writes (S[h], 0, 0...).
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

    int pLast = start + i0 + rows - 1;
    int jFirst = window > 0 ? max(0, start + i0 - window + 1) : 0;
    if (gridDim.z > 1) {
        const int keys = pLast - jFirst + 1;
        const int per = (keys + (int) gridDim.z * ATTN_TK - 1) / ((int) gridDim.z * ATTN_TK) * ATTN_TK;
        jFirst += (int) blockIdx.z * per;
        pLast = min(pLast, jFirst + per - 1); // pairs keep their own p: keys past pLast are not in this split
        if (jFirst > pLast) { // no keys (short contexts leave most of the fixed grid's splits empty): (S[h], 0) only
            for (int n = tid; n < npairs; n += blockDim.x) {
                const int hn = g * group + n % group;
                float* pt = part + (((size_t) blockIdx.z * T + i0 + n / group) * heads + hn) * (hd + 2);
                pt[0] = sinks[hn];
                pt[1] = 0.0f;
            }
            return;
        }
    }

    for (int idx = tid; idx < ATTN_PAIRS * hd; idx += blockDim.x) {
        const int n = idx / hd;
        const int d = idx % hd;
        float x = 0.0f;
        if (n < npairs) {
            x = pair_q(q, i0, n, group, g, qDim, hd, d);
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

    for (int j0 = jFirst; j0 <= pLast; j0 += ATTN_TK) {
        __syncthreads(); // q loaded / the previous tile's readers are done
        for (int idx = tid; idx < ATTN_TK * hd; idx += blockDim.x) {
            const int jj = idx / hd;
            const int d = idx % hd;
            const int j = j0 + jj;
            float kx = 0.0f, vx = 0.0f;
            if (j <= pLast) {
                kv_at(ck, cv, k, v, j, start, slots, kvDim, (size_t) g * hd + d, kx, vx);
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

// ---- attention_combine: grid (heads, min(T, 65535)), block B (a multiple of 32, >= 32), dynamic shared memory
// 8 * splits bytes ----------------------------------------------------------------------------------------------
// Merges the `splits` partial states (m_z, l_z, acc_z) of row i, head h written by attention_gqa:
// M = max(S[h], max_z m_z); Z = sum_z l_z e^(m_z - M) + e^(S[h] - M); out[i, h*hd + d] = sum_z acc_z[d] e^(m_z - M) / Z,
// the sum over d in z ascending order. Warp 0 takes the splits in parallel (lane t: splits t, t + 32, ...): a warp
// max, then e_z = e^(m_z - M) once per split, Z as a warp sum, and the splits with l_z != 0 listed in z order in
// shared memory (z, e_z). A split with l_z = 0 adds nothing (it has m_z = S[h] and acc_z = 0: m_z rises above the
// sink only with a key whose term e^0 = 1 enters l_z), so it is skipped and its acc_z never read: attention_gqa
// writes only (S[h], 0) for a split without keys. Thread d then sums acc_z[d] e_z over the listed splits: loads
// with addresses known up front, no expf.
extern "C" __global__ void attention_combine(const float* __restrict__ part, const float* __restrict__ sinks,
                                            float* __restrict__ out, const AttentionParams p)
{
    const int T = p.tokens, heads = p.heads, hd = p.headDim, splits = p.splits;
    out += (size_t) p.row0 * heads * hd;
    DYNAMIC_SHARED(float, smem);
    float* ez = smem;                        // e^(m_z - M) of the listed splits
    int* zs = (int*) (smem + splits);        // their z, ascending
    __shared__ int listed;
    __shared__ float zsum;
    const int h = blockIdx.x;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const float sink = sinks[h];
    const size_t stride = (size_t) T * heads * (hd + 2);
    for (int i = blockIdx.y; i < T; i += gridDim.y) {
        const float* p0 = part + ((size_t) i * heads + h) * (hd + 2);
        __syncthreads(); // the previous row's readers of the list are done
        if (tid < 32) {
            float mx = sink;
            for (int z = lane; z < splits; z += 32) {
                mx = fmaxf(mx, p0[z * stride]);
            }
            mx = warp_max(mx);
            float zs_lane = 0.0f;
            int n = 0;
            for (int z0 = 0; z0 < splits; z0 += 32) {
                const int z = z0 + lane;
                float l = 0.0f, e = 0.0f;
                if (z < splits) {
                    l = p0[z * stride + 1];
                    if (l != 0.0f) {
                        e = expf(p0[z * stride] - mx);
                    }
                }
                const int keys = l != 0.0f ? 1 : 0;
                zs_lane = fmaf(l, e, zs_lane);
                int c = keys; // inclusive count of listed splits over lanes <= lane
                for (int o = 1; o < 32; o <<= 1) {
                    const int t = __shfl_up_sync(0xffffffffu, c, o);
                    if (lane >= o) {
                        c += t;
                    }
                }
                if (keys) {
                    zs[n + c - 1] = z;
                    ez[n + c - 1] = e;
                }
                n += __shfl_sync(0xffffffffu, c, 31);
            }
            const float s = warp_sum(zs_lane) + expf(sink - mx);
            if (lane == 0) {
                listed = n;
                zsum = s;
            }
        }
        __syncthreads();
        const int n = listed;
        const float zt = zsum;
        for (int d = tid; d < hd; d += blockDim.x) {
            const float* pd = p0 + 2 + d;
            float a = 0.0f;
            GOSS_PRAGMA(unroll 8)
            for (int u = 0; u < n; u++) {
                a = fmaf(pd[zs[u] * stride], ez[u], a);
            }
            out[((size_t) i * heads + h) * hd + d] = a / zt;
        }
    }
}

// ---- attention_mma: prefill attention on tensor cores (flash attention), compute capability 8.0 and up ------------
// The formula at the top, for the same rows and heads as attention_gqa: one block per (KV head g, tile of tq query
// rows), tq = p.tileQueries = 64 / group rows, so the block's 64 (query row, head) pairs n (row i0 + n / group, head
// g*group + n % group) are the M of its products: warp w owns pairs 16w .. 16w + 15. Keys and values in tiles of 32
// over the block's key range [lo of its first row, p of its last]; per tile and warp:
//   S = Q K^T (16 pairs x 32 keys) on tensor cores; masked to j in [lo_n, p_n]; s = S * scale
//   m' = max(m, max_j s_j); c = e^(m - m'); P_j = e^(s_j - m'); l = l c + sum_j P_j   (m starts at the sink, l at 0)
//   O = O c + P V (16 pairs x hd; P V on tensor cores, its sum into O in FP32)
// and at the end out = O / (l + e^(S[h] - m)). Each product is BF16 with FP32 sums, both operands split into hi + lo
// BF16 (bf16_split, common.cuh) and three products taken (hi hi + hi lo + lo hi: about 16 of the 24 mantissa bits,
// relative error about 2^-16 per product). Lane l of a warp owns pair 16w + l/2: its running max and sum (both lanes
// of a pair hold the same values), keys 16 (l & 1) .. + 15 of each tile's scores and the outputs d = 2c + (l & 1).
// grid (kvHeads, ceil(T / tq)), block 128 (4 warps), group <= 64, hd a multiple of 16 up to 64; dynamic shared memory
// 256 (hd + 8) + 256 (max(32, hd) + 4) + 10240 bytes (46080 at hd 64): q, k, v tiles as BF16 hi and lo, a 16-row FP32
// scratch per warp (S, then P V), P as BF16 hi and lo per warp. A trap stub on sm_75 (CudaAttention never picks it).
#define AMMA_WARPS 4
#define AMMA_THREADS (32 * AMMA_WARPS)
#define AMMA_PAIRS (16 * AMMA_WARPS) // (query row, head) pairs per block
#define AMMA_KT 32                   // keys per tile
#define AMMA_HD_MAX 64
#define AMMA_PP (AMMA_KT + 8)        // pitch of P (BF16)

extern "C" __global__ void attention_mma(const float* __restrict__ q, const float* __restrict__ k,
                                         const float* __restrict__ v, const float* __restrict__ ck,
                                         const float* __restrict__ cv, const float* __restrict__ sinks,
                                         float* __restrict__ out, const int* __restrict__ pos, const AttentionParams p)
{
#ifdef GOSS_MMA
    namespace wmma = nvcuda::wmma;
    typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> Acc;
    const int T = p.tokens, heads = p.heads, group = p.group, hd = p.headDim, kvDim = p.kvDim, slots = p.slots,
              window = p.window, tq = p.tileQueries;
    const float scale = p.scale;
    q += (size_t) p.row0 * heads * hd;
    out += (size_t) p.row0 * heads * hd;
    k += (size_t) p.row0 * kvDim;
    v += (size_t) p.row0 * kvDim;
    const int start = pos[0];
    const int g = blockIdx.x;
    const int i0 = blockIdx.y * tq;
    const int rows = min(tq, T - i0);
    const int npairs = rows * group;
    const int qDim = heads * hd;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int steps = hd / 16;                 // 16-wide steps over hd
    const int kp = hd + 8;                     // pitch of the BF16 q, k, v tiles: a multiple of 8, rows over banks
    const int sp = max(AMMA_KT, hd) + 4;       // pitch of a warp's FP32 scratch: a multiple of 4
    // every array starts at a multiple of 32 bytes (wmma), the launch's size is one too
    DYNAMIC_SHARED(float, smem);
    __nv_bfloat16* khi = reinterpret_cast<__nv_bfloat16*>(smem); // AMMA_KT x kp each
    __nv_bfloat16* klo = khi + AMMA_KT * kp;
    __nv_bfloat16* vhi = klo + AMMA_KT * kp;
    __nv_bfloat16* vlo = vhi + AMMA_KT * kp;
    float* sw = reinterpret_cast<float*>(vlo + AMMA_KT * kp) + warp * 16 * sp;                 // 16 x sp per warp
    __nv_bfloat16* phi = reinterpret_cast<__nv_bfloat16*>(reinterpret_cast<float*>(vlo + AMMA_KT * kp) + AMMA_WARPS * 16 * sp)
                         + warp * 2 * 16 * AMMA_PP;                                          // 16 x AMMA_PP, hi then lo
    __nv_bfloat16* plo = phi + 16 * AMMA_PP;
    // q as hi + lo over the scratch and P (before the first key tile): AMMA_PAIRS x kp each
    __nv_bfloat16* qhi = reinterpret_cast<__nv_bfloat16*>(vlo + AMMA_KT * kp);
    __nv_bfloat16* qlo = qhi + AMMA_PAIRS * kp;

    for (int idx = tid; idx < AMMA_PAIRS * hd; idx += AMMA_THREADS) {
        const int n = idx / hd, d = idx % hd;
        const float x = n < npairs ? pair_q(q, i0, n, group, g, qDim, hd, d) : 0.0f;
        bf16_split(x, qhi[n * kp + d], qlo[n * kp + d]);
    }
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> qh[AMMA_HD_MAX / 16], ql[AMMA_HD_MAX / 16];
    GOSS_PRAGMA(unroll)
    for (int kk = 0; kk < AMMA_HD_MAX / 16; kk++) {
        if (kk < steps) {
            wmma::load_matrix_sync(qh[kk], qhi + warp * 16 * kp + 16 * kk, kp);
            wmma::load_matrix_sync(ql[kk], qlo + warp * 16 * kp + 16 * kk, kp);
        }
    }

    // this lane's pair: position, first key, sink; online softmax state; outputs d = 2c + (lane & 1)
    const int r = lane >> 1;
    const int n = warp * 16 + r;
    const bool valid = n < npairs;
    const int pn = start + i0 + n / group;
    const int lo = window > 0 ? max(0, pn - window + 1) : 0;
    const float sink = valid ? sinks[g * group + n % group] : 0.0f;
    float m = sink, l = 0.0f;
    float o[AMMA_HD_MAX / 2];
    GOSS_PRAGMA(unroll)
    for (int c = 0; c < AMMA_HD_MAX / 2; c++) {
        o[c] = 0.0f;
    }
    // the warp's key range (warp-uniform): from its first pair's first key to its last pair's position
    const bool active = warp * 16 < npairs;
    const int wp = start + i0 + (min(warp * 16 + 15, npairs - 1)) / group;
    const int wlo = window > 0 ? max(0, start + i0 + (warp * 16) / group - window + 1) : 0;

    const int pLast = start + i0 + rows - 1;
    const int jFirst = window > 0 ? max(0, start + i0 - window + 1) : 0;
    for (int j0 = jFirst; j0 <= pLast; j0 += AMMA_KT) {
        __syncthreads(); // q is in fragments / the previous tile's readers are done
        for (int idx = tid; idx < AMMA_KT * hd; idx += AMMA_THREADS) {
            const int jj = idx / hd, d = idx % hd;
            const int j = j0 + jj;
            float kx = 0.0f, vx = 0.0f;
            if (j <= pLast) {
                kv_at(ck, cv, k, v, j, start, slots, kvDim, (size_t) g * hd + d, kx, vx);
            }
            bf16_split(kx, khi[jj * kp + d], klo[jj * kp + d]);
            bf16_split(vx, vhi[jj * kp + d], vlo[jj * kp + d]);
        }
        __syncthreads();
        if (!active || j0 > wp || j0 + AMMA_KT - 1 < wlo) { // warp-uniform: no key of this tile is the warp's
            continue;
        }
        // S = Q K^T: K's tile read as the column-major B (hd x keys)
        for (int nf = 0; nf < AMMA_KT / 16; nf++) {
            Acc s;
            wmma::fill_fragment(s, 0.0f);
            GOSS_PRAGMA(unroll)
            for (int kk = 0; kk < AMMA_HD_MAX / 16; kk++) {
                if (kk < steps) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
                    wmma::load_matrix_sync(b, klo + nf * 16 * kp + 16 * kk, kp);
                    wmma::mma_sync(s, qh[kk], b, s);
                    wmma::load_matrix_sync(b, khi + nf * 16 * kp + 16 * kk, kp);
                    wmma::mma_sync(s, ql[kk], b, s);
                    wmma::mma_sync(s, qh[kk], b, s);
                }
            }
            wmma::store_matrix_sync(sw + 16 * nf, s, sp, wmma::mem_row_major);
        }
        __syncwarp();
        // online softmax over this lane's 16 keys, the pair's two lanes combined
        const int c0 = 16 * (lane & 1);
        float sv[16];
        float tmax = -INFINITY;
        for (int c = 0; c < 16; c++) {
            const int j = j0 + c0 + c;
            sv[c] = valid && j >= lo && j <= pn ? sw[r * sp + c0 + c] * scale : -INFINITY;
            tmax = fmaxf(tmax, sv[c]);
        }
        tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
        const float mNew = fmaxf(m, tmax);
        const float corr = expf(m - mNew);
        float sum = 0.0f;
        for (int c = 0; c < 16; c++) {
            const float e = expf(sv[c] - mNew); // masked keys: e^-inf = 0 (mNew is finite from the sink on)
            sum += e;
            bf16_split(e, phi[r * AMMA_PP + c0 + c], plo[r * AMMA_PP + c0 + c]);
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        l = l * corr + sum;
        m = mNew;
        __syncwarp(); // P is written, S is read
        // P V for this tile into fresh sums, then O = O corr + P V row by row
        Acc pv[AMMA_HD_MAX / 16];
        GOSS_PRAGMA(unroll)
        for (int nf = 0; nf < AMMA_HD_MAX / 16; nf++) {
            wmma::fill_fragment(pv[nf], 0.0f);
        }
        for (int kk = 0; kk < AMMA_KT / 16; kk++) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> ah, al;
            wmma::load_matrix_sync(ah, phi + 16 * kk, AMMA_PP);
            wmma::load_matrix_sync(al, plo + 16 * kk, AMMA_PP);
            GOSS_PRAGMA(unroll)
            for (int nf = 0; nf < AMMA_HD_MAX / 16; nf++) {
                if (nf < steps) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
                    wmma::load_matrix_sync(b, vlo + 16 * kk * kp + 16 * nf, kp);
                    wmma::mma_sync(pv[nf], ah, b, pv[nf]);
                    wmma::load_matrix_sync(b, vhi + 16 * kk * kp + 16 * nf, kp);
                    wmma::mma_sync(pv[nf], al, b, pv[nf]);
                    wmma::mma_sync(pv[nf], ah, b, pv[nf]);
                }
            }
        }
        GOSS_PRAGMA(unroll)
        for (int nf = 0; nf < AMMA_HD_MAX / 16; nf++) {
            if (nf < steps) {
                wmma::store_matrix_sync(sw + 16 * nf, pv[nf], sp, wmma::mem_row_major);
            }
        }
        __syncwarp();
        GOSS_PRAGMA(unroll)
        for (int c = 0; c < AMMA_HD_MAX / 2; c++) {
            const int d = 2 * c + (lane & 1);
            if (d < hd) {
                o[c] = fmaf(o[c], corr, sw[r * sp + d]);
            }
        }
    }

    if (valid) {
        const float z = l + expf(sink - m);
        float* orow = out + (size_t) (i0 + n / group) * qDim + (size_t) (g * group + n % group) * hd;
        GOSS_PRAGMA(unroll)
        for (int c = 0; c < AMMA_HD_MAX / 2; c++) {
            const int d = 2 * c + (lane & 1);
            if (d < hd) {
                orow[d] = o[c] / z;
            }
        }
    }
#else
    __trap(); // sm_75: CudaAttention picks this kernel only on compute capability 8.0 and up
#endif
}
