/*
 * MoE router selection (the logits g = Wr x + br come from the dense kernel):
 * for each row t, the K largest of g[t, 0..E) sorted descending, ties to the lower expert index
 * (strict > while scanning upwards); weights = softmax over the K selected logits only:
 *   w_j = e^(g_j - g_0) / sum_k e^(g_k - g_0).   One work item per row; K <= 32.
 */
typedef struct { int tokens; int experts; int k; } TopKParams;

__kernel void topk_softmax(__global const float* logits, __global int* ids, __global float* weights,
                           const TopKParams p) {
    const int E = p.experts, K = p.k, T = p.tokens;
    int t = get_global_id(0);
    if (t >= T) return;
    __global const float* g = logits + (long) t * E;
    int chosen[32];
    for (int j = 0; j < K; j++) {
        int best = -1;
        for (int x = 0; x < E; x++) {
            int taken = 0;
            for (int u = 0; u < j; u++) taken |= chosen[u] == x;
            if (taken) continue;
            if (best < 0 || g[x] > g[best]) best = x;
        }
        chosen[j] = best;
    }
    float mx = g[chosen[0]], z = 0.0f;
    for (int j = 0; j < K; j++) z += exp(g[chosen[j]] - mx);
    for (int j = 0; j < K; j++) {
        ids[(long) t * K + j] = chosen[j];
        weights[(long) t * K + j] = exp(g[chosen[j]] - mx) / z;
    }
}
