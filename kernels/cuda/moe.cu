// The MXFP4 mixture of experts of the cuda backend (io.gossgpu.device.MoePipeline; MoeLauncher the router). Decode (moe_gate_up, moe_down): one warp per
// weight row over an activation row in shared memory, per (token, slot). A batch of tokens (prefill), batched by
// expert: the T*K (token, slot) pairs are grouped by expert on the device (moe_sort), then each expert's MXFP4
// rows are decoded once per tile of its slots and used for all of them (moe_gate_up_tiled, moe_down_tiled).
//
// Reference formulas (Backend.moe is the contract; io.gossgpu.cpu.ReferenceBackend the oracle). Slot
// s = t*K + j is token t's j-th chosen expert e = ids[s] with weight w[s]:
//   a = gate_e . x_t + gb_e,  b = up_e . x_t + ub_e,  a = min(a, L),  b = clamp(b, -L, L)
//   h_s = a * sigmoid(1.702 a) * (b + 1)                       (moe_gate_up_tiled, I values per slot)
//   y_s = down_e . h_s + db_e                                  (moe_down_tiled, H values per slot)
//   out[t] = sum_{j = 0..K-1} w[t*K + j] * y_{t*K + j}         (moe_combine, j ascending: no float atomics;
//                                                               moe_down sums them itself)
// MXFP4 value = FP4[code] * 2^(scale - 127), FP4 = {0, .5, 1, 1.5, 2, 3, 4, 6, -0, -.5, ..., -6}. Layouts (common.cuh):
// OpenAI (codes cols/2 bytes per row, byte b = elements 2b (low nibble) and 2b+1 (high); scales
// cols/32 bytes per row, own buffer) or ggml block_mxfp4 (17-byte blocks: scale, then 16 bytes whose low
// nibbles are elements 0..15 and high nibbles 16..31). Byte loads only: a 2880-wide ggml row is 1530 bytes.
// Float32 accumulation, no fast math.

#include "common.cuh"

// Tensor cores (moe_gate_up_mma, moe_down_mma): BF16 wmma with FP32 accumulation, compute capability 8.0 and up
// (GOSS_MMA, common.cuh). For sm_75 those two entry points are compiled as stubs that trap (MoeLauncher never picks
// them there).

#define MOE_TM 32       // slots per tile
#define MOE_KC 64       // columns per step (two MXFP4 blocks)
#define MOE_THREADS 256 // block size of the tiled kernels: 8 warps

