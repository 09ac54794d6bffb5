package io.gossgpu.generate;

import io.gossgpu.GossException;

import java.util.Set;

/** Limits of one generation: at most {@code maxTokens} new tokens, stopping early at any of {@code stopTokens}. */
public record GenerationOptions(int maxTokens, Set<Integer> stopTokens, SamplerConfig sampler) {
    public GenerationOptions {
        if (maxTokens < 0) throw new GossException("max tokens must be >= 0, got " + maxTokens);
        stopTokens = Set.copyOf(stopTokens);
    }

    public static GenerationOptions greedy(int maxTokens) {
        return new GenerationOptions(maxTokens, Set.of(), SamplerConfig.greedy());
    }
}
