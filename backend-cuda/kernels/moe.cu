// The MXFP4 mixture of experts of the cuda backend (io.gossgpu.device.MoePipeline; MoeLauncher the router). Decode (moe_gate_up, moe_down): a warp
// per 8 units or rows of a slot, rows in 16-byte loads, the activations in registers. A batch of tokens (prefill), batched by
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
// MXFP4 value = FP4[code] * 2^(scale - 127), FP4 = {0, .5, 1, 1.5, 2, 3, 4, 6, -0, -.5, ..., -6}, in OpenAI's
// layout (common.cuh): codes cols/2 bytes per row, byte b = elements 2b (low nibble) and 2b+1 (high); scales
// cols/32 bytes per row, own buffer. GGUF's ggml block_mxfp4 is repacked to it at upload (Mxfp4Repack).
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

// The scalars of every MoE kernel, the same struct in moe.cl and moe.metal (io.gossgpu.device.MoeParams; the
// down kernels do not read limit).
struct MoeParams {
    int tokens;       // T
    int k;            // K: experts per token
    int hidden;       // H
    int inter;        // I: intermediate size
    int experts;      // E
    float limit;      // SwiGLU limit
};

// ---- decode (moe_gate_up, moe_down): rows streamed in 16-byte loads, the activations in registers -----------
// The experts are in OpenAI's layout whatever the checkpoint's (ggml's block_mxfp4 is repacked at upload): a
// row's codes are cols/2 bytes, 16 per 32-value block, so block b of a row is one aligned uint4 (cols is a
// multiple of 32 and buffers start 256-byte aligned), its scale byte b of the row's cols/32.
// A warp computes whole rows: lane l owns blocks l, l + 32, .., l + 32 (MOE_XB - 1) of each chunk of 32 MOE_XB
// blocks (3072 columns: gpt-oss's 2880 are one chunk) and holds their 32 MOE_XB activations in registers, loaded
// once per chunk (moe_down: float4 loads through L1; moe_gate_up, whose warps share the slot: staged per block in
// shared memory); the warp then streams its rows through the chunk, the loads of two rows (a unit's gate and up, or
// two down rows) issued before their arithmetic. Per value: one byte extract, one table load from shared memory,
// one FMA.
#define MOE_XB 3    // 16-byte blocks per lane per chunk (32 MOE_XB activations in registers)
#define MOE_UNITS 8 // moe_gate_up: units (gate + up rows) per warp; moe_down: output rows per block
// Registers per thread of the two (ptxas 13.0 takes 167 and 168 unbounded, no spills): three 4-warp blocks an SM
// (3 x 128 x 168 <= 65536), also when the driver's JIT compiles the PTX.
#define MOE_DECODE_REGS 168

// 2^(s - 127) as a float (exact; s = 0 is the subnormal 2^-127), NaN for s = 255: v * mx_scale(s) == mx_scaled(v, s)
// bit for bit (one product by a power of two, rounded once), without ldexpf's branches.
__device__ __forceinline__ float mx_scale(unsigned int s)
{
    return s == 255u ? __int_as_float(0x7fc00000) : __int_as_float(s == 0u ? 0x00400000 : (int) (s << 23));
}

// The FP4 value at byte offset `off` (4 * code) of the table in shared memory.
__device__ __forceinline__ float lut_at(const float* lut, unsigned int off)
{
    return *(const float*) ((const char*) lut + off);
}

// sum_{v < 32} FP4[code_v] * x[v] over one block (before its scale): word i of q holds values 8i .. 8i + 7, value
// 8i + n in nibble n. The table's byte offsets of four codes come out of one shift and one mask, each then one
// byte extract (prmt).
__device__ __forceinline__ float mx_block_dot(uint4 q, const float* x, const float* lut)
{
    const unsigned int u[4] = {q.x, q.y, q.z, q.w};
    float even = 0.0f, odd = 0.0f;
    GOSS_PRAGMA(unroll)
    for (int i = 0; i < 4; i++) {
        const unsigned int lo = (u[i] << 2) & 0x3c3c3c3cu; // byte k: 4 * code of value 8i + 2k
        const unsigned int hi = (u[i] >> 2) & 0x3c3c3c3cu; // byte k: 4 * code of value 8i + 2k + 1
        GOSS_PRAGMA(unroll)
        for (int k = 0; k < 4; k++) {
            // byte k, zero-extended: one prmt each
            even = fmaf(lut_at(lut, __byte_perm(lo, 0u, 0x4440u + k)), x[8 * i + 2 * k], even);
            odd = fmaf(lut_at(lut, __byte_perm(hi, 0u, 0x4440u + k)), x[8 * i + 2 * k + 1], odd);
        }
    }
    return even + odd;
}

