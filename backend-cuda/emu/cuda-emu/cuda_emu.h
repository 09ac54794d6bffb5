/*
 * cuda_emu.h — the subset of CUDA C++ that goss-gpu's kernels (the .cu files of backend-cuda/kernels) use, for compiling them
 * as host C++ (g++) into the emulated CUDA device behind the fake driver
 * (backend-cuda/emu/fake-driver). See backend-cuda/emu/cuda-emu/README.md.
 *
 *   - __global__/__device__/__host__/__constant__ are empty, __forceinline__ is inline (one flat address space).
 *   - __shared__ is `static thread_local`: a block's threads are fibers on one OS thread and share it; blocks
 *     running in parallel are on different OS threads. Dynamic shared memory: DYNAMIC_SHARED (backend-cuda/kernels/common.cuh).
 *   - threadIdx/blockIdx/blockDim/gridDim come from the running fiber (uint3, x fastest; warps are 32
 *     consecutive linear thread indices).
 *   - __syncthreads() is a block-wide rendezvous; __syncwarp and __shfl_sync/_up/_down/_xor (float, int,
 *     unsigned; width 1..32) are rendezvous of the lanes named in the mask, the exchange done when all have
 *     arrived. A barrier not reached by every thread, a mask naming a lane that returned or waits elsewhere,
 *     or a source lane outside the mask fails the launch with an error naming the kernel.
 *   - atomicAdd (float, int, unsigned), atomicMax (int, unsigned): real atomics across OS threads;
 *     __threadfence() a sequentially consistent fence (a block's writes before it are seen by a block that sees a
 *     later atomic of it: the last-block-done pattern of argmax.cu).
 *   - __ldg, __byte_perm, the bit casts, fmaf/expf/ldexpf/fminf/fmaxf/sqrtf (math.h), rsqrtf, min/max, INFINITY.
 *   - __nv_bfloat16 with __float2bfloat16 (round to nearest even), __bfloat162float and __bfloat16_as_ushort (cuda_bf16.h).
 *   - __half with __float2half_rn (round to nearest even, subnormals kept), __half2float, __half_as_ushort and
 *     __ushort_as_half (cuda_fp16.h).
 *   - nvcuda::wmma (mma.h) for the one shape the kernels use: m16n16k16, BF16 a/b (row or col major), FP32
 *     accumulator; fill_fragment, load_matrix_sync, mma_sync, store_matrix_sync. A scalar twin: the layout of a
 *     fragment is opaque in wmma, so here lane l holds elements 8l .. 8l + 7 of the 16 x 16 tile in row-major
 *     order. load/store/mma are warp rendezvous (all 32 lanes, as wmma requires): lanes giving different pointers
 *     or ldm, a pointer not 32-byte aligned or an ldm that is not a multiple of 16 bytes fails the launch; mma
 *     sums each product in k order with fmaf from the accumulator (a GPU's rounding inside the 16-term sum differs).
 * Anything else (vector types, half arithmetic, other wmma shapes, cooperative groups) fails to compile: add it here.
 */
#ifndef GOSS_CUDA_EMU_H
#define GOSS_CUDA_EMU_H

#define GOSS_CUDA_EMU 1

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <type_traits>
#include <utility>

struct uint3 {
    unsigned int x, y, z;
};
typedef uint3 dim3;

