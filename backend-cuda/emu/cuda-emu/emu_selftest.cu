// Kernels that test the emulated CUDA device itself (barrier, shuffles, atomics, shared memory, indices, and
// that misuse is reported); compiled into the fake driver next to backend-cuda/kernels and run by cuda_emu_selftest.cpp.
// CUDA C++ as for nvcc; only compiled by the emulator.
#include "common.cuh"

// out[b*n + i] = in[b*n + n-1-i] through a static __shared__ array: only right if __syncthreads really waits.
extern "C" __global__ void emu_test_reverse(const float* in, float* out)
{
    __shared__ float tmp[1024];
    const int n = blockDim.x;
    const size_t base = (size_t) blockIdx.x * n;
    tmp[threadIdx.x] = in[base + threadIdx.x];
    __syncthreads();
    out[base + threadIdx.x] = tmp[n - 1 - threadIdx.x];
}

// The same through dynamic shared memory, twice, doubling on the way.
extern "C" __global__ void emu_test_dynamic_shared(const float* in, float* out)
{
    DYNAMIC_SHARED(float, tmp);
    const int n = blockDim.x, t = threadIdx.x;
    const size_t base = (size_t) blockIdx.x * n;
    tmp[t] = in[base + t];
    __syncthreads();
    const float r = tmp[n - 1 - t];
    __syncthreads();
    tmp[t] = 2.0f * r;
    __syncthreads();
    out[base + t] = tmp[n - 1 - t];
}

// Per thread (lane l): xor-tree sum of l, shfl_down(l, 3), shfl_up(l, 2), shfl(l*10, 5) as int,
// shfl_xor(unsigned l, 1), shfl(l, 0, width 8), and a __syncwarp in between.
extern "C" __global__ void emu_test_shuffles(float* out)
{
    const int t = threadIdx.x, lane = t & 31;
    float s = (float) lane;
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
    }
    out[t * 6 + 0] = s;
    out[t * 6 + 1] = __shfl_down_sync(0xffffffffu, (float) lane, 3);
    __syncwarp();
    out[t * 6 + 2] = __shfl_up_sync(0xffffffffu, (float) lane, 2);
    out[t * 6 + 3] = (float) __shfl_sync(0xffffffffu, lane * 10, 5);
    out[t * 6 + 4] = (float) __shfl_xor_sync(0xffffffffu, (unsigned) lane, 1);
    out[t * 6 + 5] = __shfl_sync(0xffffffffu, (float) lane, 0, 8);
}

// Every thread of every block adds 1 (int), 0.5 (float) and maxes its global index: counts across OS threads.
extern "C" __global__ void emu_test_atomics(int* count, float* sum, int* maxIndex)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(count, 1);
    atomicAdd(sum, 0.5f);
    atomicMax(maxIndex, __ldg(&g));
}

// out[linear global thread] = packed (threadIdx, blockIdx) of a 3-D launch.
extern "C" __global__ void emu_test_indices(int* out)
{
    const int tl = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const int bl = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const int n = blockDim.x * blockDim.y * blockDim.z;
    out[bl * n + tl] = threadIdx.x | threadIdx.y << 4 | threadIdx.z << 8 | blockIdx.x << 12 | blockIdx.y << 16 | blockIdx.z << 20;
}

// Half the block returns before the barrier: a hang on a GPU; the emulator must report it.
extern "C" __global__ void emu_test_divergent_barrier(float* out)
{
    if (threadIdx.x < 16) {
        return;
    }
    __syncthreads();
    out[threadIdx.x] = 1.0f;
}

// Lanes 0..7 shuffle with a full mask while the others return: the mask names lanes that exited.
extern "C" __global__ void emu_test_divergent_shuffle(float* out)
{
    if (threadIdx.x < 8) {
        out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
    }
}

// Lanes 0..15 exchange with mask 0xffff (fine), lane 15 reading lane 16 is not: xor 16 leaves the mask.
extern "C" __global__ void emu_test_mask_outside(float* out)
{
    if (threadIdx.x < 16) {
        out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, (float) threadIdx.x, 1);
        out[threadIdx.x] += __shfl_sync(0x0000ffffu, (float) threadIdx.x, 16 + (int) threadIdx.x % 2, 32);
    }
}

