// goss_cuda.h — what the kernels of this folder need beyond CUDA C++ so that the same source compiles with
// nvcc (PTX for the GPU) and with g++ under the CPU emulator (native/cuda-emu/cuda_emu.h, which defines
// GOSS_CUDA_EMU). Only spellings that plain C++ cannot express live here.
#ifndef GOSS_CUDA_H
#define GOSS_CUDA_H

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

#endif
