// RoPE, half-split pairs, in place on the query and key heads of rows row0 .. row0 + T - 1, in one launch
// (io.gossgpu.device.RopeOp;
// the same buffers and RopeParams in rope.cl and rope.metal).
//
// Reference: per row row0 + t (position p = start + t), head h, j < hd/2:
//   x1 = x[h*hd + j], x2 = x[h*hd + hd/2 + j], cos = tab[p*hd + 2j], sin = tab[p*hd + 2j + 1]
//   (Rope.cosSinTable: angles in double on the host, YaRN concentration applied)
//   x[h*hd + j] = x1*cos - x2*sin,  x[h*hd + hd/2 + j] = x2*cos + x1*sin
// The position `start` of row 0 is read from device memory (pos[0], the backend's step buffer), not
// passed by value, so that a decode step captured as a CUDA graph replays unchanged for the next token.

#include "common.cuh"

// ---- rope: grid (qHeads + kHeads, min(T, 65535)), block 32..1024 (threads loop over j < hd/2) -----------------------
// Block x < qHeads rotates query head x of q (rows of qHeads * hd values), the others key head x - qHeads of k.
struct RopeParams {
    int tokens;  // T: rows to rotate
    int qHeads;  // query heads per row of q
    int kHeads;  // key heads per row of k
    int headDim; // hd
    int row0;    // the first row rotated
};

// Rows of head h of x (cols values per row), rotated at positions start + t.
__device__ __forceinline__ void rope_head(float* x, const float* __restrict__ table, int start, int h, int hd, int cols, int row0,
                                          int T)
{
    const int half = hd / 2;
    for (int t = blockIdx.y; t < T; t += gridDim.y) {
        float* b = x + (size_t) (row0 + t) * cols + (size_t) h * hd;
        const float* cs = table + (size_t) (start + t) * hd;
        for (int j = threadIdx.x; j < half; j += blockDim.x) {
            const float c = cs[2 * j];
            const float s = cs[2 * j + 1];
            const float x1 = b[j];
            const float x2 = b[half + j];
            b[j] = fmaf(x1, c, -x2 * s);
            b[half + j] = fmaf(x2, c, x1 * s);
        }
    }
}

extern "C" __global__ void rope(float* q, float* k, const float* __restrict__ table, const int* __restrict__ pos, const RopeParams p)
{
    const int hd = p.headDim;
    const int h = blockIdx.x;
    if (h < p.qHeads) {
        rope_head(q, table, pos[0], h, hd, p.qHeads * hd, p.row0, p.tokens);
    } else {
        rope_head(k, table, pos[0], h - p.qHeads, hd, p.kHeads * hd, p.row0, p.tokens);
    }
}