// A missing barrier, on purpose: thread t publishes in[t] and reads its left neighbour's slot with no
// __syncthreads in between. Right only when thread t-1 runs first (the forward order); GOSS_EMU_ORDER=reverse
// must expose it, and GOSS_EMU_POISON=1 turns the unwritten slot into NaN.
extern "C" __global__ void emu_test_missing_barrier(const float* in, float* out)
{
    DYNAMIC_SHARED(float, tmp);
    const int t = threadIdx.x;
    tmp[t] = in[t];
    out[t] = t > 0 ? tmp[t - 1] : in[0];
}

// The last thread reads slot blockDim.x of dynamic shared memory (launched with blockDim.x + 1 floats), which
// no thread of the block writes:
// NaN under GOSS_EMU_POISON=1, whatever the order.
extern "C" __global__ void emu_test_unwritten_shared(float* out)
{
    DYNAMIC_SHARED(float, tmp);
    tmp[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = tmp[threadIdx.x + 1];
}

// wmma's scalar twin: one warp, C = 1 + A B with A 16 x 32 (row major) and B 32 x 16 (column major: b[n][k]) as BF16
// in two k steps; out[0..255] = C row major, out[256..511] = C column major, out[512..515] = BF16 roundings.
struct alignas(32) EmuWmmaTiles {
    __nv_bfloat16 a[16 * 32];
    __nv_bfloat16 b[16 * 40]; // b[n * 40 + k]: ldm 40
};

extern "C" __global__ void emu_test_wmma(const float* a, const float* b, float* out)
{
    namespace wmma = nvcuda::wmma;
    __shared__ EmuWmmaTiles t;
    for (int i = threadIdx.x; i < 16 * 32; i += 32) {
        t.a[i] = __float2bfloat16(a[i]);
        t.b[(i / 32) * 40 + i % 32] = __float2bfloat16(b[i]);
    }
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 1.0f);
    for (int k = 0; k < 32; k += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, t.a + k, 32); // the loads see every lane's stores above (a warp rendezvous)
        wmma::load_matrix_sync(fb, t.b + k, 40);
        wmma::mma_sync(c, fa, fb, c);
    }
    wmma::store_matrix_sync(out, c, 16, wmma::mem_row_major);
    wmma::store_matrix_sync(out + 256, c, 16, wmma::mem_col_major);
    if (threadIdx.x < 4) {
        const float v[4] = {1.00390625f, 1.01171875f, -3.0e38f, 1.0f + 1.0f / 256 + 1.0f / 65536};
        out[512 + threadIdx.x] = __bfloat162float(__float2bfloat16(v[threadIdx.x]));
    }
}

// Lane-dependent pointers to a wmma load: undefined on a GPU; the emulator must fail the launch.
extern "C" __global__ void emu_test_wmma_lane_pointers(float* out)
{
    namespace wmma = nvcuda::wmma;
    __shared__ EmuWmmaTiles t;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, t.a + 16 * (threadIdx.x & 1), 32);
    out[threadIdx.x] = __bfloat162float(fa.x[0]);
}

// out[i] = __byte_perm(0x87654321, 0xfedcba98, sel[i]) for the selectors cuda_emu_selftest.cpp lists (prmt.b32).
extern "C" __global__ void emu_test_byte_perm(const unsigned* sel, unsigned* out)
{
    out[threadIdx.x] = __byte_perm(0x87654321u, 0xfedcba98u, sel[threadIdx.x]);
}

// F16 conversions (cuda_fp16.h): hb[i] = bits of __float2half_rn(in[i]), rt[i] = __half2float of them; n[0] numbers,
// grid-strided over one dimension.
extern "C" __global__ void emu_test_half(const float* in, unsigned* hb, float* rt, const int* count)
{
    const int n = count[0];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const __half h = __float2half_rn(in[i]);
        hb[i] = __half_as_ushort(h);
        rt[i] = __half2float(__ushort_as_half(__half_as_ushort(h)));
    }
}
