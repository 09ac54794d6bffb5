// The model ops of the cuda backend (io.gossgpu.cuda.CudaBackend), besides dense.cu (embedding and
// linear layers), rmsnorm.cu and add.cu. Every tensor is row-major float32; weights are repacked at
// upload: vectors (biases, norms, sinks) as F32, MXFP4 experts in the checkpoint's own layout (see moe_*).
// Accumulation is float32 (warp-shuffle / block trees), accuracy first; no --use_fast_math.
//
// Reference formulas (the Backend SPI Javadoc is the contract; io.gossgpu.cpu.ReferenceBackend the oracle):
//   rope:       per row t (position p = start + t), head h, j < hd/2, half-split pairs:
//               x1 = x[h*hd + j], x2 = x[h*hd + hd/2 + j], cos = tab[p*hd + 2j], sin = tab[p*hd + 2j + 1]
//               (Rope.cosSinTable: angles in double on the host, YaRN concentration applied)
//               x[h*hd + j] = x1*cos - x2*sin,  x[h*hd + hd/2 + j] = x2*cos + x1*sin
//   sdpa:       row i (p = start + i), query head h, KV head g = h / group (grouped, never h % kv);
//               keys j in [lo, p], lo = max(0, p - W + 1) when window W > 0 else 0;
//               k/v of j from cache slot j % slots when j < start, else row j - start of k/v;
//               s_j = (q_h . k_j) * scale, sink S[h] unscaled; m = max(max s_j, S[h]);
//               Z = sum e^(s_j - m) + e^(S[h] - m);  out[i, h*hd + d] = sum_j e^(s_j - m) / Z * v_j[d]
//   kv_store:   for i in [first, T): slot = (start + i) % slots; ck[slot] = k[i]; cv[slot] = v[i]
//   topk:       the K largest logits of a row, descending, ties -> lower expert; w = softmax over those K
//   moe:        a = gate_e . x + gb_e, b = up_e . x + ub_e; a = min(a, L); b = clamp(b, -L, L);
//               h = a * sigmoid(1.702 a) * (b + 1); y = down_e . h + db_e; out[t] = sum_j w_j * y_j
//               MXFP4 value = FP4[code] * 2^(scale - 127),
//               FP4 = {0, .5, 1, 1.5, 2, 3, 4, 6, -0, -.5, -1, -1.5, -2, -3, -4, -6}
//   argmax:     out[t] = argmax_r logits[t, r], ties -> lower id
//
// The position `start` of row 0 is read from device memory (pos[0], the backend's step buffer), not
// passed by value, so that a decode step captured as a CUDA graph replays unchanged for the next token.
//
// Launch shapes are stated per kernel. Every block size B is a multiple of 32, 32 <= B <= 1024.
// Grid y is at most 65535, so kernels that put tokens on y loop over them with a stride of gridDim.y.

#include <math.h>

#include "goss_cuda.h"
#include "mxfp4.cuh"

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

// Sum over the block (blockDim.x a multiple of 32); every thread gets the total. sh holds 32 floats.
__device__ float block_sum(float v, float* sh)
{
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) {
        sh[warp] = v;
    }
    __syncthreads();
    float s = lane < warps ? sh[lane] : 0.0f;
    return warp_sum(s);
}

// ---- rope: grid (heads, min(T, 65535)), block 32..1024 (threads loop over j < hd/2) -------------------
extern "C" __global__ void rope_f32(float* x, int T, int cols, int hd, const float* __restrict__ table,
                                    const int* __restrict__ pos)
{
    const int start = pos[0];
    const int h = blockIdx.x;
    const int half = hd / 2;
    for (int t = blockIdx.y; t < T; t += gridDim.y) {
        float* b = x + (size_t) t * cols + (size_t) h * hd;
        const float* cs = table + (size_t) (start + t) * hd;
        for (int j = threadIdx.x; j < half; j += blockDim.x) {
            const float c = cs[2 * j];
            const float s = cs[2 * j + 1];
            const float x1 = b[j];
            const float x2 = b[half + j];
            b[j] = fmaf(x1, c, -x2 * s);
            b[half + j] = fmaf(x2, c, x1 * s);
        }
    }
}

