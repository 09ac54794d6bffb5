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
//   A cache of type t (p.kvType, KvType: F32, F16, BF16, Q8_0) holds round_t(x) of each number, and the batch's own
//   k/v rows count as rounded too: kv_round (t != F32, before the attention kernel) rounds them in place; every kernel
//   reads the cache through kv_load (its layout and formulas below AttentionParams), kv_store encodes to t.
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

// ---- the cache's number types (io.gossgpu.backend.KvType; p.kvType, the same for every thread of a launch) ---------
// A cache buffer (one layer's keys, or its values) of n = slots rows of kvDim numbers; number c of row r:
//   F32 (0):  float at [r*kvDim + c]
//   F16 (1):  IEEE half at [r*kvDim + c]                       f16(x): round to nearest even
//   BF16 (2): the upper 16 bits of the float at [r*kvDim + c]  bf16(x): round to nearest even
//   Q8_0 (3): int8 q at byte r*kvDim + c, then n*nb F16 scales from byte n*kvDim (nb = ceil(kvDim / 32)), block
//             b = c / 32 of row r at scale index r*nb + b (2-byte aligned: kvDim is even, as head_dim is);
//             the value is q * dh. Stored per block of 32 consecutive numbers of a row (the last may be shorter):
//             amax = max |x| (NaN when one is), d = amax / 127, dh = f16(d),
//             q = clamp(rint(x / d), -127, 127) (0 when d = 0 or x / d is NaN)
// KvType.round(x), what a number reads back as, is f16(x), bf16(x) or q * dh: idempotent. kv_round rounds the batch's
// rows of k and v to it before the attention kernel, so the kernels read the batch's own rows as floats and only the
// cache in its type (kv_load); kv_store encodes the rounded rows after. IEEE division, rintf, __float2half_rn: no fast math.
#define KV_F32 0
#define KV_F16 1
#define KV_BF16 2
#define KV_Q8_0 3
#define KV_Q8_BLOCK 32

// Number col of row `row` of a cache buffer of `slots` rows stored as `type`.
__device__ __forceinline__ float kv_load(const void* __restrict__ c, int type, int slots, int kvDim, size_t row, int col)
{
    const size_t i = row * kvDim + col;
    if (type == KV_F32) {
        return static_cast<const float*>(c)[i];
    }
    if (type == KV_F16) {
        return __half2float(__ushort_as_half(static_cast<const unsigned short*>(c)[i]));
    }
    if (type == KV_BF16) {
        return bf16_to_float(static_cast<const unsigned short*>(c)[i]);
    }
    const signed char* qs = static_cast<const signed char*>(c);
    const unsigned short* s = reinterpret_cast<const unsigned short*>(qs + (size_t) slots * kvDim);
    const int nb = (kvDim + KV_Q8_BLOCK - 1) / KV_Q8_BLOCK;
    return (float) qs[i] * __half2float(__ushort_as_half(s[row * nb + col / KV_Q8_BLOCK]));
}

// Q8_0's d = amax / 127 of x[0 .. n): amax NaN as soon as one |x| is (Java's Math.max, the reference).
__device__ __forceinline__ float kv_q8_scale(const float* x, int n)
{
    float amax = 0.0f;
    for (int i = 0; i < n; i++) {
        const float a = fabsf(x[i]);
        amax = a > amax || a != a ? a : amax;
    }
    return amax / 127.0f;
}

// Q8_0's q of x under the unrounded scale d.
__device__ __forceinline__ int kv_q8_quant(float x, float d)
{
    if (d == 0.0f) {
        return 0;
    }
    const float r = rintf(x / d);
    return r != r ? 0 : (int) fminf(fmaxf(r, -127.0f), 127.0f);
}

// x rounded in place to what a cache of `type` holds: number c of the row (F16, BF16), or Q8_0 block c, n = kvDim.
__device__ __forceinline__ void kv_round_at(float* x, int type, int kvDim, int c)
{
    if (type == KV_F16) {
        x[c] = __half2float(__float2half_rn(x[c]));
    } else if (type == KV_BF16) {
        x[c] = bf16_to_float(__bfloat16_as_ushort(__float2bfloat16(x[c])));
    } else if (type == KV_Q8_0) {
        float* b = x + c * KV_Q8_BLOCK;
        const int n = min(KV_Q8_BLOCK, kvDim - c * KV_Q8_BLOCK);
        const float d = kv_q8_scale(b, n);
        const float dh = __half2float(__float2half_rn(d));
        for (int i = 0; i < n; i++) {
            b[i] = (float) kv_q8_quant(b[i], d) * dh;
        }
    }
}