// SwiGLU's clamps keep a NaN, as the reference's (torch.clamp) do: fmin/fmax would return the limit for it and the
// reply would go on from finite garbage, past the non-finite guard (BackendConformanceKit.nanBeforeSwigluStaysNaN).
__device__ __forceinline__ float min_keep_nan(float x, float hi) { return x > hi ? hi : x; }
__device__ __forceinline__ float clamp_keep_nan(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

// The 8 products of one quarter block (4 code bytes) with their activations, before the block's scale.
__device__ __forceinline__ float mx_quarter_openai(unsigned int w, const float* xq, const float* lut)
{
    const float4 xa = *(const float4*) xq;
    const float4 xb = *(const float4*) (xq + 4);
    float v = lut[w & 15u] * xa.x;
    v = fmaf(lut[(w >> 4) & 15u], xa.y, v);
    v = fmaf(lut[(w >> 8) & 15u], xa.z, v);
    v = fmaf(lut[(w >> 12) & 15u], xa.w, v);
    v = fmaf(lut[(w >> 16) & 15u], xb.x, v);
    v = fmaf(lut[(w >> 20) & 15u], xb.y, v);
    v = fmaf(lut[(w >> 24) & 15u], xb.z, v);
    return fmaf(lut[w >> 28], xb.w, v);
}

__device__ __forceinline__ float mx_quarter_ggml(const unsigned char* c, const float* xlo, const float* xhi, const float* lut)
{
    const float4 xa = *(const float4*) xlo;
    const float4 xb = *(const float4*) xhi;
    const unsigned int b0 = c[0], b1 = c[1], b2 = c[2], b3 = c[3];
    float v = lut[b0 & 15u] * xa.x;
    v = fmaf(lut[b1 & 15u], xa.y, v);
    v = fmaf(lut[b2 & 15u], xa.z, v);
    v = fmaf(lut[b3 & 15u], xa.w, v);
    v = fmaf(lut[b0 >> 4], xb.x, v);
    v = fmaf(lut[b1 >> 4], xb.y, v);
    v = fmaf(lut[b2 >> 4], xb.z, v);
    return fmaf(lut[b3 >> 4], xb.w, v);
}

// One row's share of a warp's dot products: row `row` of a cols-wide MXFP4 matrix (codes, scales) against xs.
struct MxRow {
    const unsigned char* codes;
    const unsigned char* scales;
    size_t row;
    const float* xs; // in shared memory, 16-byte aligned
};

// out[i] = dot(r[i]) for i < n (n <= N) by one warp, every lane gets the sums. The N rows go through the columns
// together, so their loads are in flight at once (gate and up share x; moe_down's K slots each have their own).
// The warp takes 8 blocks per step: lane 4i + q reads the quarter q of block b + i, 4 code bytes (8 elements) in
// one load for the OpenAI layout (a row is cols/2 bytes, a multiple of 16, so the load is aligned), so a row's
// warp load is 128 consecutive code bytes. OpenAI byte k of the quarter holds elements 8q + 2k (low nibble) and
// 8q + 2k + 1 (high); ggml byte 4q + k holds elements 4q + k (low) and 16 + 4q + k (high), read byte by byte
// (its 17-byte blocks are not aligned).
template <int N>
__device__ __forceinline__ void mx_dots_warp(const MxRow* r, int n, int ggml, int cols, const float* lut, float* out)
{
    const int lane = threadIdx.x & 31;
    const int q = lane & 3;
    const int nb = cols / 32;
    float acc[N];
    GOSS_PRAGMA(unroll)
    for (int i = 0; i < N; i++) {
        acc[i] = 0.0f;
    }
    GOSS_PRAGMA(unroll 2)
    for (int b = lane >> 2; b < nb; b += 8) {
        GOSS_PRAGMA(unroll)
        for (int i = 0; i < N; i++) {
            if (i < n) {
                if (ggml) {
                    const unsigned char* blk = r[i].codes + (r[i].row * (size_t) nb + b) * 17;
                    const float* x = r[i].xs + b * 32 + 4 * q;
                    acc[i] += mx_scaled(mx_quarter_ggml(blk + 1 + 4 * q, x, x + 16, lut), blk[0]);
                } else {
                    const unsigned int w = ((const unsigned int*) (r[i].codes + r[i].row * (size_t) (cols / 2)))[b * 4 + q];
                    const float v = mx_quarter_openai(w, r[i].xs + b * 32 + 8 * q, lut);
                    acc[i] += mx_scaled(v, r[i].scales[r[i].row * (size_t) nb + b]);
                }
            }
        }
    }
    GOSS_PRAGMA(unroll)
    for (int i = 0; i < N; i++) {
        out[i] = warp_sum(acc[i]);
    }
}

// mlp1 + SwiGLU for decode: one block per (token-slot s = t*K + j, W units u0 ..) with W the block's warps, x_t in
// shared memory, one warp per unit (its gate and up rows). Expert ids read from device memory.
// grid (min(T*K, 65535), ceil(I / W)), block B = 32 W; dynamic shared memory 4*H bytes. hout is (T*K) x I.
// The scalars of every MoE kernel, the same struct in moe.cl and moe.metal (io.gossgpu.device.MoeParams; the
// down kernels do not read limit; slotsPerPass only moe_down).
struct MoeParams {
    int ggml;         // 1: the scales in ggml's layout
    int tokens;       // T
    int k;            // K: experts per token
    int hidden;       // H
    int inter;        // I: intermediate size
    int experts;      // E
    float limit;      // SwiGLU limit
    int slotsPerPass; // moe_down: slots whose activations shared memory holds at once (1..K)
};

extern "C" __global__ void moe_gate_up(const unsigned char* __restrict__ gCodes, const unsigned char* __restrict__ gScales,
                                       const unsigned char* __restrict__ uCodes, const unsigned char* __restrict__ uScales,
                                       const float* __restrict__ gBias, const float* __restrict__ uBias,
                                       const float* __restrict__ x, const int* __restrict__ ids,
                                       float* __restrict__ hout, const MoeParams p)
{
    const int ggml = p.ggml, T = p.tokens, K = p.k, H = p.hidden, I = p.inter;
    const float limit = p.limit;
    DYNAMIC_SHARED(float, xs); // H
    __shared__ float lut[16];
    fp4_table(lut);
    const int lane = threadIdx.x & 31;
    const int u = blockIdx.y * (blockDim.x >> 5) + (threadIdx.x >> 5);
    for (int s = blockIdx.x; s < T * K; s += gridDim.x) {
        const int t = s / K;
        const int e = ids[s];
        __syncthreads(); // the previous slot's readers are done
        for (int c = threadIdx.x; c < H; c += blockDim.x) {
            xs[c] = x[(size_t) t * H + c];
        }
        __syncthreads();
        if (u < I) {
            const size_t row = (size_t) e * I + u;
            const MxRow rows[2] = {{gCodes, gScales, row, xs}, {uCodes, uScales, row, xs}};
            float dots[2];
            mx_dots_warp<2>(rows, 2, ggml, H, lut, dots);
            if (lane == 0) {
                float a = dots[0] + gBias[row];
                float b = dots[1] + uBias[row];
                a = min_keep_nan(a, limit);
                b = clamp_keep_nan(b, -limit, limit);
                hout[(size_t) s * I + u] = a / (1.0f + expf(-1.702f * a)) * (b + 1.0f);
            }
        }
    }
}

// mlp2 + bias + weighted sum over the K slots for decode: one block per (token t, W outputs d0 ..) with W the
// block's warps, one warp per output; the activations of slotsPerPass slots at a time in shared memory (all K of
// gpt-oss's: 4 x 2880 floats), so a warp's K row dots run back to back between two barriers.
// out[t, d] = sum_j w_j (down_e . h_j + db_e), j ascending.
// grid (min(T, 65535), ceil(H / W)), block B = 32 W; dynamic shared memory 4*I*slotsPerPass bytes. out is T x H.
extern "C" __global__ void moe_down(const unsigned char* __restrict__ dCodes, const unsigned char* __restrict__ dScales,
                                    const float* __restrict__ dBias, const float* __restrict__ hin,
                                    const int* __restrict__ ids, const float* __restrict__ weights,
                                    float* __restrict__ out, const MoeParams p)
{
    const int ggml = p.ggml, T = p.tokens, K = p.k, H = p.hidden, I = p.inter, P = p.slotsPerPass;
    DYNAMIC_SHARED(float, hs); // P x I
    __shared__ float lut[16];
    fp4_table(lut);
    const int lane = threadIdx.x & 31;
    const int d = blockIdx.y * (blockDim.x >> 5) + (threadIdx.x >> 5);
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        float acc = 0.0f;
        for (int j0 = 0; j0 < K; j0 += P) {
            const int n = min(P, K - j0);
            __syncthreads(); // the previous pass's readers are done
            for (int c = threadIdx.x; c < n * I; c += blockDim.x) {
                hs[c] = hin[((size_t) t * K + j0) * I + c];
            }
            __syncthreads();
            if (d < H) {
                for (int j = j0; j < j0 + n; j += 4) { // up to 4 slots' rows at once
                    const int m = min(4, j0 + n - j);
                    MxRow rows[4];
                    GOSS_PRAGMA(unroll)
                    for (int i = 0; i < 4; i++) {
                        const int ji = j + min(i, m - 1); // rows past m repeat the last one (not summed)
                        rows[i] = {dCodes, dScales, (size_t) ids[(size_t) t * K + ji] * H + d, hs + (ji - j0) * I};
                    }
                    float y[4];
                    mx_dots_warp<4>(rows, m, ggml, I, lut, y);
                    GOSS_PRAGMA(unroll)
                    for (int i = 0; i < 4; i++) { // constant indices keep y and rows in registers
                        if (i < m) {
                            const size_t s = (size_t) t * K + j + i;
                            const float v = y[i] + dBias[rows[i].row];
                            acc = j + i == 0 ? weights[s] * v : fmaf(weights[s], v, acc);
                        }
                    }
                }
            }
        }
        if (d < H && lane == 0) {
            out[(size_t) t * H + d] = acc;
        }
    }
}