// ---- sdpa: one block per (query head h, token i) ------------------------------------------------
// grid (heads, min(T, 65535)), block B; dynamic shared memory 4 * (2*hd + B) bytes.
// Keys are taken in chunks of B (one key per thread), online softmax started from the sink (m = S[h],
// l = 0), the hd accumulators in shared memory. The cache store is kv_store, launched after this kernel.
extern "C" __global__ void sdpa_f32(const float* __restrict__ q, const float* __restrict__ k,
                                    const float* __restrict__ v, const float* __restrict__ ck,
                                    const float* __restrict__ cv, const float* __restrict__ sinks,
                                    float* __restrict__ out, int T, const int* __restrict__ pos, int heads, int group,
                                    int hd, int kvDim, int slots, int window, float scale)
{
    const int start = pos[0];
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
extern "C" __global__ void kv_store_f32(const float* __restrict__ k, const float* __restrict__ v, float* ck, float* cv,
                                        int T, const int* __restrict__ pos, int slots, int kvDim, int first)
{
    const int start = pos[0];
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

// ---- topk_softmax: one thread per token; grid (ceil(T / 64)), block 64; K <= 32 ------------------
extern "C" __global__ void topk_softmax_f32(const float* __restrict__ logits, int T, int E, int K,
                                            int* __restrict__ ids, float* __restrict__ weights)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) {
        return;
    }
    const float* gl = logits + (size_t) t * E;
    int chosen[32];
    for (int j = 0; j < K; j++) {
        int best = -1;
        for (int x = 0; x < E; x++) {
            bool taken = false;
            for (int u = 0; u < j; u++) {
                taken = taken || chosen[u] == x;
            }
            if (taken) {
                continue;
            }
            if (best < 0 || gl[x] > gl[best]) { // strict: ties keep the lower index
                best = x;
            }
        }
        chosen[j] = best;
    }
    const float mx = gl[chosen[0]];
    float z = 0.0f;
    for (int j = 0; j < K; j++) {
        z += expf(gl[chosen[j]] - mx);
    }
    for (int j = 0; j < K; j++) {
        ids[(size_t) t * K + j] = chosen[j];
        weights[(size_t) t * K + j] = expf(gl[chosen[j]] - mx) / z;
    }
}

// ---- MXFP4 ------------------------------------------------------------------------------------
// OpenAI layout (ggml == 0): codes row-contiguous, cols/2 bytes per row, byte b holds element 2b in
// the low nibble and 2b+1 in the high nibble; scales in their own buffer, cols/32 bytes per row.
// ggml block_mxfp4 (ggml != 0): 17-byte blocks per 32 values: scale byte, then 16 bytes whose low
// nibbles are elements 0..15 and high nibbles 16..31. Byte loads only (a 2880-wide ggml row is 1530
// bytes: no alignment assumed). Rows of expert e start at row e * rowsPerExpert.
__constant__ float FP4_VALUES[16] = {
    0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// The FP4 table in shared memory, filled by the block's first 16 threads (call before a __syncthreads): lanes
// look up different codes, which a __constant__ table serves one address at a time, shared memory at once.
__device__ __forceinline__ void fp4_table(float* lut)
{
    if (threadIdx.x < 16) {
        lut[threadIdx.x] = FP4_VALUES[threadIdx.x];
    }
}

// dot(row `row` of a cols-wide MXFP4 matrix, xs) by one warp, xs in shared memory; every lane gets the sum.
// Half-warp h takes blocks h, h + 2, ...; its lane q takes byte q of each block and the two elements in it
// (OpenAI: 2q and 2q+1; ggml: q and q+16), so the warp reads 32 consecutive code bytes at a time.
__device__ float mx_dot_warp(const unsigned char* __restrict__ codes, const unsigned char* __restrict__ scales,
                             int ggml, size_t row, int cols, const float* xs, const float* lut)
{
    const int lane = threadIdx.x & 31;
    const int q = lane & 15;
    const int nb = cols / 32;
    float acc = 0.0f;
    for (int b = lane >> 4; b < nb; b += 2) {
        unsigned int byte;
        int e;
        float x0, x1;
        if (ggml) {
            const unsigned char* blk = codes + (row * (size_t) nb + b) * 17;
            byte = blk[1 + q];
            e = blk[0];
            x0 = xs[b * 32 + q];
            x1 = xs[b * 32 + 16 + q];
        } else {
            byte = codes[row * (size_t) (cols / 2) + (size_t) b * 16 + q];
            e = scales[row * (size_t) nb + b];
            x0 = xs[b * 32 + 2 * q];
            x1 = xs[b * 32 + 2 * q + 1];
        }
        acc += mx_scaled(fmaf(lut[byte & 15u], x0, lut[byte >> 4] * x1), (unsigned int) e);
    }
    return warp_sum(acc);
}

// mlp1 + SwiGLU for decode: one block per (token-slot s = t*K + j, 32 units u0 ..), x_t in shared memory, one
// warp per unit (gate and up rows). Expert ids read from device memory.
// grid (min(T*K, 65535), ceil(I / 32)), block B; dynamic shared memory 4*H bytes. hout is (T*K) x I.
extern "C" __global__ void moe_gate_up(const unsigned char* __restrict__ gCodes, const unsigned char* __restrict__ gScales,
                                       const unsigned char* __restrict__ uCodes, const unsigned char* __restrict__ uScales,
                                       int ggml, const float* __restrict__ gBias, const float* __restrict__ uBias,
                                       const float* __restrict__ x, const int* __restrict__ ids, int T, int K, int H,
                                       int I, float limit, float* __restrict__ hout)
{
    DYNAMIC_SHARED(float, xs); // H
    __shared__ float lut[16];
    fp4_table(lut);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    const int u0 = blockIdx.y * 32;
    for (int s = blockIdx.x; s < T * K; s += gridDim.x) {
        const int t = s / K;
        const int e = ids[s];
        __syncthreads(); // the previous slot's readers are done
        for (int c = threadIdx.x; c < H; c += blockDim.x) {
            xs[c] = x[(size_t) t * H + c];
        }
        __syncthreads();
        for (int u = u0 + warp; u < min(u0 + 32, I); u += warps) {
            const size_t row = (size_t) e * I + u;
            float a = mx_dot_warp(gCodes, gScales, ggml, row, H, xs, lut);
            float b = mx_dot_warp(uCodes, uScales, ggml, row, H, xs, lut);
            if (lane == 0) {
                a += gBias[row];
                b += uBias[row];
                a = fminf(a, limit);
                b = fmaxf(-limit, fminf(b, limit));
                hout[(size_t) s * I + u] = a / (1.0f + expf(-1.702f * a)) * (b + 1.0f);
            }
        }
    }
}

// mlp2 + bias + weighted sum over the K slots for decode: one block per (token t, 32 outputs d0 ..), each
// slot's activations in shared memory in turn, one warp per output; out[t, d] = sum_j w_j (down_e . h_j + db_e),
// j ascending. grid (min(T, 65535), ceil(H / 32)), block B; dynamic shared memory 4*I bytes. out is T x H.
extern "C" __global__ void moe_down(const unsigned char* __restrict__ dCodes, const unsigned char* __restrict__ dScales,
                                    int ggml, const float* __restrict__ dBias, const float* __restrict__ hin,
                                    const int* __restrict__ ids, const float* __restrict__ weights, int T, int K,
                                    int H, int I, float* __restrict__ out)
{
    DYNAMIC_SHARED(float, hs); // I
    __shared__ float lut[16];
    __shared__ float acc[32];
    fp4_table(lut);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    const int d0 = blockIdx.y * 32;
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        for (int j = 0; j < K; j++) {
            const size_t s = (size_t) t * K + j;
            const int e = ids[s];
            const float w = weights[s];
            __syncthreads(); // the previous slot's readers are done
            for (int c = threadIdx.x; c < I; c += blockDim.x) {
                hs[c] = hin[s * I + c];
            }
            __syncthreads();
            for (int d = d0 + warp; d < min(d0 + 32, H); d += warps) {
                const size_t row = (size_t) e * H + d;
                const float y = mx_dot_warp(dCodes, dScales, ggml, row, I, hs, lut) + dBias[row];
                if (lane == 0) {
                    acc[d - d0] = j == 0 ? w * y : fmaf(w, y, acc[d - d0]); // only this warp touches acc[d - d0]
                }
            }
        }
        for (int d = d0 + warp; d < min(d0 + 32, H); d += warps) {
            if (lane == 0) {
                out[(size_t) t * H + d] = acc[d - d0];
            }
        }
    }
}

