// Embedding lookup: the rows of the token ids, decoded exactly to float (cuda backend, DenseLauncher).
//
// Reference:
//   out[t, c] = W[tokens[t], c]      for t < T, c < H; W in BF16, F16, F32 or Q8_0 (common.cuh's element types)
//
// One kernel per element type: embed_bf16, embed_f16, embed_f32, embed_q8_0.

#include "common.cuh"

// ---- embed: grid (min(T, 65535)), block B ---------------------------------------------------------
template <typename E>
__device__ void embed_rows(const typename E::T* __restrict__ w, const unsigned short* __restrict__ s, const int* __restrict__ tokens,
                      int T, int H, float* __restrict__ out)
{
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        const size_t row = (size_t) tokens[t];
        for (int c = threadIdx.x; c < H; c += blockDim.x) {
            out[(size_t) t * H + c] = E::at(w, s, H, row, c);
        }
    }
}

// The scalars of every embed_* kernel.
struct EmbedParams {
    int tokens; // T
    int cols;   // H: values per row
    int fmt;    // unread: one entry point per format (the same struct as embed.cl and embed.metal)
};

#define EMBED_ENTRY(suffix, E)                                                                                \
    extern "C" __global__ void embed_##suffix(const E::T* __restrict__ w, const unsigned short* __restrict__ s,       \
                                              const int* __restrict__ tokens, float* __restrict__ out,         \
                                              const EmbedParams p)                                             \
    {                                                                                                         \
        embed_rows<E>(w, s, tokens, p.tokens, p.cols, out);                                                   \
    }

EMBED_ENTRY(bf16, Bf16)
EMBED_ENTRY(f16, F16)
EMBED_ENTRY(f32, F32)
EMBED_ENTRY(q8_0, Q8)