// ---- moe_sort: a stable counting sort of the slots by expert; grid (1), block B ------------------
// The groups buffer (S = T*K slots, E experts; MoePipeline.groupsBytes is room enough):
//   ntiles[1], offsets[E + 1], order[S], tiles[2 * (ceil(S / MOE_TM) + E)]
// offsets[e] .. offsets[e+1] are expert e's places in `order`, which lists slot indices s (ascending within
// an expert); tiles[2n], tiles[2n+1] = (expert, first place) of work tile n (MOE_TM places at most), ntiles[0] = n.
// Expert e is counted and scattered by thread e % B, which walks all S slots in order: O(S) per
// thread, deterministic. Ids outside 0..E-1 are not placed (their slots get no output).
struct MoeGroups {
    int* ntiles;
    int* offsets;
    int* order;
    int* tiles;
};

__device__ __forceinline__ MoeGroups moe_groups(int* groups, const MoeParams& p)
{
    MoeGroups g;
    g.ntiles = groups;
    g.offsets = groups + 1;
    g.order = g.offsets + p.experts + 1;
    g.tiles = g.order + p.tokens * p.k;
    return g;
}

extern "C" __global__ void moe_sort(const int* __restrict__ ids, int* __restrict__ groups, const MoeParams p)
{
    const int S = p.tokens * p.k, E = p.experts;
    const MoeGroups g = moe_groups(groups, p);
    int* __restrict__ offsets = g.offsets;
    int* __restrict__ order = g.order;
    int* __restrict__ tiles = g.tiles;
    int* __restrict__ ntiles = g.ntiles;
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        int c = 0;
        for (int s = 0; s < S; s++) {
            c += ids[s] == e;
        }
        offsets[e + 1] = c;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int sum = 0, n = 0;
        offsets[0] = 0;
        for (int e = 0; e < E; e++) {
            const int c = offsets[e + 1];
            for (int b = 0; b < c; b += MOE_TM) {
                tiles[2 * n] = e;
                tiles[2 * n + 1] = sum + b;
                n++;
            }
            sum += c;
            offsets[e + 1] = sum;
        }
        ntiles[0] = n;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        int p = offsets[e];
        for (int s = 0; s < S; s++) {
            if (ids[s] == e) {
                order[p++] = s;
            }
        }
    }
}

