// The router's top-k and softmax (cuda backend, MoeLauncher), after the router logits (dense.cu).
//
// Reference: per token t, over its E logits l:
//   ids[t, 0..K-1] = the K largest logits, descending, ties -> lower expert
//   w[t, j]        = e^(l[ids[t, j]] - l[ids[t, 0]]) / sum_j' e^(l[ids[t, j']] - l[ids[t, 0]])

#include "common.cuh"

// ---- topk_softmax: one warp per token; grid (ceil(T / 2)), block 64; K <= 32 ----------------------
// K rounds; in each, every lane offers its largest logit not yet chosen among experts lane, lane + 32, ...
// (ascending, by argmax_pick: ties keep the lower expert) and the warp keeps the larger value, or on equal values the
// lower expert, so the choice is the sequential scan's. Lane 0 writes the softmax.
struct TopKParams {
    int tokens;  // T
    int experts; // E
    int k;       // K
};

extern "C" __global__ void topk_softmax(const float* __restrict__ logits, int* __restrict__ ids, float* __restrict__ weights,
                                            const TopKParams p)
{
    const int T = p.tokens, E = p.experts, K = p.k;
    const int lane = threadIdx.x & 31;
    const int t = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (t >= T) {
        return; // the whole warp: t is the same in every lane
    }
    const float* gl = logits + (size_t) t * E;
    int chosen[32];
    for (int j = 0; j < K; j++) {
        float bv = -INFINITY;
        int bi = -1;
        for (int x = lane; x < E; x += 32) {
            bool taken = false;
            for (int u = 0; u < j; u++) {
                taken = taken || chosen[u] == x;
            }
            if (!taken) {
                argmax_pick(bv, bi, gl[x], x);
            }
        }
        warp_argmax(bv, bi);
        chosen[j] = bi; // every lane has the same winner
    }
    if (lane == 0) {
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
}
