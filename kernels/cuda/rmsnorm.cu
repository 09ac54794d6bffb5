// RMSNorm over the rows of a row-major [rows, n] float matrix.
//
// Reference (gpt-oss RMSNorm, eps = 1e-5 in the model):
//   for every row r:
//     ms      = (1/n) * sum_{j<n} x[r,j]^2          (float accumulation)
//     y[r,i]  = (x[r,i] * rsqrt(ms + eps)) * scale[i]
//
// Launch: grid = (rows, 1, 1), one block per row.
//         block = (B, 1, 1) with B a multiple of 32 and 32 <= B <= 1024 (tuning knob
//         GOSS_CUDA_RMSNORM_BLOCK); no dynamic shared memory.
// x and y may be the same buffer (in-place); scale has n elements.
// Built without --use_fast_math: the division is IEEE, rsqrtf is the usual <= 2 ulp version.

#include "common.cuh"

struct NormParams {
    int cols;  // n
    float eps;
};

// rsqrt(ms + eps) of one row from each thread's partial sum of squares: reduced within the warp, then across the
// (at most 32) warps of the block. Every thread of the block calls it (it synchronises) and gets the same value.
__device__ __forceinline__ float block_inv_rms(float ss, int n, float eps)
{
    ss = warp_sum(ss);
    __shared__ float partial[32];
    __shared__ float inv_rms;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    if (lane == 0) {
        partial[warp] = ss;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        float s = lane < warps ? partial[lane] : 0.0f;
        s = warp_sum(s);
        if (lane == 0) {
            inv_rms = rsqrtf(s / (float) n + eps);
        }
    }
    __syncthreads();
    return inv_rms;
}

extern "C" __global__ void rmsnorm(const float* x,
                                       const float* __restrict__ scale,
                                       float* y,
                                       const NormParams p)
{
    const int n = p.cols;
    const float eps = p.eps;
    if (n <= 0) {
        return;
    }
    const size_t row = blockIdx.x;
    const float* xr = x + row * (size_t) n;
    float* yr = y + row * (size_t) n;

    // Each thread sums the squares of a strided slice of the row.
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = xr[i];
        sum = fmaf(v, v, sum);
    }

    const float r = block_inv_rms(sum, n, eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        yr[i] = (xr[i] * r) * scale[i];
    }
}

// ---- add_rmsnorm: the residual add fused with the RMSNorm after it (Backend.addRmsNorm) ---------------------------
// Reference (add, then rmsnorm of the sum):
//   sum[r,i] = x[r,i] + y[r,i]
//   out[r,i] = (sum[r,i] * rsqrt((1/n) * sum_j sum[r,j]^2 + eps)) * scale[i]
// Launch: as rmsnorm (grid = (rows, 1, 1), block B = GOSS_CUDA_RMSNORM_BLOCK). One launch and one read of the row
// less than add then rmsnorm. sum may be x or y, out may be sum: each thread reads and writes only its own columns,
// in the same order in both loops, so the values and their sums of squares are rmsnorm's bit for bit.

extern "C" __global__ void add_rmsnorm(const float* x,
                                       const float* y,
                                       const float* __restrict__ scale,
                                       float* sum,
                                       float* out,
                                       const NormParams p)
{
    const int n = p.cols;
    const float eps = p.eps;
    if (n <= 0) {
        return;
    }
    const size_t row = blockIdx.x;
    const float* xr = x + row * (size_t) n;
    const float* yr = y + row * (size_t) n;
    float* sr = sum + row * (size_t) n;
    float* outr = out + row * (size_t) n;

    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = xr[i] + yr[i];
        sr[i] = v;
        ss = fmaf(v, v, ss);
    }

    const float r = block_inv_rms(ss, n, eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        outr[i] = (sr[i] * r) * scale[i];
    }
}