// The lane's activations of chunk b0 (nbc blocks): xr[k] = x[32 (b0 + b) ..] for its block b = lane + 32k, zeros
// past the chunk.
__device__ __forceinline__ void mx_load_x(const float* __restrict__ x, int b0, int nbc, int lane, float xr[MOE_XB][32])
{
    GOSS_PRAGMA(unroll)
    for (int k = 0; k < MOE_XB; k++) {
        const int b = lane + 32 * k;
        const float4* src = (const float4*) (x + 32 * (size_t) (b0 + b));
        GOSS_PRAGMA(unroll)
        for (int i = 0; i < 8; i++) {
            float4 f = {0.0f, 0.0f, 0.0f, 0.0f};
            if (b < nbc) {
                f = src[i];
            }
            xr[k][4 * i] = f.x;
            xr[k][4 * i + 1] = f.y;
            xr[k][4 * i + 2] = f.z;
            xr[k][4 * i + 3] = f.w;
        }
    }
}

// moe_gate_up's warps share their slot's activations: the block stages chunk b0 (nbc blocks) once into xs, float4 i
// of block b at xs[8b + (i ^ (b & 7))], so that both the staging stores (8 threads, one block) and each warp's
// reads (lanes b .. b + 7, one float4 index) touch 8 different 16-byte bank groups: no conflicts. Call between barriers.
__device__ __forceinline__ void mx_stage_x(const float* __restrict__ x, int b0, int nbc, float4* xs)
{
    const float4* src = (const float4*) (x + 32 * (size_t) b0);
    for (int idx = threadIdx.x; idx < 8 * nbc; idx += blockDim.x) {
        const int b = idx >> 3;
        xs[8 * b + ((idx & 7) ^ (b & 7))] = src[idx];
    }
}

// The lane's activations of the staged chunk (as mx_load_x gives them from global memory).
__device__ __forceinline__ void mx_staged_x(const float4* xs, int nbc, int lane, float xr[MOE_XB][32])
{
    GOSS_PRAGMA(unroll)
    for (int k = 0; k < MOE_XB; k++) {
        const int b = lane + 32 * k;
        GOSS_PRAGMA(unroll)
        for (int i = 0; i < 8; i++) {
            float4 f = {0.0f, 0.0f, 0.0f, 0.0f};
            if (b < nbc) {
                f = xs[8 * b + (i ^ (b & 7))];
            }
            xr[k][4 * i] = f.x;
            xr[k][4 * i + 1] = f.y;
            xr[k][4 * i + 2] = f.z;
            xr[k][4 * i + 3] = f.w;
        }
    }
}

// acc[i] += the lane's share of (row row[i] of codes[i], scales[i]) . x over chunk b0 (nbc blocks of nb per row),
// for i < 2: both rows' loads (2 x MOE_XB x 16 code bytes, and their scale bytes) first, then their sums.
__device__ __forceinline__ void mx_two_rows(const unsigned char* __restrict__ c0, const unsigned char* __restrict__ s0, size_t r0,
                                            const unsigned char* __restrict__ c1, const unsigned char* __restrict__ s1, size_t r1,
                                            int nb, int b0, int nbc, int lane, const float xr[MOE_XB][32], const float* lut,
                                            float& acc0, float& acc1)
{
    const uint4* q0 = (const uint4*) (c0 + r0 * (size_t) nb * 16) + b0;
    const uint4* q1 = (const uint4*) (c1 + r1 * (size_t) nb * 16) + b0;
    const unsigned char* e0 = s0 + r0 * (size_t) nb + b0;
    const unsigned char* e1 = s1 + r1 * (size_t) nb + b0;
    uint4 w0[MOE_XB], w1[MOE_XB];
    unsigned int x0[MOE_XB], x1[MOE_XB];
    GOSS_PRAGMA(unroll)
    for (int k = 0; k < MOE_XB; k++) {
        const int b = lane + 32 * k;
        w0[k] = w1[k] = uint4{0u, 0u, 0u, 0u};
        x0[k] = x1[k] = 127u;
        if (b < nbc) {
            w0[k] = q0[b];
            w1[k] = q1[b];
            x0[k] = e0[b];
            x1[k] = e1[b];
        }
    }
    GOSS_PRAGMA(unroll)
    for (int k = 0; k < MOE_XB; k++) {
        if (lane + 32 * k < nbc) {
            acc0 += mx_block_dot(w0[k], xr[k], lut) * mx_scale(x0[k]);
            acc1 += mx_block_dot(w1[k], xr[k], lut) * mx_scale(x1[k]);
        }
    }
}

