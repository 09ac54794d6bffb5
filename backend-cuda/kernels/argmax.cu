// Greedy pick on the device (cuda backend, SmallOps.argmax): the id of each row's largest logit, in one launch.
//
// Reference (TemperatureDraw.argmax):
//   out[t] = argmax_r logits[t, r], ties -> lower id; -1 (TemperatureDraw.NOT_FINITE) when the row holds NaN or an
//   infinity, so the executor's guard stops generation as it does on non-finite logits read back to the host

#include "common.cuh"

// ---- argmax: grid (chunks, min(rows, 65535)), block B; one pass over the row --------------------------------------
// The row is cut into gridDim.x chunks of a multiple of 4 values, one block each, so the whole GPU reads the row at
// once (one block per row took 101 us of a 201088-id row on the H100, latency-bound). Each block keeps the first of
// its largest values (argmax_pick, then warp_argmax and across the warps) and writes it to its slot of the row's
// record in `work`; the block that finishes last (a counter per row, atomicAdd after __threadfence) reduces the
// record's chunks in chunk order and writes out[t], then sets the counter back to 0 for the next launch (the decode
// step's graph replays it). work: per row 2 + 2 * chunks unsigned, [counter, non-finite flag, (value bits, id) per chunk];
// its counters are zero before the first launch (the launcher clears the buffer when it gets a new one). The word
// after the counter is the row's non-finite flag: a thread that read NaN/Inf sets it (atomicMax, before its block's
// count), the last block writes -1 when it is set and clears it with the counter.

struct ArgmaxParams {
    int rows;
    int vocab; // V
};

// argmax_pick of the finite values; a NaN or an infinity (|x| <= FLT_MAX fails) marks the row instead.
__device__ __forceinline__ void argmax_take(float& bv, int& bi, bool& bad, float x, int r)
{
    if (!(fabsf(x) <= 3.402823466e38f)) {
        bad = true;
        return;
    }
    argmax_pick(bv, bi, x, r);
}

// The block's argmax of every thread's (bv, bi), in thread 0 (sv, si: 32 slots of shared memory).
__device__ __forceinline__ void block_argmax(float& bv, int& bi, float* sv, int* si)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    warp_argmax(bv, bi);
    __syncthreads(); // the slots' previous use is over
    if (lane == 0) {
        sv[warp] = bv;
        si[warp] = bi;
    }
    __syncthreads();
    if (warp == 0) {
        bv = lane < warps ? sv[lane] : -INFINITY;
        bi = lane < warps ? si[lane] : -1;
        warp_argmax(bv, bi);
    }
}

extern "C" __global__ void argmax(const float* __restrict__ logits, int* __restrict__ out, unsigned* work, const ArgmaxParams p)
{
    const int rows = p.rows, V = p.vocab;
    const int chunks = gridDim.x;
    const int chunk = ((V + 3) / 4 + chunks - 1) / chunks * 4; // values per block, a multiple of 4
    const int r0 = min(V, (int) blockIdx.x * chunk), r1 = min(V, r0 + chunk);
    __shared__ float sv[32];
    __shared__ int si[32];
    __shared__ int last;
    for (int t = blockIdx.y; t < rows; t += gridDim.y) {
        const float* l = logits + (size_t) t * V;
        unsigned* rec = work + (size_t) t * (2 + 2 * chunks);
        float bv = -INFINITY;
        int bi = -1;
        bool bad = false;
        if ((V & 3) == 0) {
            // 16-byte loads (rows and chunks start at multiples of 16 bytes), each thread's values in ascending order
            const float4* l4 = (const float4*) l;
            GOSS_PRAGMA(unroll 4)
            for (int r = r0 / 4 + threadIdx.x; r < r1 / 4; r += blockDim.x) {
                const float4 x = l4[r];
                argmax_take(bv, bi, bad, x.x, 4 * r);
                argmax_take(bv, bi, bad, x.y, 4 * r + 1);
                argmax_take(bv, bi, bad, x.z, 4 * r + 2);
                argmax_take(bv, bi, bad, x.w, 4 * r + 3);
            }
        } else {
            for (int r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
                argmax_take(bv, bi, bad, l[r], r);
            }
        }
        if (bad) {
            atomicMax(rec + 1, 1u); // before block_argmax's barriers, so before thread 0 counts the block
        }
        block_argmax(bv, bi, sv, si);
        if (threadIdx.x == 0) {
            rec[2 + 2 * blockIdx.x] = __float_as_uint(bv);
            rec[3 + 2 * blockIdx.x] = (unsigned) bi;
            __threadfence(); // the slot before the count: the last block sees every slot
            last = atomicAdd(rec, 1u) == (unsigned) chunks - 1;
            __threadfence();
        }
        __syncthreads();
        if (last) {
            // the chunks' results, each thread its chunks in ascending order (volatile: written by other blocks)
            const volatile unsigned* slots = rec + 2;
            bv = -INFINITY;
            bi = -1;
            for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
                argmax_pick(bv, bi, __uint_as_float(slots[2 * c]), (int) slots[2 * c + 1]);
            }
            block_argmax(bv, bi, sv, si);
            if (threadIdx.x == 0) {
                out[t] = ((const volatile unsigned*) rec)[1] != 0u ? -1 : bi < 0 ? 0 : bi;
                rec[0] = 0u; // ready for the next launch
                rec[1] = 0u;
            }
        }
        __syncthreads(); // `last` and the slots of sv/si are read before the next row's writes
    }
}
