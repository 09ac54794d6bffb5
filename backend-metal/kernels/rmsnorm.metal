// RMSNorm over the rows of a row-major [rows, n] float matrix (MetalBackend.rmsNorm).
//
// Reference: ms = (1/n) * sum_j x[r, j]^2;  y[r, i] = x[r, i] * rsqrt(ms + eps) * scale[i]

#include "common.h"

// ---- RMSNorm: one threadgroup per row ---------------------------------------------------------------
struct NormParams { uint cols; float eps; };

KERNEL(rmsnorm)(BUF(device const float *, x, 0), BUF(device const float *, scale, 1), BUF(device float *, out, 2),
                PARAMS(NormParams, p, 3), TG_POS(row), TID(tid), TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    TG_ARRAY(float, partial, 32);
    device const float *xr = x + row * p.cols;
    float ss = 0.0f;
    for (uint c = tid; c < p.cols; c += nt) ss += xr[c] * xr[c];
    ss = simd_sum(ss);
    if (lane == 0) partial[sg] = ss;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float total = 0.0f;
    uint nsg = (nt + 31) / 32;
    for (uint i = 0; i < nsg; i++) total += partial[i];
    float inv = rsqrt(total / float(p.cols) + p.eps);
    for (uint c = tid; c < p.cols; c += nt) out[row * p.cols + c] = xr[c] * inv * scale[c];
}

// ---- add_rmsnorm: the residual add fused with the RMSNorm after it (MetalBackend.addRmsNorm) ------------------------
// Reference: sum[r, i] = x[r, i] + y[r, i];  out[r, i] = sum[r, i] * rsqrt((1/n) * sum_j sum[r, j]^2 + eps) * scale[i]
// One threadgroup per row, rmsnorm's size (GOSS_METAL_RMSNORM_TG). sum may be x or y, out may be sum: each thread
// reads and writes only its own columns, in the same order in both loops (rmsnorm's sums exactly).
KERNEL(add_rmsnorm)(BUF(device const float *, x, 0), BUF(device const float *, y, 1), BUF(device const float *, scale, 2),
                    BUF(device float *, sum, 3), BUF(device float *, out, 4), PARAMS(NormParams, p, 5), TG_POS(row), TID(tid),
                    TG_SIZE(nt), SIMD_LANE(lane), SIMD_GROUP(sg)) {
    TG_ARRAY(float, partial, 32);
    device const float *xr = x + row * p.cols;
    device const float *yr = y + row * p.cols;
    device float *sr = sum + row * p.cols;
    float ss = 0.0f;
    for (uint c = tid; c < p.cols; c += nt) {
        float v = xr[c] + yr[c];
        sr[c] = v;
        ss += v * v;
    }
    ss = simd_sum(ss);
    if (lane == 0) partial[sg] = ss;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float total = 0.0f;
    uint nsg = (nt + 31) / 32;
    for (uint i = 0; i < nsg; i++) total += partial[i];
    float inv = rsqrt(total / float(p.cols) + p.eps);
    for (uint c = tid; c < p.cols; c += nt) out[row * p.cols + c] = sr[c] * inv * scale[c];
}
