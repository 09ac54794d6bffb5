// The router's top-k and softmax (cuda backend, MoeLauncher), after the router logits (dense.cu).
//
// Reference: per token t, over its E logits l:
//   ids[t, 0..K-1] = the K largest logits, descending, ties -> lower expert
//   w[t, j]        = e^(l[ids[t, j]] - l[ids[t, 0]]) / sum_j' e^(l[ids[t, j']] - l[ids[t, 0]])

#include "common.cuh"

// ---- topk_softmax: one thread per token; grid (ceil(T / 64)), block 64; K <= 32 ------------------
struct TopKParams {
    int tokens;  // T
    int experts; // E
    int k;       // K
};

extern "C" __global__ void topk_softmax(const float* __restrict__ logits, int* __restrict__ ids, float* __restrict__ weights,
                                            const TopKParams p)
{
    const int T = p.tokens, E = p.experts, K = p.k;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) {
        return;
    }
    const float* gl = logits + (size_t) t * E;
    int chosen[32];
    for (int j = 0; j < K; j++) {
        int best = -1;
        for (int x = 0; x < E; x++) {
            bool taken = false;
            for (int u = 0; u < j; u++) {
                taken = taken || chosen[u] == x;
            }
            if (taken) {
                continue;
            }
            if (best < 0 || gl[x] > gl[best]) { // strict: ties keep the lower index
                best = x;
            }
        }
        chosen[j] = best;
    }
    const float mx = gl[chosen[0]];
    float z = 0.0f;
    for (int j = 0; j < K; j++) {
        z += expf(gl[chosen[j]] - mx);
    }
    for (int j = 0; j < K; j++) {
        ids[(size_t) t * K + j] = chosen[j];
        weights[(size_t) t * K + j] = expf(gl[chosen[j]] - mx) / z;
    }
}