namespace cuemu {
uint3 thread_idx();
uint3 block_idx();
uint3 block_dim();
uint3 grid_dim();
void *dynamic_shared();
void syncthreads();
enum { SHFL_IDX = 1, SHFL_UP = 2, SHFL_DOWN = 3, SHFL_XOR = 4, SYNCWARP = 5 };
enum { T_FLOAT = 1, T_INT = 2, T_UINT = 3, T_NONE = 4 };
uint32_t warp_op(int op, unsigned mask, uint32_t bits, int type, unsigned arg, int width);
unsigned linear_thread();                  // the running thread's linear index in its block
[[noreturn]] void fail(const char *why);   // fails the launch with this message

template <class T> inline uint32_t bits(T v) { static_assert(sizeof(T) == 4); uint32_t b; std::memcpy(&b, &v, 4); return b; }
template <class T> inline T from(uint32_t b) { static_assert(sizeof(T) == 4); T v; std::memcpy(&v, &b, 4); return v; }
template <class T> constexpr int type_of() { return std::is_same_v<T, float> ? T_FLOAT : std::is_same_v<T, int> ? T_INT : T_UINT; }

// ---- registration: cuLaunchKernel's kernelParams (one pointer per argument: a buffer, or the params struct's bytes)
// unpacked into typed arguments ----
constexpr int kMaxParams = 32;
using Trampoline = void (*)(void *fn, void **params);
void register_kernel(const char *name, void *fn, Trampoline call, int nparams, const size_t *sizes);
// Each value is copied out (the driver API does not promise aligned parameter storage; a real driver copies too).
template <class T> inline T param(const void *p) { std::remove_cv_t<T> v; std::memcpy(&v, p, sizeof v); return v; }
template <class... A, size_t... I> void call_with(void (*f)(A...), void **p, std::index_sequence<I...>) {
    f(param<A>(p[I])...);
}
template <class... A> void trampoline(void *fn, void **p) {
    call_with(reinterpret_cast<void (*)(A...)>(fn), p, std::index_sequence_for<A...>{});
}
template <class... A> struct Registrar {
    Registrar(const char *name, void (*f)(A...)) {
        static_assert(sizeof...(A) <= kMaxParams, "too many kernel parameters");
        const size_t sizes[sizeof...(A) + 1] = {sizeof(A)..., 0};
        register_kernel(name, reinterpret_cast<void *>(f), &trampoline<A...>, (int) sizeof...(A), sizes);
    }
};
} // namespace cuemu

// One line per kernel, generated from the sources (cuda_kernels.cpp): CUDA_EMU_KERNEL(add)
#define CUDA_EMU_KERNEL(name) static cuemu::Registrar cuemu_registrar_##name(#name, name);

// An entry point's mark: nothing, except when the build lists the entry points (g++ -E -DGOSS_CUDA_EMU_LIST), where
// it stays in the preprocessed text as CUDA_EMU_ENTRY before the kernel's name.
#ifdef GOSS_CUDA_EMU_LIST
#define __global__ CUDA_EMU_ENTRY
#else
#define __global__
#endif
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __shared__ static thread_local

#define threadIdx (cuemu::thread_idx())
#define blockIdx (cuemu::block_idx())
#define blockDim (cuemu::block_dim())
#define gridDim (cuemu::grid_dim())
#define warpSize 32

