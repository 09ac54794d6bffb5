// Plain temperature sampling of one row of logits l[row*V .. row*V + V-1] on the device, one int back to the host.
//
// Reference formula (io.gossgpu.generate.Sampler.sampleTemperature, the contract of Backend.sample):
//   m   = max_j l_j
//   e_j = exp((l_j - m) / T)                    (double)
//   Z   = sum_j e_j
//   id  = the smallest i with sum_{j<=i} e_j > u * Z; if rounding leaves u * Z uncrossed, the last i with e_i > 0.
//   id  = -1 (TemperatureDraw.NOT_FINITE) when Z is NaN (a NaN or +inf logit, or no finite one): the executor's guard
//         then stops generation instead of emitting a token.
// T (> 0) and u (in [0, 1)) are read from device memory, draws[2*draw] and draws[2*draw + 1] (written on the stream
// before the step's launches), so a decode step recorded as a CUDA graph replays unchanged with the next token's draw.
//
// Deterministic for a given V and grid (fixed summation order, no atomics). The ids are split into G chunks
// of C consecutive ids (chunk b = [b*C, min(V, (b+1)*C))):
// work (one buffer per sampled row): bsum[0 .. G-1] (double), then bmax[0 .. G-1] (float), then the id (int).
//   sample_max   grid (G), block SAMPLE_THREADS: bmax[b] = max of chunk b
//   sample_sums  grid (G), block SAMPLE_THREADS: m = max_b bmax[b]; bsum[b] = sum of e_j over chunk b
//                    (strided per thread, then a tree over the block)
//   sample_pick  grid (1), block SAMPLE_THREADS: thread 0 adds bsum in chunk order to find the chunk whose
//                    sum crosses u*Z; that chunk is cut into SAMPLE_THREADS contiguous pieces, each thread sums
//                    its piece in id order, thread 0 adds the pieces in order to find the crossed piece and scans
//                    it id by id. Where a finer sum no longer crosses (another summation order than the coarser
//                    one), the last id with e_j > 0 of that chunk / piece is taken: the result then differs from
//                    the host's sequential sum only where u*Z is within rounding (~(V+2) ulp of Z) of a
//                    cumulative sum.
// The same kernels, buffers and SampleParams as backend-opencl/kernels/sample.cl (io.gossgpu.device.SamplePipeline).

#include <math.h>

#include "common.cuh"

#define SAMPLE_THREADS 256

__device__ __forceinline__ double sample_e(float l, float m, double T)
{
    return exp(((double) l - (double) m) / T);
}

// The max of every thread's v, returned to every thread (s: SAMPLE_THREADS floats of shared memory).
__device__ float sample_block_max(float v, float* s)
{
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if ((int) threadIdx.x < w) {
            s[threadIdx.x] = fmaxf(s[threadIdx.x], s[threadIdx.x + w]);
        }
        __syncthreads();
    }
    float m = s[0];
    __syncthreads();
    return m;
}

// The max of bmax[0 .. G-1] into every thread (s: SAMPLE_THREADS floats of shared memory).
__device__ float sample_global_max(const float* __restrict__ bmax, int G, float* s)
{
    float v = -INFINITY;
    for (int b = threadIdx.x; b < G; b += blockDim.x) {
        v = fmaxf(v, bmax[b]);
    }
    return sample_block_max(v, s);
}

// The scalars of the three sampling kernels (sample_max does not read draw).
struct SampleParams {
    int row;    // the row of the logits buffer sampled
    int vocab;  // V
    int chunk;  // C: ids per chunk
    int chunks; // G
    int draw;   // which (T, u) pair of draws
};

// bsum, bmax and the id in one work buffer of G doubles, G floats and an int.
__device__ __forceinline__ float* sample_bmax(double* work, int G)
{
    return (float*) (work + G);
}

extern "C" __global__ void sample_max(const float* __restrict__ logits, double* __restrict__ work, const SampleParams p)
{
    const int V = p.vocab, C = p.chunk;
    const float* l = logits + (size_t) p.row * V;
    float* bmax = sample_bmax(work, p.chunks);
    __shared__ float s[SAMPLE_THREADS];
    const int lo = blockIdx.x * C;
    const int hi = min(V, lo + C);
    float v = -INFINITY;
    for (int j = lo + threadIdx.x; j < hi; j += blockDim.x) {
        v = fmaxf(v, l[j]);
    }
    const float m = sample_block_max(v, s);
    if (threadIdx.x == 0) {
        bmax[blockIdx.x] = m;
    }
}

