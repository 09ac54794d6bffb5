package io.gossgpu.model;

/**
 * The weights of one transformer block, in the engine's canonical form whatever the file layout.
 * Matrices are {@code rows = output features × cols = input features}; expert weights carry
 * {@code experts = num_experts}; biases and norm scales are single rows (per expert for the MoE).
 *
 * <p>The MoE's first matrix is kept as its two halves: {@code gate} (the SwiGLU gate, "x_glu", even
 * rows of OpenAI's mlp1) and {@code up} (the linear part, odd rows).
 */
public record LayerWeights(
        WeightView attnNorm, // [H]
        WeightView q,
        WeightView qBias, // [heads·hd, H], [heads·hd]
        WeightView k,
        WeightView kBias, // [kv·hd, H],    [kv·hd]
        WeightView v,
        WeightView vBias, // [kv·hd, H],    [kv·hd]
        WeightView sinks, // [heads]
        WeightView out,
        WeightView outBias, // [H, heads·hd], [H]
        WeightView mlpNorm, // [H]
        WeightView router,
        WeightView routerBias, // [E, H], [E]
        WeightView gate,
        WeightView gateBias, // E × [I, H], E × [I]
        WeightView up,
        WeightView upBias, // E × [I, H], E × [I]
        WeightView down,
        WeightView downBias) { // E × [H, I], E × [H]
}
