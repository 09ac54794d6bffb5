// common.cuh — what the kernels of this folder share, included by every .cu file. The CUDA emulator compiles all
// of them as one unit (backend-cuda/emu/cuda-emu), so a helper lives here once, under one name, behind the include guard.
//   - spellings that differ between nvcc and g++ under the emulator (cuda_emu.h defines GOSS_CUDA_EMU)
//   - warp reductions (every lane gets the result), the argmax rule
//   - dense element types: BF16 / F16 bits -> float, Q8_0 (embed.cu, dense.cu)
//   - MXFP4: the FP4 table and the E8M0 scale (moe.cu)
//   - tensor cores: GOSS_MMA, the BF16 types and wmma, bf16_split (every *_mma kernel), the k-loop of a weights x
//     split-activations tile (mma_rows_by_split_tokens: moe.cu's and dense.cu's)
#ifndef GOSS_COMMON_CUH
#define GOSS_COMMON_CUH

#include <math.h>

// DYNAMIC_SHARED(float, smem): the launch's dynamic shared memory (sharedMemBytes) as `type *name`.
// nvcc: `extern __shared__ type name[]`; emulator: the block's buffer, sized exactly, guard page behind it.
#ifdef GOSS_CUDA_EMU
#define DYNAMIC_SHARED(type, name) type *name = (type *) cuemu::dynamic_shared()
#else
#define DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

// GOSS_PRAGMA(unroll 4): `#pragma unroll 4` for nvcc; nothing under the emulator (g++ -Werror rejects it).
#ifdef GOSS_CUDA_EMU
#define GOSS_PRAGMA(x)
#else
#define GOSS_PRAGMA(x) _Pragma(#x)
#endif

// GOSS_MAXNREG(168): at most that many registers per thread (nvcc's __maxnreg__, PTX .maxnreg, which also binds the
// driver's JIT) without capping the block size as __launch_bounds__ would; nothing under the emulator. Written before
// __global__ (`extern "C" GOSS_MAXNREG(n) __global__ void name(`), so `__global__ void name(` stays as
// engine-core's kernel contract tests read it.
#ifdef GOSS_CUDA_EMU
#define GOSS_MAXNREG(n)
#else
#define GOSS_MAXNREG(n) __maxnreg__(n)
#endif