extern "C" __global__ void sample_sums(const float* __restrict__ logits, const double* __restrict__ draws, double* __restrict__ work,
                                       const SampleParams p)
{
    const int V = p.vocab, C = p.chunk, G = p.chunks;
    const float* l = logits + (size_t) p.row * V;
    double* bsum = work;
    const float* bmax = sample_bmax(work, G);
    __shared__ float sm[SAMPLE_THREADS];
    __shared__ double s[SAMPLE_THREADS];
    const float m = sample_global_max(bmax, G, sm);
    const double T = draws[2 * p.draw];
    const int lo = blockIdx.x * C;
    const int hi = min(V, lo + C);
    double v = 0.0;
    for (int j = lo + threadIdx.x; j < hi; j += blockDim.x) {
        v += sample_e(l[j], m, T);
    }
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if ((int) threadIdx.x < w) {
            s[threadIdx.x] += s[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        bsum[blockIdx.x] = s[0];
    }
}

extern "C" __global__ void sample_pick(const float* __restrict__ logits, const double* __restrict__ draws, double* __restrict__ work,
                                       const SampleParams p)
{
    const int V = p.vocab, C = p.chunk, G = p.chunks;
    const float* l = logits + (size_t) p.row * V;
    const double* bsum = work;
    const float* bmax = sample_bmax(work, G);
    int* out = (int*) (bmax + G);
    __shared__ float sm[SAMPLE_THREADS];
    __shared__ double piece[SAMPLE_THREADS];
    __shared__ double s_base, s_target;
    __shared__ int s_chunk, s_crossed;
    const float m = sample_global_max(bmax, G, sm);
    const double T = draws[2 * p.draw];
    const double u = draws[2 * p.draw + 1];
    if (threadIdx.x == 0) {
        double z = 0.0;
        for (int b = 0; b < G; b++) {
            z += bsum[b];
        }
        const double target = u * z;
        double cum = 0.0, lastBase = 0.0;
        int chunk = -1, last = 0;
        for (int b = 0; b < G; b++) {
            if (bsum[b] > 0.0) {
                last = b;
                lastBase = cum;
            }
            if (cum + bsum[b] > target) {
                chunk = b;
                break;
            }
            cum += bsum[b];
        }
        s_crossed = chunk >= 0;
        s_chunk = chunk >= 0 ? chunk : last;
        s_base = chunk >= 0 ? cum : lastBase;
        s_target = target;
    }
    __syncthreads();
    const int lo = s_chunk * C;
    const int hi = min(V, lo + C);
    const int P = (hi - lo + SAMPLE_THREADS - 1) / SAMPLE_THREADS;
    const int plo = min(hi, lo + (int) threadIdx.x * P);
    const int phi = min(hi, plo + P);
    double v = 0.0;
    for (int j = plo; j < phi; j++) {
        v += sample_e(l[j], m, T);
    }
    piece[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        const double target = s_target;
        int crossed = s_crossed;
        double cum = s_base, lastBase = s_base;
        int p = -1, lastP = 0;
        for (int t = 0; t < SAMPLE_THREADS; t++) {
            if (piece[t] > 0.0) {
                lastP = t;
                lastBase = cum;
            }
            if (crossed && cum + piece[t] > target) {
                p = t;
                break;
            }
            cum += piece[t];
        }
        if (p < 0) {
            crossed = 0; // the finer sum no longer crosses: the last id with e_j > 0 of this chunk
            p = lastP;
            cum = lastBase;
        }
        const int a = min(hi, lo + p * P);
        const int e = min(hi, a + P);
        int id = a, lastId = a;
        bool found = false;
        for (int j = a; j < e; j++) {
            const double ej = sample_e(l[j], m, T);
            if (ej == 0.0) {
                continue;
            }
            lastId = j;
            cum += ej;
            if (crossed && cum > target) {
                id = j;
                found = true;
                break;
            }
        }
        out[0] = s_target != s_target ? -1 : found ? id : lastId; // Z is NaN: the row held NaN or +inf
    }
}
