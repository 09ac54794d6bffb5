// Attention with sinks for a batch of queries (prefill), tiled: one block per (KV head g, tile of TQ query
// rows) handles all `group` query heads that share g (GQA: the 8 heads of one KV head of gpt-oss in one
// block), so each tile of keys and values is loaded into shared memory once for all of them. Decode (T = 1)
// keeps sdpa_f32 of ops.cu.
//
// Reference formula (Backend.attention is the contract; io.gossgpu.cpu.ReferenceBackend the oracle): row i
// (position p = start + i, start = pos[0] from the step buffer), query head h, KV head g = h / group;
// keys j in [lo, p], lo = max(0, p - W + 1) when window W > 0 else 0; k/v of j from cache slot j % slots
// when j < start, else row j - start of k/v; s_j = (q_h . k_j) * scale; sink S[h] not scaled;
// m = max(max_j s_j, S[h]); Z = sum_j e^(s_j - m) + e^(S[h] - m); out[i, h*hd + d] = sum_j e^(s_j - m)/Z * v_j[d].
// Online softmax started from the sink (m = S[h], l = 0), F32 throughout, no fast math. The cache store is
// kv_store_f32 (ops.cu), launched after this kernel.

#include <math.h>

#define SDPA_WARPS 8      // block size 256
#define SDPA_PAIRS_W 2    // (query row, head) pairs per warp
#define SDPA_PAIRS 16     // per block: TQ * group <= 16
#define SDPA_TK 32        // keys per tile: one per lane
#define SDPA_HD_MAX 128   // hd <= 128: hd/32 <= 4 accumulators per lane and pair

__device__ __forceinline__ float sdpa_warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

__device__ __forceinline__ float sdpa_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

// ---- sdpa_tiled_f32: grid (kvHeads, ceil(T / tq)), block 256, tq = max(1, 16 / group), group <= 16 -------------
// hd <= 128; dynamic shared memory 4 * (16*hd + 32*(hd+1) + 32*hd) bytes. Pair n = w + 8u (warp w, u < 2) of
// the block is query row i0 + n / group and head g*group + n % group, for n < tq*group.
extern "C" __global__ void sdpa_tiled_f32(const float* __restrict__ q, const float* __restrict__ k,
                                          const float* __restrict__ v, const float* __restrict__ ck,
                                          const float* __restrict__ cv, const float* __restrict__ sinks,
                                          float* __restrict__ out, int T, const int* __restrict__ pos, int heads,
                                          int group, int hd, int kvDim, int slots, int window, float scale, int tq)
{
    extern __shared__ float smem[];
    float* qs = smem;                            // SDPA_PAIRS x hd
    float* ks = qs + SDPA_PAIRS * hd;            // SDPA_TK x (hd + 1): lane j reads row j without bank conflicts
    float* vs = ks + SDPA_TK * (hd + 1);         // SDPA_TK x hd
    const int start = pos[0];
    const int g = blockIdx.x;
    const int i0 = blockIdx.y * tq;
    const int rows = min(tq, T - i0);
    const int npairs = rows * group;
    const int qDim = heads * hd;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;

    for (int idx = tid; idx < SDPA_PAIRS * hd; idx += blockDim.x) {
        const int n = idx / hd;
        const int d = idx % hd;
        float x = 0.0f;
        if (n < npairs) {
            x = q[(size_t) (i0 + n / group) * qDim + (size_t) (g * group + n % group) * hd + d];
        }
        qs[idx] = x;
    }

    // this warp's pairs: position, first key, sink; online softmax state
    int pp[SDPA_PAIRS_W], plo[SDPA_PAIRS_W];
    float m[SDPA_PAIRS_W], l[SDPA_PAIRS_W], sink[SDPA_PAIRS_W], acc[SDPA_PAIRS_W][SDPA_HD_MAX / 32];
    for (int u = 0; u < SDPA_PAIRS_W; u++) {
        const int n = warp + SDPA_WARPS * u;
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
        for (int r = 0; r < SDPA_HD_MAX / 32; r++) {
            acc[u][r] = 0.0f;
        }
    }

    const int pLast = start + i0 + rows - 1;
    const int jFirst = window > 0 ? max(0, start + i0 - window + 1) : 0;
    for (int j0 = jFirst; j0 <= pLast; j0 += SDPA_TK) {
        __syncthreads(); // q loaded / the previous tile's readers are done
        for (int idx = tid; idx < SDPA_TK * hd; idx += blockDim.x) {
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
        for (int u = 0; u < SDPA_PAIRS_W; u++) {
            const int n = warp + SDPA_WARPS * u;
            // warp-uniform: pairs past the end, and tiles wholly outside this pair's keys, are skipped
            if (n >= npairs || j0 > pp[u] || j0 + SDPA_TK - 1 < plo[u]) {
                continue;
            }
            const int j = j0 + lane;
            const bool ok = j >= plo[u] && j <= pp[u];
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
            const float mNew = fmaxf(m[u], sdpa_warp_max(s));
            const float e = ok ? expf(s - mNew) : 0.0f;
            const float corr = expf(m[u] - mNew);
            l[u] = l[u] * corr + sdpa_warp_sum(e);
            m[u] = mNew;
            for (int r = 0; r < SDPA_HD_MAX / 32; r++) {
                acc[u][r] *= corr;
            }
            for (int jj = 0; jj < SDPA_TK; jj++) {
                const float ej = __shfl_sync(0xffffffffu, e, jj);
                for (int r = 0; r < SDPA_HD_MAX / 32; r++) {
                    const int d = lane + 32 * r;
                    if (d < hd) {
                        acc[u][r] = fmaf(ej, vs[jj * hd + d], acc[u][r]);
                    }
                }
            }
        }
    }

    for (int u = 0; u < SDPA_PAIRS_W; u++) {
        const int n = warp + SDPA_WARPS * u;
        if (n < npairs) {
            const float z = l[u] + expf(sink[u] - m[u]);
            float* o = out + (size_t) (i0 + n / group) * qDim + (size_t) (g * group + n % group) * hd;
            for (int r = 0; r < SDPA_HD_MAX / 32; r++) {
                const int d = lane + 32 * r;
                if (d < hd) {
                    o[d] = acc[u][r] / z;
                }
            }
        }
    }
}
