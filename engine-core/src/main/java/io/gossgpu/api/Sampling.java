package io.gossgpu.api;

import io.gossgpu.generate.LogitAdjustments;
import io.gossgpu.generate.SamplerConfig;
import java.util.Map;

/**
 * How each next token is chosen, OpenAI's request fields in one place. {@code temperature = 0} is greedy (the most
 * likely token, ties to the lower id). Otherwise, in this order: logits / temperature → softmax → keep the {@code topK}
 * most likely ({@code 0} = all) → keep the smallest most-likely set whose probability reaches {@code topP} ({@code 1} =
 * all) → drop tokens below {@code minP × p_max} ({@code 0} = none) → draw with a generator seeded by {@code seed} (same
 * seed, same prompt → same reply).
 *
 * <p>Before all of that the raw logits are adjusted: each token id in {@code logitBias} gets its bias added
 * (−100..100), and each token already generated in this reply loses {@code frequencyPenalty} per time it was generated
 * plus {@code presencePenalty} once (both −2..2, 0 for none).
 *
 * @param temperature      0 for greedy, else how flat the distribution is made (1: as the model gives it)
 * @param topK             keep only the k most likely tokens (0: all)
 * @param topP             nucleus sampling's probability mass (1: all)
 * @param minP             drop tokens less likely than minP times the most likely one (0: none)
 * @param seed             the random generator's seed
 * @param presencePenalty  subtracted once from the logit of each token already in the reply (−2..2)
 * @param frequencyPenalty subtracted per occurrence from the logit of each token already in the reply (−2..2)
 * @param logitBias        token id (see {@link Tokens}) to a bias added to its logit (−100..100)
 */
public record Sampling(
        float temperature,
        int topK,
        float topP,
        float minP,
        long seed,
        float presencePenalty,
        float frequencyPenalty,
        Map<Integer, Float> logitBias) {
    public Sampling {
        logitBias = logitBias == null ? Map.of() : Map.copyOf(logitBias);
        // the rules live in the engine's own types: making them checks every field, with a one-line error
        new SamplerConfig(temperature, topK, topP, minP, seed);
        new LogitAdjustments(logitBias, presencePenalty, frequencyPenalty);
    }

    /** Temperature, top-k, top-p, min-p and seed, without logit adjustments. */
    public Sampling(float temperature, int topK, float topP, float minP, long seed) {
        this(temperature, topK, topP, minP, seed, 0, 0, Map.of());
    }

    /** Always the most likely token. */
    public static Sampling greedy() {
        return new Sampling(0, 0, 1, 0, 0);
    }

    /** Sampling at {@code temperature} from the whole distribution, seeded. */
    public static Sampling of(float temperature, long seed) {
        return new Sampling(temperature, 0, 1, 0, seed);
    }

    public boolean isGreedy() {
        return temperature <= 0;
    }

    public Sampling withTemperature(float t) {
        return new Sampling(t, topK, topP, minP, seed, presencePenalty, frequencyPenalty, logitBias);
    }

    public Sampling withTopK(int k) {
        return new Sampling(temperature, k, topP, minP, seed, presencePenalty, frequencyPenalty, logitBias);
    }

    public Sampling withTopP(float p) {
        return new Sampling(temperature, topK, p, minP, seed, presencePenalty, frequencyPenalty, logitBias);
    }

    public Sampling withMinP(float p) {
        return new Sampling(temperature, topK, topP, p, seed, presencePenalty, frequencyPenalty, logitBias);
    }

    public Sampling withSeed(long s) {
        return new Sampling(temperature, topK, topP, minP, s, presencePenalty, frequencyPenalty, logitBias);
    }

    /** These settings with OpenAI's presence and frequency penalties (each −2..2, 0 for none). */
    public Sampling withPenalties(float presence, float frequency) {
        return new Sampling(temperature, topK, topP, minP, seed, presence, frequency, logitBias);
    }

    /** These settings with OpenAI's logit bias: token id to a bias added to its logit (−100..100). */
    public Sampling withLogitBias(Map<Integer, Float> bias) {
        return new Sampling(temperature, topK, topP, minP, seed, presencePenalty, frequencyPenalty, bias);
    }

    /** The sampler the engine runs (internal: where the api meets io.gossgpu.generate). */
    SamplerConfig samplerConfig() {
        return new SamplerConfig(temperature, topK, topP, minP, seed);
    }

    /** The logit adjustments the engine applies, or null when there are none (internal, as {@link #samplerConfig}). */
    LogitAdjustments adjustments() {
        LogitAdjustments a = new LogitAdjustments(logitBias, presencePenalty, frequencyPenalty);
        return a.isNone() ? null : a;
    }
}