// mlp1 + SwiGLU for decode: warp w of block (x, y) computes units u0 .. u0 + MOE_UNITS - 1 (u0 = (x W + w) MOE_UNITS,
// W the block's warps) of slot s = y, y + gridDim.y, .. (its gate and up rows, x_t in registers, staged once per block
// through shared memory: one L2 read of x_t per block, not per warp). hout is (T*K) x I.
// grid (ceil(I / (W MOE_UNITS)), min(T*K, 65535)), block 32 W, no dynamic shared memory.
extern "C" GOSS_MAXNREG(MOE_DECODE_REGS) __global__ void moe_gate_up(const unsigned char* __restrict__ gCodes, const unsigned char* __restrict__ gScales,
                                       const unsigned char* __restrict__ uCodes, const unsigned char* __restrict__ uScales,
                                       const float* __restrict__ gBias, const float* __restrict__ uBias,
                                       const float* __restrict__ x, const int* __restrict__ ids,
                                       float* __restrict__ hout, const MoeParams p)
{
    const int T = p.tokens, K = p.k, H = p.hidden, I = p.inter;
    const float limit = p.limit;
    __shared__ float lut[16];
    __shared__ float4 xs[32 * MOE_XB * 8]; // one chunk of x_t, staged (mx_stage_x): 12 KiB
    fp4_table(lut); // visible after the first barrier below
    const int lane = threadIdx.x & 31;
    const int u0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * MOE_UNITS;
    const int nu = min(MOE_UNITS, I - u0); // the warp's units (none past I: it still meets the barriers)
    const int nb = H / 32;
    for (int s = blockIdx.y; s < T * K; s += gridDim.y) {
        const size_t row0 = (size_t) ids[s] * I + u0;
        float ga[MOE_UNITS], ua[MOE_UNITS];
        GOSS_PRAGMA(unroll)
        for (int j = 0; j < MOE_UNITS; j++) {
            ga[j] = ua[j] = 0.0f;
        }
        for (int b0 = 0; b0 < nb; b0 += 32 * MOE_XB) {
            const int nbc = min(32 * MOE_XB, nb - b0);
            __syncthreads(); // the previous chunk's readers are done
            mx_stage_x(x + (size_t) (s / K) * H, b0, nbc, xs);
            __syncthreads();
            float xr[MOE_XB][32];
            mx_staged_x(xs, nbc, lane, xr);
            GOSS_PRAGMA(unroll)
            for (int j = 0; j < MOE_UNITS; j++) {
                if (j < nu) {
                    mx_two_rows(gCodes, gScales, row0 + j, uCodes, uScales, row0 + j, nb, b0, nbc, lane, xr, lut, ga[j], ua[j]);
                }
            }
        }
        GOSS_PRAGMA(unroll)
        for (int j = 0; j < MOE_UNITS; j++) {
            const float gs = warp_sum(ga[j]);
            const float us = warp_sum(ua[j]);
            if (lane == j && j < nu) {
                float a = gs + gBias[row0 + j];
                float b = us + uBias[row0 + j];
                a = min_keep_nan(a, limit);
                b = clamp_keep_nan(b, -limit, limit);
                hout[(size_t) s * I + u0 + j] = a / (1.0f + expf(-1.702f * a)) * (b + 1.0f);
            }
        }
    }
}

