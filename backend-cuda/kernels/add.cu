// Element-wise add of two float vectors (the residual add).
//
// Reference:
//   y[i] = a[i] + b[i]   for 0 <= i < n
//
// Launch: any 1-D grid and block (grid-stride loop), e.g. block = 256 and
//         grid = min(ceil(n / 256), 65535 * 4). n is a 64-bit count.
// y may alias a or b (in-place residual add), so no __restrict__ here.

struct AddParams {
    long long n; // values
};

extern "C" __global__ void add(const float* a, const float* b, float* y, const AddParams p)
{
    const long long n = p.n;
    const long long stride = (long long) gridDim.x * blockDim.x;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a[i] + b[i];
    }
}