// CUDA's 16-byte vector types (dense.cu loads weights and activations as uint4 / float4). Aligned to 16 as on
// the GPU, where a misaligned vector load faults: the emulator is built with -fsanitize=alignment, so such a
// load stops the test run there too instead of silently working on x86.
#ifdef GOSS_CUDA_EMU
struct alignas(16) uint4 {
    unsigned int x, y, z, w;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
#endif

// ---- warp reductions: a butterfly over the 32 lanes, every lane gets the result -----------------------
__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

// (bv, bi) <- (ov, oi) when that is the larger value, or the equal value at the lower index; an index < 0 is
// "nothing yet". The argmax rule of argmax.cu and router.cu (ties -> lower id).
__device__ __forceinline__ void argmax_pick(float& bv, int& bi, float ov, int oi)
{
    if (oi >= 0 && (bi < 0 || ov > bv || (ov == bv && oi < bi))) {
        bv = ov;
        bi = oi;
    }
}

// The warp's argmax by argmax_pick; every lane gets (bv, bi).
__device__ __forceinline__ void warp_argmax(float& bv, int& bi)
{
    for (int o = 16; o > 0; o >>= 1) {
        argmax_pick(bv, bi, __shfl_xor_sync(0xffffffffu, bv, o), __shfl_xor_sync(0xffffffffu, bi, o));
    }
}

// ---- dense element types --------------------------------------------------------------------------
// Weights in their checkpoint precision, row-major with contiguous rows: element (r, c) at w[r * cols + c]; Q8_0
// as signed bytes w[r * cols + c] plus one F16 scale per 32 values, s[r * cols/32 + c/32].
//   BF16 bits b -> float bits b << 16;  F16 -> IEEE binary16 value (subnormals, inf, NaN exact);
//   Q8_0 -> s * q (exact in float: 8 x 11 significant bits)
// at(w, s, cols, r, c): value (r, c). VEC values per 16-byte load (uint4); unpack decodes the load of
// values (r, c0 .. c0 + VEC - 1), c0 a multiple of VEC. s is only read by Q8.

__device__ __forceinline__ float bf16_to_float(unsigned int bits)
{
    return __uint_as_float((bits & 0xffffu) << 16);
}

__device__ __forceinline__ float f16_to_float(unsigned int bits)
{
    const unsigned int sign = (bits & 0x8000u) << 16;
    const unsigned int e = (bits >> 10) & 31u;
    const unsigned int m = bits & 1023u;
    if (e == 0) {
        // zero or subnormal: m * 2^-24, exact in float
        const float v = (float) m * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    if (e == 31) {
        return __uint_as_float(sign | 0x7f800000u | (m << 13)); // inf or NaN (payload kept)
    }
    return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
}

struct Bf16 {
    typedef unsigned short T;
    enum { VEC = 8 };
    static __device__ __forceinline__ float at(const T* w, const unsigned short*, int cols, size_t r, int c)
    {
        return bf16_to_float(w[r * cols + c]);
    }
    static __device__ __forceinline__ void unpack(uint4 q, const unsigned short*, int, size_t, int, float* f)
    {
        const unsigned int u[4] = {q.x, q.y, q.z, q.w};
        for (int i = 0; i < 4; i++) {
            f[2 * i] = bf16_to_float(u[i]);
            f[2 * i + 1] = bf16_to_float(u[i] >> 16);
        }
    }
};

struct F16 {
    typedef unsigned short T;
    enum { VEC = 8 };
    static __device__ __forceinline__ float at(const T* w, const unsigned short*, int cols, size_t r, int c)
    {
        return f16_to_float(w[r * cols + c]);
    }
    static __device__ __forceinline__ void unpack(uint4 q, const unsigned short*, int, size_t, int, float* f)
    {
        const unsigned int u[4] = {q.x, q.y, q.z, q.w};
        for (int i = 0; i < 4; i++) {
            f[2 * i] = f16_to_float(u[i] & 0xffffu);
            f[2 * i + 1] = f16_to_float(u[i] >> 16);
        }
    }
};

struct F32 {
    typedef float T;
    enum { VEC = 4 };
    static __device__ __forceinline__ float at(const T* w, const unsigned short*, int cols, size_t r, int c)
    {
        return w[r * cols + c];
    }
    static __device__ __forceinline__ void unpack(uint4 q, const unsigned short*, int, size_t, int, float* f)
    {
        f[0] = __uint_as_float(q.x);
        f[1] = __uint_as_float(q.y);
        f[2] = __uint_as_float(q.z);
        f[3] = __uint_as_float(q.w);
    }
};

struct Q8 {
    typedef signed char T;
    enum { VEC = 16 };
    static __device__ __forceinline__ float at(const T* w, const unsigned short* s, int cols, size_t r, int c)
    {
        return f16_to_float(s[r * (cols / 32) + c / 32]) * (float) w[r * cols + c];
    }
    static __device__ __forceinline__ void unpack(uint4 q, const unsigned short* s, int cols, size_t r, int c0, float* f)
    {
        const float d = f16_to_float(s[r * (cols / 32) + c0 / 32]); // 16 values never straddle a 32-value block
        const unsigned int u[4] = {q.x, q.y, q.z, q.w};
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++) {
                f[4 * i + j] = d * (float) (signed char) (u[i] >> (8 * j));
            }
        }
    }
};

// ---- MXFP4 ------------------------------------------------------------------------------------
// value = FP4[code] * 2^(scale - 127). OpenAI layout (GGUF's ggml block_mxfp4 is repacked to it at upload): codes
// row-contiguous, cols/2 bytes per row, byte b holds element 2b in the low nibble and 2b+1 in the high nibble;
// scales in their own buffer, cols/32 bytes per row. Rows of expert e start at row e * rowsPerExpert.
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

