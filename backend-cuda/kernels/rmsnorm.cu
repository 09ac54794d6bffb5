// RMSNorm over the rows of a row-major [rows, n] float matrix.
//
// Reference (gpt-oss RMSNorm, eps = 1e-5 in the model):
//   for every row r:
//     ms      = (1/n) * sum_{j<n} x[r,j]^2          (float accumulation)
//     y[r,i]  = (x[r,i] * rsqrt(ms + eps)) * scale[i]
//
// Launch: grid = (rows, 1, 1), one block per row; rows of up to 16 * B columns (a multiple of 4) held in registers
// between the sum of squares and the scaling (see norm_in_registers).
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

// Which row path a block takes: in registers when n is a multiple of 4 of at most NORM_CHUNKS float4 per thread and
// every pointer is 16-byte aligned (one read and one write of each element), else two passes over memory. Both paths
// give thread t the float4 chunks c = t, t + B, t + 2B, ... (columns 4c .. 4c + 3) and sum their squares in that
// order, so the result does not depend on the path, and rmsnorm and add_rmsnorm agree bit for bit.
#define NORM_CHUNKS 4 // n <= 16 * B in registers: 4096 columns at B = 256 (gpt-oss: 2880)

__device__ __forceinline__ bool norm_in_registers(int n, size_t addresses)
{
    return (n & 3) == 0 && n <= 4 * NORM_CHUNKS * (int) blockDim.x && (addresses & 15) == 0;
}

// ss + v.x^2 + v.y^2 + v.z^2 + v.w^2, in that order (the order of both paths and both kernels).
__device__ __forceinline__ float add_squares(float4 v, float ss)
{
    ss = fmaf(v.x, v.x, ss);
    ss = fmaf(v.y, v.y, ss);
    ss = fmaf(v.z, v.z, ss);
    return fmaf(v.w, v.w, ss);
}

// The register path's output: chunk c = t + u B of the row (c < n4) is (v[u] * r) * s[u].
__device__ __forceinline__ void norm_store(const float4* v, const float4* s, float r, float* out, int n4)
{
    for (int u = 0; u < NORM_CHUNKS; u++) {
        const int c = threadIdx.x + u * blockDim.x;
        if (c < n4) {
            float4 o;
            o.x = (v[u].x * r) * s[u].x;
            o.y = (v[u].y * r) * s[u].y;
            o.z = (v[u].z * r) * s[u].z;
            o.w = (v[u].w * r) * s[u].w;
            reinterpret_cast<float4*>(out)[c] = o;
        }
    }
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
    const int B = blockDim.x;
    const int tid = threadIdx.x;

    if (norm_in_registers(n, (size_t) xr | (size_t) yr | (size_t) scale)) {
        const int n4 = n >> 2;
        float4 v[NORM_CHUNKS] = {}, s[NORM_CHUNKS] = {};
        for (int u = 0; u < NORM_CHUNKS; u++) { // all loads first: in flight together
            const int c = tid + u * B;
            if (c < n4) {
                v[u] = reinterpret_cast<const float4*>(xr)[c];
                s[u] = reinterpret_cast<const float4*>(scale)[c];
            }
        }
        float sum = 0.0f;
        for (int u = 0; u < NORM_CHUNKS; u++) {
            sum = add_squares(v[u], sum); // chunks past the row are zeros: fmaf(0, 0, sum) = sum
        }
        norm_store(v, s, block_inv_rms(sum, n, eps), yr, n4);
        return;
    }

    // Each thread sums the squares of its chunks of the row.
    float sum = 0.0f;
    for (int c = tid; 4 * c < n; c += B) {
        for (int i = 4 * c; i < min(4 * c + 4, n); i++) {
            const float v = xr[i];
            sum = fmaf(v, v, sum);
        }
    }

    const float r = block_inv_rms(sum, n, eps);
    for (int c = tid; 4 * c < n; c += B) {
        for (int i = 4 * c; i < min(4 * c + 4, n); i++) {
            yr[i] = (xr[i] * r) * scale[i];
        }
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
    const int B = blockDim.x;
    const int tid = threadIdx.x;

    if (norm_in_registers(n, (size_t) xr | (size_t) yr | (size_t) sr | (size_t) outr | (size_t) scale)) {
        const int n4 = n >> 2;
        float4 v[NORM_CHUNKS] = {}, w[NORM_CHUNKS] = {}, s[NORM_CHUNKS] = {};
        for (int u = 0; u < NORM_CHUNKS; u++) { // all loads before the first store (which may alias them): in flight together
            const int c = tid + u * B;
            if (c < n4) {
                v[u] = reinterpret_cast<const float4*>(xr)[c];
                w[u] = reinterpret_cast<const float4*>(yr)[c];
                s[u] = reinterpret_cast<const float4*>(scale)[c];
            }
        }
        float ss = 0.0f;
        for (int u = 0; u < NORM_CHUNKS; u++) {
            v[u].x += w[u].x;
            v[u].y += w[u].y;
            v[u].z += w[u].z;
            v[u].w += w[u].w;
            ss = add_squares(v[u], ss); // chunks past the row are zeros: fmaf(0, 0, ss) = ss
            if (tid + u * B < n4) {
                reinterpret_cast<float4*>(sr)[tid + u * B] = v[u];
            }
        }
        norm_store(v, s, block_inv_rms(ss, n, eps), outr, n4);
        return;
    }

    float ss = 0.0f;
    for (int c = tid; 4 * c < n; c += B) {
        for (int i = 4 * c; i < min(4 * c + 4, n); i++) {
            const float v = xr[i] + yr[i];
            sr[i] = v;
            ss = fmaf(v, v, ss);
        }
    }

    const float r = block_inv_rms(ss, n, eps);
    for (int c = tid; 4 * c < n; c += B) {
        for (int i = 4 * c; i < min(4 * c + 4, n); i++) {
            outr[i] = (sr[i] * r) * scale[i];
        }
    }
}
