package io.gossgpu.generate;

import io.gossgpu.GossException;

/**
 * How the next token is chosen. {@code temperature = 0} is greedy (argmax, ties to the lower id). Otherwise,
 * in this order: logits / temperature → softmax → keep the {@code topK} most likely ({@code 0} = all) →
 * keep the smallest most-likely prefix whose probability reaches {@code topP} ({@code 1} = all) → drop
 * tokens below {@code minP × p_max} ({@code 0} = none) → renormalise and draw with a
 * {@link java.util.SplittableRandom} seeded by {@code seed} (same seed, same logits → same tokens).
 */
public record SamplerConfig(float temperature, int topK, float topP, float minP, long seed) {
    public SamplerConfig {
        if (!(temperature >= 0) || !Float.isFinite(temperature))
            throw new GossException("temperature must be >= 0 (0 is greedy), got " + temperature);
        if (topK < 0) throw new GossException("top-k must be >= 0, got " + topK);
        if (!(topP > 0 && topP <= 1)) throw new GossException("top-p must be in (0, 1], got " + topP);
        if (!(minP >= 0 && minP <= 1)) throw new GossException("min-p must be in [0, 1], got " + minP);
    }

    public static SamplerConfig greedy() {
        return new SamplerConfig(0, 0, 1, 0, 0);
    }

    public static SamplerConfig of(float temperature, long seed) {
        return new SamplerConfig(temperature, 0, 1, 0, seed);
    }

    public boolean isGreedy() {
        return temperature <= 0;
    }

    public SamplerConfig withTopK(int k) {
        return new SamplerConfig(temperature, k, topP, minP, seed);
    }

    public SamplerConfig withTopP(float p) {
        return new SamplerConfig(temperature, topK, p, minP, seed);
    }

    public SamplerConfig withMinP(float p) {
        return new SamplerConfig(temperature, topK, topP, p, seed);
    }
}