// v * 2^(scale - 127); scale byte 255 is NaN (OCP MX), whatever v is (a zero code or a block sum of zero
// included), as the reference backend defines it (io.gossgpu.quant.Mxfp4.value).
__device__ __forceinline__ float mx_scaled(float v, unsigned int scale)
{
    return scale == 255u ? __int_as_float(0x7fc00000) : ldexpf(v, (int) scale - 127);
}

// ---- tensor cores: BF16 wmma with FP32 accumulation, compute capability 8.0 and up ------------------------
// (cuda_fp16.h's conversions, __float2half_rn / __half2float, serve attention.cu's F16 KV cache on every target.)
// GOSS_MMA is defined where the *_mma kernels have their body (sm_80 and sm_90 PTX, the emulator, which gives the
// wmma fragment API and __nv_bfloat16 itself); on sm_75 they are stubs that trap (their launchers never pick them
// there), so moe.cu's and dense.cu's PTX differ per target.
#ifndef GOSS_CUDA_EMU
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif
#if defined(GOSS_CUDA_EMU) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800)
#define GOSS_MMA 1
#endif

// x as hi + lo, both BF16, for a product on tensor cores with FP32 sums: hi = x rounded to BF16
// (|x - hi| <= 2^-8 |x|; cut instead where rounding would give Inf), lo = x - hi rounded to BF16; W.hi + W.lo keeps
// about 16 of x's 24 mantissa bits (relative error <= 2^-16 per product, 2^-15 where cut). Non-finite x: hi = x,
// lo = 0 (Inf stays Inf, not Inf - Inf = NaN).
__device__ __forceinline__ void bf16_split(float x, __nv_bfloat16& hi, __nv_bfloat16& lo)
{
    if (!(fabsf(x) <= 3.402823466e38f)) { // Inf or NaN
        hi = __float2bfloat16(x);
        lo = __float2bfloat16(0.0f);
        return;
    }
    float h = __bfloat162float(__float2bfloat16(x));
    if (!(fabsf(h) <= 3.402823466e38f)) {
        h = __uint_as_float(__float_as_uint(x) & 0xffff0000u); // rounded up to Inf: cut instead
    }
    hi = __float2bfloat16(h);     // exact: h is a BF16 value
    lo = __float2bfloat16(x - h); // x - h exact in FP32, then rounded to BF16
}

#ifdef GOSS_MMA
// One step of a tile product on tensor cores, the activations as hi + lo BF16 (bf16_split): c[j] += W (Xhi + Xlo)^T
// for the warp's 16 weight rows (w: the first, BF16, row-major) and the tile's tokens 16j .. 16j + 15 (xhi, xlo:
// token-major), over columns 0 .. kc - 1 in steps of 16 (columns past the data are zeros in both tiles); every tile
// has `pitch` elements per row. A 16-token half runs only where 16j < n, the tile's tokens (the same for the whole
// warp). Two mma per fragment. The k-loop of dense.cu's dense_gemm_mma_bf16 and moe.cu's mx_tile_mma.
__device__ __forceinline__ void mma_rows_by_split_tokens(nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c[2],
                                                         const __nv_bfloat16* w, const __nv_bfloat16* xhi,
                                                         const __nv_bfloat16* xlo, int pitch, int kc, int n)
{
    namespace wmma = nvcuda::wmma;
    for (int kk = 0; kk < kc; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
        wmma::load_matrix_sync(a, w + kk, pitch);
        for (int j = 0; j < 2; j++) {
            if (16 * j < n) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
                wmma::load_matrix_sync(b, xhi + 16 * j * pitch + kk, pitch);
                wmma::mma_sync(c[j], a, b, c[j]);
                wmma::load_matrix_sync(b, xlo + 16 * j * pitch + kk, pitch);
                wmma::mma_sync(c[j], a, b, c[j]);
            }
        }
    }
}
#endif

#endif
