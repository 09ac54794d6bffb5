// Greedy pick on the device (cuda backend, SampleLauncher): the id of each row's largest logit.
//
// Reference:
//   out[t] = argmax_r logits[t, r], ties -> lower id

#include "common.cuh"

// ---- argmax: one block per row; grid (min(rows, 65535)), block B ---------------------------------
// Each thread scans its values in ascending order keeping the first of the largest (argmax_pick); the reduction
// (warp_argmax, then across the warps) keeps the larger value, or on equal values the lower id.

struct ArgmaxParams {
    int rows;
    int vocab; // V
};

extern "C" __global__ void argmax(const float* __restrict__ logits, int* __restrict__ out, const ArgmaxParams p)
{
    const int rows = p.rows, V = p.vocab;
    __shared__ float sv[32];
    __shared__ int si[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    for (int t = blockIdx.x; t < rows; t += gridDim.x) {
        const float* l = logits + (size_t) t * V;
        float bv = -INFINITY;
        int bi = -1;
        if ((V & 3) == 0) {
            // 16-byte loads (the row starts at a multiple of 16 bytes): thread i takes values 4i .. 4i + 3, then
            // 4(i + B) .., still ascending, with several loads in flight (one block must read the whole row)
            const float4* l4 = (const float4*) l;
            GOSS_PRAGMA(unroll 4)
            for (int r = threadIdx.x; r < V / 4; r += blockDim.x) {
                const float4 x = l4[r];
                argmax_pick(bv, bi, x.x, 4 * r);
                argmax_pick(bv, bi, x.y, 4 * r + 1);
                argmax_pick(bv, bi, x.z, 4 * r + 2);
                argmax_pick(bv, bi, x.w, 4 * r + 3);
            }
        } else {
            for (int r = threadIdx.x; r < V; r += blockDim.x) {
                argmax_pick(bv, bi, l[r], r);
            }
        }
        warp_argmax(bv, bi);
        __syncthreads();
        if (lane == 0) {
            sv[warp] = bv;
            si[warp] = bi;
        }
        __syncthreads();
        if (warp == 0) {
            float v2 = lane < warps ? sv[lane] : -INFINITY;
            int i2 = lane < warps ? si[lane] : -1;
            warp_argmax(v2, i2);
            if (lane == 0) {
                out[t] = i2 < 0 ? 0 : i2;
            }
        }
    }
}