// A value into a shared-memory tile: float as is; BF16 (the tensor-core tiles) by round to nearest even, which
// keeps a dequantized MXFP4 weight exact (at most 2 significant bits, and BF16 has FP32's exponent range).
__device__ __forceinline__ void tile_put(float& d, float v)
{
    d = v;
}

__device__ __forceinline__ void tile_put(__nv_bfloat16& d, float v)
{
    d = __float2bfloat16(v);
}

// Decodes half (16 values) of MXFP4 block `blk` of row `row` into dst[0..31] (the half's positions only), as
// float or BF16 (tile_put).
// lut: the FP4 table in shared memory (threads look up different codes: a __constant__ table would serve them
// one address at a time).
template <class T>
__device__ void mx_decode_half(const unsigned char* __restrict__ codes, const unsigned char* __restrict__ scales,
                               int ggml, size_t row, int cols, int blk, int half, T* dst, const float* lut)
{
    const int nb = cols / 32;
    if (ggml) {
        const unsigned char* b = codes + row * (size_t) nb * 17 + (size_t) blk * 17;
        const unsigned int e = b[0];
        for (int q = 0; q < 16; q++) {
            const unsigned int byte = b[1 + q];
            tile_put(dst[16 * half + q], mx_scaled(lut[half ? byte >> 4 : byte & 15u], e));
        }
    } else {
        const unsigned char* b = codes + row * (size_t) (cols / 2) + (size_t) blk * 16;
        const unsigned int e = scales[row * (size_t) nb + blk];
        for (int q = 8 * half; q < 8 * half + 8; q++) {
            const unsigned int byte = b[q];
            tile_put(dst[2 * q], mx_scaled(lut[byte & 15u], e));
            tile_put(dst[2 * q + 1], mx_scaled(lut[byte >> 4], e));
        }
    }
}

// Four groups of 32 weight rows per block: group r is rows row[r] .. row[r] + nrow[r] - 1 of (codes[r], scales[r])
// (missing rows read 0). acc[r][i] += W_{r, tx} . in_m for row tx of each group and the tile's slots m = ty + 8i
// (i < 4), in_m = in + (slots[m] / div) * cols (missing slots read 0). Per step of KC columns the 128 x KC
// weights are decoded once into shared memory and the TM x KC inputs loaded once; then each thread does its
// 4 x 4 dot products from shared memory (8 shared loads per 16 FMAs).
struct MxRows {
    const unsigned char* codes[4];
    const unsigned char* scales[4];
    size_t row[4];
    int nrow[4];
};