// Row x (kvDim floats) encoded into row `row` of cache buffer c of `slots` rows: number col (F32, F16, BF16), or
// Q8_0 block col.
__device__ __forceinline__ void kv_put(void* c, int type, int slots, int kvDim, size_t row, int col, const float* x)
{
    const size_t i = row * kvDim + col;
    if (type == KV_F32) {
        static_cast<float*>(c)[i] = x[col];
    } else if (type == KV_F16) {
        static_cast<unsigned short*>(c)[i] = __half_as_ushort(__float2half_rn(x[col]));
    } else if (type == KV_BF16) {
        static_cast<unsigned short*>(c)[i] = __bfloat16_as_ushort(__float2bfloat16(x[col]));
    } else {
        const int b0 = col * KV_Q8_BLOCK, n = min(KV_Q8_BLOCK, kvDim - b0);
        const float d = kv_q8_scale(x + b0, n);
        const unsigned short dh = __half_as_ushort(__float2half_rn(d));
        signed char* qs = static_cast<signed char*>(c);
        for (int u = 0; u < n; u++) {
            qs[row * kvDim + b0 + u] = (signed char) kv_q8_quant(x[b0 + u], d);
        }
        unsigned short* s = reinterpret_cast<unsigned short*>(qs + (size_t) slots * kvDim);
        s[row * ((kvDim + KV_Q8_BLOCK - 1) / KV_Q8_BLOCK) + col] = dh;
    }
}

// Number col of position j's key (or value) row: cache slot j % slots (in its type) before the batch's first position
// start, else the batch's own row j - start of x (floats, already rounded by kv_round).
__device__ __forceinline__ float kv_elem(const void* __restrict__ c, const float* __restrict__ x, int type, int j, int start,
                                         int slots, int kvDim, int col)
{
    return j < start ? kv_load(c, type, slots, kvDim, (size_t) (j % slots), col) : x[(size_t) (j - start) * kvDim + col];
}

// Key and value element col (= g * hd + d) of position j (kv_elem of both).
__device__ __forceinline__ void kv_at(const void* __restrict__ ck, const void* __restrict__ cv, const float* __restrict__ k,
                                      const float* __restrict__ v, int type, int j, int start, int slots, int kvDim, int col,
                                      float& kx, float& vx) {
    kx = kv_elem(ck, k, type, j, start, slots, kvDim, col);
    vx = kv_elem(cv, v, type, j, start, slots, kvDim, col);
}

