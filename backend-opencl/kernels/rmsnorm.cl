/*
 * RMSNorm: out[i, c] = x[i, c] / sqrt(mean_c'(x[i, c']^2) + eps) * scale[c].
 * One work-group per row; the sum of squares is a float tree reduction. out may alias x
 * (each work item rewrites only the columns it read). Local size = GOSS_OPENCL_RMSNORM_WG.
 */
typedef struct { int cols; float eps; } NormParams;

__kernel void rmsnorm(__global const float* x, __global const float* scale, __global float* out,
                      __local float* scratch, const NormParams p) {
    const int C = p.cols;
    const float eps = p.eps;
    int row = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    __global const float* xr = x + (long) row * C;
    float s = 0.0f;
    for (int c = lid; c < C; c += wg) s = fma(xr[c], xr[c], s);
    float total = wg_sum(scratch, s);
    float inv = 1.0f / sqrt(total / (float) C + eps);
    __global float* o = out + (long) row * C;
    for (int c = lid; c < C; c += wg) o[c] = xr[c] * inv * scale[c];
}

/*
 * add_rmsnorm: the residual add fused with the RMSNorm after it (Backend.addRmsNorm), one launch instead of two:
 *   sum[i, c] = x[i, c] + y[i, c];  out[i, c] = sum[i, c] / sqrt(mean_c'(sum[i, c']^2) + eps) * scale[c].
 * Launched as rmsnorm (one work-group per row, GOSS_OPENCL_RMSNORM_WG, the same scratch). sum may be x or y, out may be
 * sum: each work item reads and writes only its own columns, in the same order in both loops (rmsnorm's sums exactly).
 */
__kernel void add_rmsnorm(__global const float* x, __global const float* y, __global const float* scale, __global float* sum,
                          __global float* out, __local float* scratch, const NormParams p) {
    const int C = p.cols;
    const float eps = p.eps;
    int row = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    __global const float* xr = x + (long) row * C;
    __global const float* yr = y + (long) row * C;
    __global float* sr = sum + (long) row * C;
    float s = 0.0f;
    for (int c = lid; c < C; c += wg) {
        float v = xr[c] + yr[c];
        sr[c] = v;
        s = fma(v, v, s);
    }
    float total = wg_sum(scratch, s);
    float inv = 1.0f / sqrt(total / (float) C + eps);
    __global float* o = out + (long) row * C;
    for (int c = lid; c < C; c += wg) o[c] = sr[c] * inv * scale[c];
}