// One step's 128 x KC weights of w (columns k0 .. k0 + kc - 1) decoded into ws (row r at ws + r * pitch, as float or
// BF16), missing rows and columns past kc as 0: 128 rows x 2 blocks x 2 halves = 512 tasks, two per thread.
template <class T>
__device__ __forceinline__ void mx_tile_weights(const MxRows& w, int ggml, int cols, int k0, int kc, T* ws, int pitch, const float* lut)
{
    for (int task = threadIdx.x; task < 512; task += MOE_THREADS) {
        const int r = task >> 2;
        const int b = (task >> 1) & 1;
        const int half = task & 1;
        const int g = r >> 5;
        const int rr = r & 31;
        T* dst = ws + r * pitch + 32 * b;
        // constant indices only (selects), so that w stays in registers rather than local memory
        const int nrow = g == 0 ? w.nrow[0] : g == 1 ? w.nrow[1] : g == 2 ? w.nrow[2] : w.nrow[3];
        if (32 * b < kc && rr < nrow) {
            const unsigned char* c = g == 0 ? w.codes[0] : g == 1 ? w.codes[1] : g == 2 ? w.codes[2] : w.codes[3];
            const unsigned char* sc = g == 0 ? w.scales[0] : g == 1 ? w.scales[1] : g == 2 ? w.scales[2] : w.scales[3];
            const size_t row = g == 0 ? w.row[0] : g == 1 ? w.row[1] : g == 2 ? w.row[2] : w.row[3];
            mx_decode_half(c, sc, ggml, row + rr, cols, k0 / 32 + b, half, dst, lut);
        } else {
            for (int q = 0; q < 16; q++) {
                tile_put(dst[16 * half + q], 0.0f);
            }
        }
    }
}

__device__ void mx_tile(const MxRows& w, int ggml, int cols, const float* __restrict__ in, const int* __restrict__ slots,
                        int n, int div, float acc[4][4])
{
    __shared__ float xs[MOE_TM][MOE_KC];
    __shared__ float ws[128][MOE_KC + 1]; // +1: threads of a warp read rows tx at one column without bank conflicts
    __shared__ float lut[16];
    const int tid = threadIdx.x;
    if (tid < 16) {
        lut[tid] = FP4_VALUES[tid]; // visible after the first __syncthreads below
    }
    const int tx = tid & 31;
    const int ty = tid >> 5;
    for (int k0 = 0; k0 < cols; k0 += MOE_KC) {
        const int kc = min(MOE_KC, cols - k0); // a multiple of 32
        __syncthreads(); // the previous step's readers are done
        for (int idx = tid; idx < MOE_TM * MOE_KC; idx += MOE_THREADS) {
            const int m = idx / MOE_KC;
            const int k = idx % MOE_KC;
            float v = 0.0f;
            if (m < n && k < kc) {
                v = in[(size_t) (slots[m] / div) * cols + k0 + k];
            }
            xs[m][k] = v;
        }
        mx_tile_weights(w, ggml, cols, k0, kc, &ws[0][0], MOE_KC + 1, lut);
        __syncthreads();
        for (int k = 0; k < kc; k++) {
            float wv[4], xv[4];
            for (int r = 0; r < 4; r++) {
                wv[r] = ws[32 * r + tx][k];
            }
            for (int i = 0; i < 4; i++) {
                xv[i] = xs[ty + 8 * i][k];
            }
            for (int r = 0; r < 4; r++) {
                for (int i = 0; i < 4; i++) {
                    acc[r][i] = fmaf(wv[r], xv[i], acc[r][i]);
                }
            }
        }
    }
}