extern "C" __global__ void attention(const float* __restrict__ q, const float* __restrict__ k,
                                    const float* __restrict__ v, const void* __restrict__ ck,
                                    const void* __restrict__ cv, const float* __restrict__ sinks,
                                    float* __restrict__ out, const int* __restrict__ pos, const AttentionParams p)
{
    const int T = p.tokens, row0 = p.row0, heads = p.heads, group = p.group, hd = p.headDim, kvDim = p.kvDim,
              slots = p.slots, window = p.window, type = p.kvType;
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
                float dot = 0.0f;
                if (j < start && type != KV_F32) {
                    const size_t row = (size_t) (j % slots);
                    for (int d = 0; d < hd; d++) {
                        dot = fmaf(lq[d], kv_load(ck, type, slots, kvDim, row, g * hd + d), dot);
                    }
                } else {
                    const float* kr = j < start ? static_cast<const float*>(ck) + (size_t) (j % slots) * kvDim + (size_t) g * hd
                                                : k + (size_t) (j - start) * kvDim + (size_t) g * hd;
                    for (int d = 0; d < hd; d++) {
                        dot = fmaf(lq[d], kr[d], dot);
                    }
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
                    a = fmaf(ls[u], kv_elem(cv, v, type, j0 + u, start, slots, kvDim, g * hd + d), a);
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

// ---- kv_store: grid (ceil(C / B), min(T - first, 65535)), block B; C = kvDim numbers, or on Q8_0 ceil(kvDim / 32)
// blocks a row ----------------------------------------------------------------------------------------------------
// Rows first .. T - 1 of k and v (rounded by kv_round unless F32) encoded into the slots of their positions.
extern "C" __global__ void kv_store(const float* __restrict__ k, const float* __restrict__ v, void* ck, void* cv,
                                        const int* __restrict__ pos, const AttentionParams p)
{
    const int T = p.tokens, slots = p.slots, kvDim = p.kvDim, first = p.first, type = p.kvType;
    const int start = pos[0];
    k += (size_t) p.row0 * kvDim;
    v += (size_t) p.row0 * kvDim;
    const int c = blockIdx.x * blockDim.x + threadIdx.x; // number c of a row; on Q8_0 its block c
    if (c >= (type == KV_Q8_0 ? (kvDim + KV_Q8_BLOCK - 1) / KV_Q8_BLOCK : kvDim)) {
        return;
    }
    for (int i = first + blockIdx.y; i < T; i += gridDim.y) {
        const size_t slot = (size_t) ((start + i) % slots);
        if (type == KV_F32) {
            static_cast<float*>(ck)[slot * kvDim + c] = k[(size_t) i * kvDim + c];
            static_cast<float*>(cv)[slot * kvDim + c] = v[(size_t) i * kvDim + c];
        } else {
            kv_put(ck, type, slots, kvDim, slot, c, k + (size_t) i * kvDim);
            kv_put(cv, type, slots, kvDim, slot, c, v + (size_t) i * kvDim);
        }
    }
}

// ---- kv_round: grid (ceil(C / B), min(T, 65535)), block B; C as kv_store's -----------------------------------------
// Rows 0 .. T - 1 (from row0) of k and v rounded in place to what the cache holds (KvType.round: f16(x), bf16(x), or
// each Q8_0 block's q * dh), before the attention kernel reads them; launched only when the cache is not F32.
extern "C" __global__ void kv_round(float* __restrict__ k, float* __restrict__ v, const AttentionParams p)
{
    const int T = p.tokens, kvDim = p.kvDim, type = p.kvType;
    k += (size_t) p.row0 * kvDim;
    v += (size_t) p.row0 * kvDim;
    const int c = blockIdx.x * blockDim.x + threadIdx.x; // number c of a row; on Q8_0 its block c
    if (type == KV_F32 || c >= (type == KV_Q8_0 ? (kvDim + KV_Q8_BLOCK - 1) / KV_Q8_BLOCK : kvDim)) {
        return;
    }
    for (int i = blockIdx.y; i < T; i += gridDim.y) {
        kv_round_at(k + (size_t) i * kvDim, type, kvDim, c);
        kv_round_at(v + (size_t) i * kvDim, type, kvDim, c);
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
                                          const float* __restrict__ v, const void* __restrict__ ck,
                                          const void* __restrict__ cv, const float* __restrict__ sinks,
                                          float* __restrict__ out, const int* __restrict__ pos,
                                          float* __restrict__ part, const AttentionParams p)
{
    const int T = p.tokens, heads = p.heads, group = p.group, hd = p.headDim, kvDim = p.kvDim, slots = p.slots,
              window = p.window, tq = p.tileQueries, type = p.kvType;
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
                kv_at(ck, cv, k, v, type, j, start, slots, kvDim, g * hd + d, kx, vx);
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
                                         const float* __restrict__ v, const void* __restrict__ ck,
                                         const void* __restrict__ cv, const float* __restrict__ sinks,
                                         float* __restrict__ out, const int* __restrict__ pos, const AttentionParams p)
{
#ifdef GOSS_MMA
    namespace wmma = nvcuda::wmma;
    typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> Acc;
    const int T = p.tokens, heads = p.heads, group = p.group, hd = p.headDim, kvDim = p.kvDim, slots = p.slots,
              window = p.window, tq = p.tileQueries, type = p.kvType;
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
                kv_at(ck, cv, k, v, type, j, start, slots, kvDim, g * hd + d, kx, vx);
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