// ---- argmax: one block per row; grid (min(rows, 65535)), block B ---------------------------------
// Each thread scans r = tid, tid + B, ... ascending with strict >; the reduction keeps the larger
// value, or on equal values the lower id.
__device__ __forceinline__ void argmax_pick(float& bv, int& bi, float ov, int oi)
{
    if (oi >= 0 && (bi < 0 || ov > bv || (ov == bv && oi < bi))) {
        bv = ov;
        bi = oi;
    }
}

extern "C" __global__ void argmax_f32(const float* __restrict__ logits, int rows, int V, int* __restrict__ out)
{
    __shared__ float sv[32];
    __shared__ int si[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    for (int t = blockIdx.x; t < rows; t += gridDim.x) {
        const float* l = logits + (size_t) t * V;
        float bv = -INFINITY;
        int bi = -1;
        for (int r = threadIdx.x; r < V; r += blockDim.x) {
            const float x = l[r];
            if (bi < 0 || x > bv) {
                bv = x;
                bi = r;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
            const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
            argmax_pick(bv, bi, ov, oi);
        }
        __syncthreads();
        if (lane == 0) {
            sv[warp] = bv;
            si[warp] = bi;
        }
        __syncthreads();
        if (warp == 0) {
            float v2 = lane < warps ? sv[lane] : -INFINITY;
            int i2 = lane < warps ? si[lane] : -1;
            for (int o = 16; o > 0; o >>= 1) {
                const float ov = __shfl_xor_sync(0xffffffffu, v2, o);
                const int oi = __shfl_xor_sync(0xffffffffu, i2, o);
                argmax_pick(v2, i2, ov, oi);
            }
            if (lane == 0) {
                out[t] = i2 < 0 ? 0 : i2;
            }
        }
    }
}