// ---- the same tile on tensor cores (moe_gate_up_mma, moe_down_mma) --------------------------------------
// The same work and result layout as mx_tile (acc[r][i] for row tx of group r and slot ty + 8i), computed as a
// 128 x TM x KC BF16 product per step with FP32 accumulation (wmma m16n16k16; warp w owns weight rows 16w ..
// 16w + 15 and both 16-slot halves of the tile):
//   - weights: each MXFP4 value decoded once into a BF16 tile in shared memory. FP4 times 2^(scale - 127) has at most
//     2 significant bits and BF16 has FP32's exponent range, so the BF16 weight equals the FP32 one of mx_tile
//     exactly for every scale byte: overflow (scales >= 253 with the larger codes) is Inf in both, scale 255 NaN in
//     both. The one difference: weights below 2^-126 (scale bytes 0 and 1) are BF16 subnormals, which tensor cores
//     may flush to zero; such a weight is under 1e-37, far below the tolerance of anything it is summed into.
//   - activations: x = hi + lo (bf16_split, common.cuh).
// Shared memory: the BF16 inputs (hi, lo: 2 x TM x (KC + 8)) and one region that holds the BF16 weights during
// the steps (128 x (KC + 8)) and the FP32 products after them (128 x (TM + 4)): 27.7 KB in all.
#define MOE_KP (MOE_KC + 8) // BF16 tile pitch: wmma wants a multiple of 8 elements; +8 spreads rows over banks
#define MOE_OP (MOE_TM + 4) // FP32 product pitch: a multiple of 4

struct alignas(32) MoeMmaTiles { // wmma pointers must be 32-byte aligned: every fragment starts at a multiple of 32 bytes
    __nv_bfloat16 xhi[MOE_TM * MOE_KP];
    __nv_bfloat16 xlo[MOE_TM * MOE_KP];
    float wo[128 * MOE_OP]; // the BF16 weights [128][MOE_KP] during the steps, then the FP32 products [128][MOE_OP]
    float lut[16];
};

__device__ void mx_tile_mma(const MxRows& w, int ggml, int cols, const float* __restrict__ in, const int* __restrict__ slots,
                            int n, int div, float acc[4][4])
{
#ifdef GOSS_MMA
    namespace wmma = nvcuda::wmma;
    static_assert(128 * MOE_KP * 2 <= 128 * MOE_OP * 4, "the weights fit where the products go");
    static_assert(MOE_THREADS == 256 && MOE_TM == 32, "8 warps of 16 rows, two 16-slot halves");
    __shared__ MoeMmaTiles t;
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    if (tid < 16) {
        t.lut[tid] = FP4_VALUES[tid]; // visible after the first __syncthreads below
    }
    __nv_bfloat16* ws = reinterpret_cast<__nv_bfloat16*>(t.wo);
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c[2];
    wmma::fill_fragment(c[0], 0.0f);
    wmma::fill_fragment(c[1], 0.0f);
    for (int k0 = 0; k0 < cols; k0 += MOE_KC) {
        const int kc = min(MOE_KC, cols - k0); // a multiple of 32
        __syncthreads(); // the previous step's readers are done
        for (int idx = tid; idx < MOE_TM * MOE_KC; idx += MOE_THREADS) {
            const int m = idx / MOE_KC;
            const int k = idx % MOE_KC;
            float v = 0.0f;
            if (m < n && k < kc) {
                v = in[(size_t) (slots[m] / div) * cols + k0 + k];
            }
            bf16_split(v, t.xhi[m * MOE_KP + k], t.xlo[m * MOE_KP + k]);
        }
        mx_tile_weights(w, ggml, cols, k0, kc, ws, MOE_KP, t.lut);
        __syncthreads();
        mma_rows_by_split_tokens(c, ws + warp * 16 * MOE_KP, t.xhi, t.xlo, MOE_KP, kc, n);
    }
    __syncthreads(); // every warp is done with the weights: the products go where they were
    wmma::store_matrix_sync(t.wo + warp * 16 * MOE_OP, c[0], MOE_OP, wmma::mem_row_major);
    wmma::store_matrix_sync(t.wo + warp * 16 * MOE_OP + 16, c[1], MOE_OP, wmma::mem_row_major);
    __syncthreads();
    const int tx = tid & 31;
    const int ty = tid >> 5;
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < 4; i++) {
            acc[r][i] = t.wo[(32 * r + tx) * MOE_OP + ty + 8 * i];
        }
    }
#else
    __trap(); // sm_75: MoeLauncher picks these kernels only on compute capability 8.0 and up
#endif
}

