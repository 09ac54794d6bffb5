/* Residual add: out[i] = a[i] + b[i] (out may be a or b). Global size n. */
typedef struct { long n; } AddParams;

__kernel void add(__global const float* a, __global const float* b, __global float* out, const AddParams p) {
    long i = get_global_id(0);
    if (i < p.n) out[i] = a[i] + b[i];
}
