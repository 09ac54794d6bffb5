/* Residual add: out[i] = a[i] + b[i] (out may be a or b). Global size n. */
__kernel void add(__global const float* a, __global const float* b, __global float* out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = a[i] + b[i];
}