// The tile of a work tile: on CUDA cores (FP32) or on tensor cores.
template <bool MMA>
__device__ __forceinline__ void mx_tile_of(const MxRows& w, int ggml, int cols, const float* __restrict__ in,
                                           const int* __restrict__ slots, int n, int div, float acc[4][4])
{
    if (MMA) {
        mx_tile_mma(w, ggml, cols, in, slots, n, div, acc);
    } else {
        mx_tile(w, ggml, cols, in, slots, n, div, acc);
    }
}

// ---- moe_gate_up_tiled: grid (ceil(I / 64), maxTiles), block 256 ---------------------------------------
// Block (x, y): units u0 .. u0+63 (u0 = 64x) of work tile y (blocks past ntiles[0] return at once): gate and
// up rows of those units for the tile's slots; hout is (T*K) x I, row s written for each placed slot.
template <bool MMA>
__device__ __forceinline__ void moe_gate_up_tiles(const unsigned char* __restrict__ gCodes, const unsigned char* __restrict__ gScales,
                                             const unsigned char* __restrict__ uCodes, const unsigned char* __restrict__ uScales,
                                             const float* __restrict__ gBias, const float* __restrict__ uBias,
                                             const float* __restrict__ x, int* __restrict__ groups,
                                             float* __restrict__ hout, const MoeParams p)
{
    const MoeGroups g = moe_groups(groups, p);
    const int* __restrict__ offsets = g.offsets;
    const int* __restrict__ order = g.order;
    const int* __restrict__ tiles = g.tiles;
    const int* __restrict__ ntiles = g.ntiles;
    const int ggml = p.ggml, K = p.k, H = p.hidden, I = p.inter;
    const float limit = p.limit;
    if ((int) blockIdx.y >= ntiles[0]) {
        return; // the whole block: no barrier is skipped by part of it
    }
    const int e = tiles[2 * blockIdx.y];
    const int p0 = tiles[2 * blockIdx.y + 1];
    const int n = min(MOE_TM, offsets[e + 1] - p0);
    const int u0 = blockIdx.x * 64;
    const int nu[2] = {max(0, min(32, I - u0)), max(0, min(32, I - u0 - 32))};
    const size_t row0 = (size_t) e * I + u0;
    // groups: gate and up of units u0.., then gate and up of units u0+32..
    const MxRows w = {{gCodes, uCodes, gCodes, uCodes}, {gScales, uScales, gScales, uScales},
                      {row0, row0, row0 + 32, row0 + 32}, {nu[0], nu[0], nu[1], nu[1]}};
    float acc[4][4] = {};
    mx_tile_of<MMA>(w, ggml, H, x, order + p0, n, K, acc);
    const int tx = threadIdx.x & 31;
    const int ty = threadIdx.x >> 5;
    for (int h = 0; h < 2; h++) {
        if (tx < nu[h]) {
            const size_t row = row0 + 32 * h + tx;
            for (int i = 0; i < 4; i++) {
                const int m = ty + 8 * i;
                if (m < n) {
                    float a = acc[2 * h][i] + gBias[row];
                    float b = acc[2 * h + 1][i] + uBias[row];
                    a = min_keep_nan(a, limit);
                    b = clamp_keep_nan(b, -limit, limit);
                    hout[(size_t) order[p0 + m] * I + u0 + 32 * h + tx] = a / (1.0f + expf(-1.702f * a)) * (b + 1.0f);
                }
            }
        }
    }
}

extern "C" __global__ void moe_gate_up_tiled(const unsigned char* __restrict__ gCodes, const unsigned char* __restrict__ gScales,
                                             const unsigned char* __restrict__ uCodes, const unsigned char* __restrict__ uScales,
                                             const float* __restrict__ gBias, const float* __restrict__ uBias,
                                             const float* __restrict__ x, int* __restrict__ groups,
                                             float* __restrict__ hout, const MoeParams p)
{
    moe_gate_up_tiles<false>(gCodes, gScales, uCodes, uScales, gBias, uBias, x, groups, hout, p);
}

// The same on tensor cores (mx_tile_mma), compute capability 8.0 and up: grid, block, buffers and params as above.
extern "C" __global__ void moe_gate_up_mma(const unsigned char* __restrict__ gCodes, const unsigned char* __restrict__ gScales,
                                           const unsigned char* __restrict__ uCodes, const unsigned char* __restrict__ uScales,
                                           const float* __restrict__ gBias, const float* __restrict__ uBias,
                                           const float* __restrict__ x, int* __restrict__ groups,
                                           float* __restrict__ hout, const MoeParams p)
{
    moe_gate_up_tiles<true>(gCodes, gScales, uCodes, uScales, gBias, uBias, x, groups, hout, p);
}

