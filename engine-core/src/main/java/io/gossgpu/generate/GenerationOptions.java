package io.gossgpu.generate;

import io.gossgpu.GossException;
import java.util.Set;

/**
 * Limits of one generation: at most {@code maxTokens} new tokens, stopping early at any of {@code stopTokens}.
 * {@code topLogprobs} ≥ 0 asks for each token's {@link TokenLogprobs} with that many alternatives (the logits then
 * come back to the host every step); -1 for none. {@code constraint}, when not null, limits each token to what it
 * allows (structured output; the logits then come back to the host every step); it holds this generation's state.
 * {@code adjustments}, when not null, are OpenAI's logit bias and presence/frequency penalties (host sampling too).
 */
public record GenerationOptions(
        int maxTokens,
        Set<Integer> stopTokens,
        SamplerConfig sampler,
        int topLogprobs,
        TokenConstraint constraint,
        LogitAdjustments adjustments) {
    public GenerationOptions {
        if (maxTokens < 0) throw new GossException("max tokens must be >= 0, got " + maxTokens);
        if (topLogprobs < -1 || topLogprobs > TokenLogprobs.MAX_TOP)
            throw new GossException("top logprobs must be in [-1, " + TokenLogprobs.MAX_TOP + "], got " + topLogprobs);
        stopTokens = Set.copyOf(stopTokens);
    }

    /** Without logit adjustments. */
    public GenerationOptions(
            int maxTokens,
            Set<Integer> stopTokens,
            SamplerConfig sampler,
            int topLogprobs,
            TokenConstraint constraint) {
        this(maxTokens, stopTokens, sampler, topLogprobs, constraint, null);
    }

    /** Without a constraint. */
    public GenerationOptions(int maxTokens, Set<Integer> stopTokens, SamplerConfig sampler, int topLogprobs) {
        this(maxTokens, stopTokens, sampler, topLogprobs, null, null);
    }

    /** Without log probabilities. */
    public GenerationOptions(int maxTokens, Set<Integer> stopTokens, SamplerConfig sampler) {
        this(maxTokens, stopTokens, sampler, -1);
    }

    public static GenerationOptions greedy(int maxTokens) {
        return new GenerationOptions(maxTokens, Set.of(), SamplerConfig.greedy());
    }
}
