package io.gossgpu.api;

import io.gossgpu.generate.SamplerConfig;
import io.gossgpu.harmony.ReasoningEffort;

import java.time.LocalDate;

/**
 * Settings of one chat (or raw completion) session.
 *
 * @param contextLength   tokens the session's KV cache holds (its memory cost is checked up front)
 * @param maxTokens       most new tokens per reply
 * @param sampler         temperature, top-k/p, min-p and seed ({@link SamplerConfig#greedy()} for greedy)
 * @param reasoningEffort Harmony system message's reasoning level
 * @param instructions    developer message instructions (Harmony), or null
 * @param currentDate     the date the system message states
 */
public record ChatOptions(int contextLength, int maxTokens, SamplerConfig sampler, ReasoningEffort reasoningEffort,
                          String instructions, LocalDate currentDate) {
    public static ChatOptions defaults() {
        return new ChatOptions(4096, 1024, SamplerConfig.of(1.0f, System.nanoTime()), ReasoningEffort.MEDIUM, null, LocalDate.now());
    }

    public ChatOptions withContextLength(int n) {
        return new ChatOptions(n, maxTokens, sampler, reasoningEffort, instructions, currentDate);
    }

    public ChatOptions withMaxTokens(int n) {
        return new ChatOptions(contextLength, n, sampler, reasoningEffort, instructions, currentDate);
    }

    public ChatOptions withSampler(SamplerConfig s) {
        return new ChatOptions(contextLength, maxTokens, s, reasoningEffort, instructions, currentDate);
    }

    public ChatOptions withReasoningEffort(ReasoningEffort e) {
        return new ChatOptions(contextLength, maxTokens, sampler, e, instructions, currentDate);
    }

    public ChatOptions withInstructions(String text) {
        return new ChatOptions(contextLength, maxTokens, sampler, reasoningEffort, text, currentDate);
    }

    public ChatOptions withCurrentDate(LocalDate d) {
        return new ChatOptions(contextLength, maxTokens, sampler, reasoningEffort, instructions, d);
    }
}