// ---- moe_down_tiled: grid (ceil(H / 128), maxTiles), block 256 ------------------------------------------
// Block (x, y): output rows d0 .. d0+127 (d0 = 128x) of work tile y: y_s = down_e . h_s + db_e for the tile's
// slots s; yout is (T*K) x H, row s written for each placed slot.
template <bool MMA>
__device__ __forceinline__ void moe_down_tiles(const unsigned char* __restrict__ dCodes, const unsigned char* __restrict__ dScales,
                                          const float* __restrict__ dBias, const float* __restrict__ hin,
                                          int* __restrict__ groups, float* __restrict__ yout, const MoeParams p)
{
    const MoeGroups g = moe_groups(groups, p);
    const int* __restrict__ offsets = g.offsets;
    const int* __restrict__ order = g.order;
    const int* __restrict__ tiles = g.tiles;
    const int* __restrict__ ntiles = g.ntiles;
    const int ggml = p.ggml, H = p.hidden, I = p.inter;
    if ((int) blockIdx.y >= ntiles[0]) {
        return;
    }
    const int e = tiles[2 * blockIdx.y];
    const int p0 = tiles[2 * blockIdx.y + 1];
    const int n = min(MOE_TM, offsets[e + 1] - p0);
    const int d0 = blockIdx.x * 128;
    const size_t row0 = (size_t) e * H + d0;
    MxRows w;
    for (int r = 0; r < 4; r++) {
        w.codes[r] = dCodes;
        w.scales[r] = dScales;
        w.row[r] = row0 + 32 * r;
        w.nrow[r] = max(0, min(32, H - d0 - 32 * r));
    }
    float acc[4][4] = {};
    mx_tile_of<MMA>(w, ggml, I, hin, order + p0, n, 1, acc);
    const int tx = threadIdx.x & 31;
    const int ty = threadIdx.x >> 5;
    for (int r = 0; r < 4; r++) {
        if (tx < w.nrow[r]) {
            const int d = d0 + 32 * r + tx;
            const float bias = dBias[(size_t) e * H + d];
            for (int i = 0; i < 4; i++) {
                const int m = ty + 8 * i;
                if (m < n) {
                    yout[(size_t) order[p0 + m] * H + d] = acc[r][i] + bias;
                }
            }
        }
    }
}

extern "C" __global__ void moe_down_tiled(const unsigned char* __restrict__ dCodes, const unsigned char* __restrict__ dScales,
                                          const float* __restrict__ dBias, const float* __restrict__ hin,
                                          int* __restrict__ groups, float* __restrict__ yout, const MoeParams p)
{
    moe_down_tiles<false>(dCodes, dScales, dBias, hin, groups, yout, p);
}

// The same on tensor cores (mx_tile_mma), compute capability 8.0 and up: grid, block, buffers and params as above.
extern "C" __global__ void moe_down_mma(const unsigned char* __restrict__ dCodes, const unsigned char* __restrict__ dScales,
                                        const float* __restrict__ dBias, const float* __restrict__ hin,
                                        int* __restrict__ groups, float* __restrict__ yout, const MoeParams p)
{
    moe_down_tiles<true>(dCodes, dScales, dBias, hin, groups, yout, p);
}

// ---- moe_combine: grid (min(T, 65535)), block B ----------------------------------------------------------
// out[t, d] = sum_{j = 0..K-1} w[t*K + j] * y[(t*K + j), d], j ascending.
extern "C" __global__ void moe_combine(const float* __restrict__ y, const int* __restrict__ ids,
                                       const float* __restrict__ weights, float* __restrict__ out, const MoeParams p)
{
    const int T = p.tokens, K = p.k, H = p.hidden, E = p.experts;
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        for (int d = threadIdx.x; d < H; d += blockDim.x) {
            float acc = 0.0f;
            for (int j = 0; j < K; j++) {
                const size_t s = (size_t) t * K + j;
                if ((unsigned) ids[s] < (unsigned) E) { // an id the sort left out has no output
                    acc = fmaf(weights[s], y[s * H + d], acc);
                }
            }
            out[(size_t) t * H + d] = acc;
        }
    }
}