// mlp2 + bias + weighted sum over the K slots for decode: block (x, y) computes outputs d0 .. d0 + MOE_UNITS - 1
// (d0 = x MOE_UNITS) of token t = y, y + gridDim.y, ..; its warp w takes slots j = w, w + W, .. (down rows of expert
// ids[tK + j] against h_{tK + j} in registers, two rows at a time) into shared memory, then thread r sums output r's
// K slots, j ascending: out[t, d] = sum_j w_j (down_e . h_j + db_e).
// grid (ceil(H / MOE_UNITS), min(T, 65535)), block 32 W (W <= K), dynamic shared memory 4 K MOE_UNITS bytes. out is T x H.
extern "C" GOSS_MAXNREG(MOE_DECODE_REGS) __global__ void moe_down(const unsigned char* __restrict__ dCodes, const unsigned char* __restrict__ dScales,
                                    const float* __restrict__ dBias, const float* __restrict__ hin,
                                    const int* __restrict__ ids, const float* __restrict__ weights,
                                    float* __restrict__ out, const MoeParams p)
{
    const int T = p.tokens, K = p.k, H = p.hidden, I = p.inter;
    DYNAMIC_SHARED(float, ys); // K x MOE_UNITS: slot j's sums, bias added
    __shared__ float lut[16];
    fp4_table(lut); // visible after the first barrier below
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int W = blockDim.x >> 5;
    const int d0 = blockIdx.x * MOE_UNITS;
    const int nd = min(MOE_UNITS, H - d0);
    const int nb = I / 32;
    for (int t = blockIdx.y; t < T; t += gridDim.y) {
        __syncthreads(); // the table is there; the previous token's readers of ys are done
        for (int j = warp; j < K; j += W) {
            const size_t s = (size_t) t * K + j;
            const size_t row0 = (size_t) ids[s] * H + d0;
            float acc[MOE_UNITS];
            GOSS_PRAGMA(unroll)
            for (int r = 0; r < MOE_UNITS; r++) {
                acc[r] = 0.0f;
            }
            for (int b0 = 0; b0 < nb; b0 += 32 * MOE_XB) {
                const int nbc = min(32 * MOE_XB, nb - b0);
                float xr[MOE_XB][32];
                mx_load_x(hin + s * I, b0, nbc, lane, xr);
                GOSS_PRAGMA(unroll)
                for (int r = 0; r < MOE_UNITS; r += 2) {
                    if (r < nd) { // rows past nd repeat row nd - 1 (not kept)
                        mx_two_rows(dCodes, dScales, row0 + r, dCodes, dScales, row0 + min(r + 1, nd - 1), nb, b0, nbc, lane, xr,
                                    lut, acc[r], acc[r + 1]);
                    }
                }
            }
            GOSS_PRAGMA(unroll)
            for (int r = 0; r < MOE_UNITS; r++) {
                const float v = warp_sum(acc[r]);
                if (lane == r && r < nd) {
                    ys[j * MOE_UNITS + r] = v + dBias[row0 + r];
                }
            }
        }
        __syncthreads();
        if ((int) threadIdx.x < nd) {
            const int r = threadIdx.x;
            float acc = 0.0f;
            for (int j = 0; j < K; j++) {
                const size_t s = (size_t) t * K + j;
                const float v = ys[j * MOE_UNITS + r];
                acc = j == 0 ? weights[s] * v : fmaf(weights[s], v, acc);
            }
            out[(size_t) t * H + d0 + r] = acc;
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
                               size_t row, int cols, int blk, int half, T* dst, const float* lut)
{
    const unsigned char* b = codes + row * (size_t) (cols / 2) + (size_t) blk * 16;
    const unsigned int e = scales[row * (size_t) (cols / 32) + blk];
    for (int q = 8 * half; q < 8 * half + 8; q++) {
        const unsigned int byte = b[q];
        tile_put(dst[2 * q], mx_scaled(lut[byte & 15u], e));
        tile_put(dst[2 * q + 1], mx_scaled(lut[byte >> 4], e));
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
__device__ __forceinline__ void mx_tile_weights(const MxRows& w, int cols, int k0, int kc, T* ws, int pitch, const float* lut)
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
            mx_decode_half(c, sc, row + rr, cols, k0 / 32 + b, half, dst, lut);
        } else {
            for (int q = 0; q < 16; q++) {
                tile_put(dst[16 * half + q], 0.0f);
            }
        }
    }
}

__device__ void mx_tile(const MxRows& w, int cols, const float* __restrict__ in, const int* __restrict__ slots,
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
        mx_tile_weights(w, cols, k0, kc, &ws[0][0], MOE_KC + 1, lut);
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

__device__ void mx_tile_mma(const MxRows& w, int cols, const float* __restrict__ in, const int* __restrict__ slots,
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
        mx_tile_weights(w, cols, k0, kc, ws, MOE_KP, t.lut);
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
__device__ __forceinline__ void mx_tile_of(const MxRows& w, int cols, const float* __restrict__ in,
                                           const int* __restrict__ slots, int n, int div, float acc[4][4])
{
    if (MMA) {
        mx_tile_mma(w, cols, in, slots, n, div, acc);
    } else {
        mx_tile(w, cols, in, slots, n, div, acc);
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
    const int K = p.k, H = p.hidden, I = p.inter;
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
    mx_tile_of<MMA>(w, H, x, order + p0, n, K, acc);
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
    const int H = p.hidden, I = p.inter;
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
    mx_tile_of<MMA>(w, I, hin, order + p0, n, 1, acc);
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