inline void __syncthreads() { cuemu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { cuemu::warp_op(cuemu::SYNCWARP, mask, 0, cuemu::T_NONE, 0, 32); }

#define CUEMU_SHUFFLE(fn, op, argtype)                                                                              \
    template <class T, class = std::enable_if_t<std::is_same_v<T, float> || std::is_same_v<T, int> ||             \
                                                std::is_same_v<T, unsigned>>>                                     \
    inline T fn(unsigned mask, T v, argtype a, int width = 32) {                                                  \
        return cuemu::from<T>(cuemu::warp_op(op, mask, cuemu::bits(v), cuemu::type_of<T>(), (unsigned) a, width)); \
    }
CUEMU_SHUFFLE(__shfl_sync, cuemu::SHFL_IDX, int)
CUEMU_SHUFFLE(__shfl_up_sync, cuemu::SHFL_UP, unsigned)
CUEMU_SHUFFLE(__shfl_down_sync, cuemu::SHFL_DOWN, unsigned)
CUEMU_SHUFFLE(__shfl_xor_sync, cuemu::SHFL_XOR, int)
#undef CUEMU_SHUFFLE

// ---- atomics (GCC builtins on plain memory: atomic across the OS threads running blocks) ----
inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline float atomicAdd(float *p, float v) {
    uint32_t *u = reinterpret_cast<uint32_t *>(p);
    uint32_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(u, &old, cuemu::bits(cuemu::from<float>(old) + v), true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
    return cuemu::from<float>(old);
}
inline int atomicMax(int *p, int v) {
    int old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
inline unsigned atomicMax(unsigned *p, unsigned v) {
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- loads, bit casts, math ----
template <class T> inline T __ldg(const T *p) { return *p; }
// __byte_perm(a, b, s): result byte i is byte (s >> 4i) & 7 of the 8 bytes b:a (a's bytes 0-3); with bit 3 of that
// selector nibble set, the chosen byte's sign bit repeated instead (prmt.b32's default mode).
inline unsigned __byte_perm(unsigned a, unsigned b, unsigned s) {
    const uint64_t bytes = (uint64_t) b << 32 | a;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) {
        const unsigned n = (s >> (4 * i)) & 15u;
        unsigned v = (unsigned) (bytes >> (8 * (n & 7u))) & 0xffu;
        if (n & 8u) v = (v & 0x80u) ? 0xffu : 0u;
        r |= v << (8 * i);
    }
    return r;
}
inline unsigned __float_as_uint(float f) { return cuemu::bits(f); }
inline float __uint_as_float(unsigned u) { return cuemu::from<float>(u); }
inline int __float_as_int(float f) { return cuemu::from<int>(cuemu::bits(f)); }
inline float __int_as_float(int i) { return cuemu::from<float>((uint32_t) i); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }

// ---- BF16 (cuda_bf16.h) ----
struct __nv_bfloat16 {
    unsigned short x;
};
inline __nv_bfloat16 __float2bfloat16(float f) {
    uint32_t b = cuemu::bits(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{(unsigned short) ((b >> 16) | 0x40u)}; // NaN stays NaN
    b += 0x7fffu + ((b >> 16) & 1u);                                                                    // to nearest even
    return __nv_bfloat16{(unsigned short) (b >> 16)};
}
inline float __bfloat162float(__nv_bfloat16 h) { return cuemu::from<float>((uint32_t) h.x << 16); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.x; }

// ---- F16 (cuda_fp16.h): IEEE binary16, subnormals kept (cvt.rn.f16.f32 / cvt.f32.f16 without .ftz) ----
struct __half {
    unsigned short x;
};
// Round to nearest even; |f| >= 65520 (half the last step past 65504) is Inf; NaN a quiet NaN (0x7fff, sign kept).
inline __half __float2half_rn(float f) {
    const uint32_t b = cuemu::bits(f), sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
    if (a > 0x7f800000u) return __half{(unsigned short) (sign | 0x7fffu)};
    if (a >= 0x477ff000u) return __half{(unsigned short) (sign | 0x7c00u)};
    if (a <= 0x33000000u) return __half{(unsigned short) sign}; // <= 2^-25: 0 (2^-25 ties to even 0)
    uint32_t h, rem, halfway;
    if (a >= 0x38800000u) { // >= 2^-14: normal, the exponent rebiased from 127 to 15, 13 mantissa bits rounded off
        h = (a - 0x38000000u) >> 13;
        rem = a & 0x1fffu;
        halfway = 0x1000u;
    } else { // subnormal half: the 24-bit significand m * 2^(e - 150) in steps of 2^-24
        const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, s = 126u - e;
        h = m >> s;
        rem = m & ((1u << s) - 1u);
        halfway = 1u << (s - 1u);
    }
    if (rem > halfway || (rem == halfway && (h & 1u))) h++; // a carry into the exponent is the right encoding
    return __half{(unsigned short) (sign | h)};
}
inline float __half2float(__half h) {
    const uint32_t sign = (uint32_t) (h.x & 0x8000u) << 16, e = (h.x >> 10) & 31u, m = h.x & 1023u;
    if (e == 0) {
        const float v = (float) m * 5.9604644775390625e-8f; // m * 2^-24, exact
        return sign ? -v : v;
    }
    if (e == 31) return cuemu::from<float>(sign | 0x7f800000u | (m << 13));
    return cuemu::from<float>(sign | ((e + 112u) << 23) | (m << 13));
}
inline unsigned short __half_as_ushort(__half h) { return h.x; }
inline __half __ushort_as_half(unsigned short u) { return __half{u}; }

// ---- nvcuda::wmma (mma.h): m16n16k16, BF16 operands, FP32 accumulator; see the header comment ----
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static_assert(M == 16 && N == 16 && K == 16, "the emulator has wmma's m16n16k16 shape only");
    static_assert(std::is_same_v<Use, accumulator> ? std::is_same_v<T, float> : std::is_same_v<T, __nv_bfloat16>,
                  "the emulator has BF16 a/b and FP32 accumulator fragments only");
    enum { num_elements = 8 };
    T x[8];
};

namespace detail {
/* This warp's exchange area in the running block (one block runs on one OS thread at a time). */
struct Lane {
    const void *ptr;
    unsigned ldm;
    int layout;
};
struct Area {
    Lane lane[32];
    float a[256], b[256];
};
inline Area &area() {
    static thread_local Area areas[32];
    return areas[cuemu::linear_thread() / 32];
}
inline unsigned lane() { return cuemu::linear_thread() % 32; }
/* A load or store: every lane of the warp arrives with the same pointer, ldm and layout (checked), and they are
 * valid for wmma; after this every lane's earlier memory operations are visible to the others. */
inline void converge(const char *what, const void *p, unsigned ldm, int layout, size_t elementBytes) {
    Area &ar = area();
    ar.lane[lane()] = Lane{p, ldm, layout};
    __syncwarp();
    const Lane l0 = ar.lane[0];
    __syncwarp(); // nobody overwrites the area before every lane has read lane 0's
    if (l0.ptr != p || l0.ldm != ldm || l0.layout != layout) cuemu::fail(what);
    if (((uintptr_t) p & 31u) != 0) cuemu::fail("wmma: a load/store pointer that is not 32-byte aligned");
    if ((ldm * elementBytes) % 16 != 0) cuemu::fail("wmma: an ldm that is not a multiple of 16 bytes");
}
template <class T> inline T &at(T *p, unsigned ldm, bool rowMajor, int r, int c) { return rowMajor ? p[r * ldm + c] : p[c * ldm + r]; }
inline float value(float v) { return v; }
inline float value(__nv_bfloat16 v) { return __bfloat162float(v); }
} // namespace detail

inline void fill_fragment(fragment<accumulator, 16, 16, 16, float> &f, float v) {
    for (int e = 0; e < 8; e++) f.x[e] = v;
}

template <class Use, class L>
inline void load_matrix_sync(fragment<Use, 16, 16, 16, __nv_bfloat16, L> &f, const __nv_bfloat16 *p, unsigned ldm) {
    static_assert(std::is_same_v<L, row_major> || std::is_same_v<L, col_major>, "a/b fragments name their layout");
    constexpr bool rowMajor = std::is_same_v<L, row_major>;
    detail::converge("wmma::load_matrix_sync: the lanes of a warp gave different pointers or ldm", p, ldm, rowMajor, sizeof *p);
    const unsigned l = detail::lane();
    for (int e = 0; e < 8; e++) {
        const int i = (int) l * 8 + e;
        f.x[e] = detail::at(p, ldm, rowMajor, i / 16, i % 16);
    }
}

inline void store_matrix_sync(float *p, const fragment<accumulator, 16, 16, 16, float> &f, unsigned ldm, layout_t layout) {
    detail::converge("wmma::store_matrix_sync: the lanes of a warp gave different pointers, ldm or layouts", p, ldm,
                     (int) layout, sizeof *p);
    const unsigned l = detail::lane();
    for (int e = 0; e < 8; e++) {
        const int i = (int) l * 8 + e;
        detail::at(p, ldm, layout == mem_row_major, i / 16, i % 16) = f.x[e];
    }
}

/* d = a b + c: each lane puts its a and b elements in the warp's area, then computes its own 8 of d. */
template <class LA, class LB>
inline void mma_sync(fragment<accumulator, 16, 16, 16, float> &d, const fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LA> &a,
                     const fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LB> &b, const fragment<accumulator, 16, 16, 16, float> &c) {
    detail::Area &ar = detail::area();
    const unsigned l = detail::lane();
    for (int e = 0; e < 8; e++) {
        ar.a[l * 8 + e] = detail::value(a.x[e]);
        ar.b[l * 8 + e] = detail::value(b.x[e]);
    }
    __syncwarp();
    float out[8];
    for (int e = 0; e < 8; e++) {
        const int i = (int) l * 8 + e, r = i / 16, col = i % 16;
        float s = c.x[e];
        for (int k = 0; k < 16; k++) s = fmaf(ar.a[r * 16 + k], ar.b[k * 16 + col], s);
        out[e] = s;
    }
    __syncwarp(); // nobody overwrites the area before every lane has read it
    for (int e = 0; e < 8; e++) d.x[e] = out[e];
}
} // namespace wmma
} // namespace nvcuda

#endif
