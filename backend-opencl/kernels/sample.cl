/*
 * Plain temperature sampling of one row of logits l[row*V .. row*V + V-1] on the device (Backend.sample; the same
 * algorithm as backend-cuda/kernels/sample.cu). Reference formula (io.gossgpu.generate.Sampler.sampleTemperature):
 *   m = max_j l_j,  e_j = exp((l_j - m) / T) (double),  Z = sum_j e_j,
 *   id = the smallest i with sum_{j<=i} e_j > u*Z; if rounding leaves u*Z uncrossed, the last i with e_i > 0.
 * Chunks b of C consecutive ids, G = number of work-groups of the first two kernels, local size WG (a power of two):
 *   sample_max:  bmax[b] = max of chunk b
 *   sample_sums: m = max_b bmax[b]; bsum[b] = sum of e_j over chunk b (strided per item, tree over the group)
 *   sample_pick: one group; item 0 adds bsum in order to find the crossed chunk, the chunk is cut into WG contiguous
 *                pieces summed per item in id order, item 0 adds the pieces in order and scans the crossed one id by id
 *                (where a finer sum no longer crosses: the last id with e_j > 0 of that chunk / piece).
 * work (one buffer per sampled row): bsum[0 .. G-1] (double), then bmax[0 .. G-1] (float), then the id (int).
 * T and u are read from draws[2*draw] and draws[2*draw + 1]. The same kernels, buffers and SampleParams as
 * backend-cuda/kernels/sample.cu (io.gossgpu.device.SamplePipeline); the group memory comes as __local arguments after the buffers.
 * Deterministic, no atomics; differs from the host's sequential sum only where u*Z is within rounding of a
 * cumulative sum. Needs cl_khr_fp64: without it these kernels are absent and the backend samples on the host.
 */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

static float sample_group_max(__global const float* v, int lo, int hi, __local float* s) {
    int lid = get_local_id(0), wg = get_local_size(0);
    float x = -INFINITY;
    for (int j = lo + lid; j < hi; j += wg) x = fmax(x, v[j]);
    s[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = wg >> 1; w > 0; w >>= 1) {
        if (lid < w) s[lid] = fmax(s[lid], s[lid + w]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float m = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return m;
}

static double sample_e(float l, float m, double T) {
    return exp(((double) l - (double) m) / T);
}

/* The scalars of the three sampling kernels (sample_max does not read draw). */
typedef struct { int row; int vocab; int chunk; int chunks; int draw; } SampleParams;

__kernel void sample_max(__global const float* logits, __global double* work, __local float* s, const SampleParams p) {
    const int V = p.vocab, C = p.chunk;
    __global const float* l = logits + (long) p.row * V;
    int b = get_group_id(0);
    __global float* bmax = (__global float*) (work + p.chunks);
    float m = sample_group_max(l, b * C, min(V, b * C + C), s);
    if (get_local_id(0) == 0) bmax[b] = m;
}

__kernel void sample_sums(__global const float* logits, __global const double* draws, __global double* work, __local float* sm,
                          __local double* s, const SampleParams p) {
    const int V = p.vocab, C = p.chunk, G = p.chunks;
    const double T = draws[2 * p.draw];
    __global const float* l = logits + (long) p.row * V;
    int b = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    __global double* bsum = work;
    __global const float* bmax = (__global const float*) (work + G);
    float m = sample_group_max(bmax, 0, G, sm);
    int lo = b * C, hi = min(V, lo + C);
    double v = 0.0;
    for (int j = lo + lid; j < hi; j += wg) v += sample_e(l[j], m, T);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = wg >> 1; w > 0; w >>= 1) {
        if (lid < w) s[lid] += s[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) bsum[b] = s[0];
}

__kernel void sample_pick(__global const float* logits, __global const double* draws, __global double* work, __local float* sm,
                          __local double* piece, __local double* sd, __local int* si, const SampleParams params) {
    const int V = params.vocab, C = params.chunk, G = params.chunks;
    const double T = draws[2 * params.draw], u = draws[2 * params.draw + 1];
    __global const float* l = logits + (long) params.row * V;
    int lid = get_local_id(0), wg = get_local_size(0);
    __global const double* bsum = work;
    __global const float* bmax = (__global const float*) (work + G);
    __global int* out = (__global int*) (bmax + G);
    float m = sample_group_max(bmax, 0, G, sm);
    if (lid == 0) {
        double z = 0.0;
        for (int b = 0; b < G; b++) z += bsum[b];
        double target = u * z, cum = 0.0, lastBase = 0.0;
        int chunk = -1, last = 0;
        for (int b = 0; b < G; b++) {
            if (bsum[b] > 0.0) { last = b; lastBase = cum; }
            if (cum + bsum[b] > target) { chunk = b; break; }
            cum += bsum[b];
        }
        si[0] = chunk >= 0;
        si[1] = chunk >= 0 ? chunk : last;
        sd[0] = chunk >= 0 ? cum : lastBase;
        sd[1] = target;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int lo = si[1] * C, hi = min(V, lo + C);
    int P = (hi - lo + wg - 1) / wg;
    int plo = min(hi, lo + lid * P), phi = min(hi, plo + P);
    double v = 0.0;
    for (int j = plo; j < phi; j++) v += sample_e(l[j], m, T);
    piece[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        double target = sd[1], cum = sd[0], lastBase = sd[0];
        int crossed = si[0], p = -1, lastP = 0;
        for (int t = 0; t < wg; t++) {
            if (piece[t] > 0.0) { lastP = t; lastBase = cum; }
            if (crossed && cum + piece[t] > target) { p = t; break; }
            cum += piece[t];
        }
        if (p < 0) { crossed = 0; p = lastP; cum = lastBase; }
        int a = min(hi, lo + p * P), e = min(hi, a + P), id = -1, lastId = a;
        for (int j = a; j < e && id < 0; j++) {
            double ej = sample_e(l[j], m, T);
            if (ej == 0.0) continue;
            lastId = j;
            cum += ej;
            if (crossed && cum > target) id = j;
        }
        out[0] = isnan(target) ? -1 : id >= 0 ? id : lastId; /* Z is NaN: the row held NaN or +inf (NOT_FINITE) */
    }
}
#endif
