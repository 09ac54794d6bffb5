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
