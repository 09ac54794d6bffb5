/*
 * cuda_emu.h — the subset of CUDA C++ that goss-gpu's kernels (the .cu files of kernels/cuda) use, for compiling them
 * as host C++ (g++) into the emulated CUDA device behind the fake driver
 * (test-harness/fake-driver). See test-harness/cuda-emu/README.md.
 *
 *   - __global__/__device__/__host__/__constant__ are empty, __forceinline__ is inline (one flat address space).
 *   - __shared__ is `static thread_local`: a block's threads are fibers on one OS thread and share it; blocks
 *     running in parallel are on different OS threads. Dynamic shared memory: DYNAMIC_SHARED (kernels/cuda/common.cuh).
 *   - threadIdx/blockIdx/blockDim/gridDim come from the running fiber (uint3, x fastest; warps are 32
 *     consecutive linear thread indices).
 *   - __syncthreads() is a block-wide rendezvous; __syncwarp and __shfl_sync/_up/_down/_xor (float, int,
 *     unsigned; width 1..32) are rendezvous of the lanes named in the mask, the exchange done when all have
 *     arrived. A barrier not reached by every thread, a mask naming a lane that returned or waits elsewhere,
 *     or a source lane outside the mask fails the launch with an error naming the kernel.
 *   - atomicAdd (float, int, unsigned), atomicMax (int, unsigned): real atomics across OS threads.
 *   - __ldg, the bit casts, fmaf/expf/ldexpf/fminf/fmaxf/sqrtf (math.h), rsqrtf, min/max, INFINITY.
 * Anything else (vector types, half/bf16 intrinsics, cooperative groups) fails to compile: add it here.
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

// ---- loads, bit casts, math ----
template <class T> inline T __ldg(const T *p) { return *p; }
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

#endif
