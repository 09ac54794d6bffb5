package io.gossgpu.benchmarks.ops;

import io.gossgpu.model.ModelConfig;

/**
 * The distinct bytes an op must read at least, to read a timing as GB/s against the device's bandwidth:
 * weights as the generated checkpoint stores them (BF16 dense, MXFP4 experts with one scale byte per 32
 * values; a backend that widens them on load reads more) plus F32 activations and KV cache. Each byte counts
 * once, however often a kernel re-reads it.
 */
final class OpBytes {
    private OpBytes() {}

    private static final double MXFP4 = 0.5 + 1.0 / 32;

    /**
     * {@code op} as the benchmark methods are named; {@code tokens} rows; {@code context} cached positions
     * (attention only; a full-attention layer).
     */
    static long of(String op, ModelConfig c, int tokens, int context) {
        long h = c.hiddenSize(), q = c.qDim(), kv = c.kvDim(), t = tokens;
        return switch (op) {
            case "linear" -> h * q * 2 + t * (q + h) * 4;
            case "qkvRope" -> (q + 2 * kv) * h * 2 + t * h * 4;
            case "attention" -> (context + t) * 2 * kv * 4 + t * q * 4;
            case "router" -> c.numExperts() * h * 2 + t * h * 4;
            case "moe" -> (long) (distinctExperts(c, tokens) * 3 * h * c.intermediateSize() * MXFP4) + t * h * 4;
            case "logits", "argmax" -> (long) c.vocabSize() * h * 2 + t * h * 4;
            default -> throw new IllegalArgumentException("no byte count for op " + op);
        };
    }

    /** Expected distinct experts {@code tokens} rows choose with top-k of E picked uniformly: E·(1 − (1 − k/E)^T). */
    static double distinctExperts(ModelConfig c, int tokens) {
        double e = c.numExperts(), k = c.expertsPerToken();
        return tokens == 1 ? k : e * (1 - Math.pow(1 - k / e, tokens));
    }
}
