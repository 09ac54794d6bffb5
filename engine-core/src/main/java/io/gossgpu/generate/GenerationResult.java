package io.gossgpu.generate;

import io.gossgpu.Timings;

/** The new tokens (stop token included when one ended it), why it stopped, and timings. */
public record GenerationResult(int[] tokens, StopReason stopReason, Timings timings) {
    public enum StopReason {
        STOP_TOKEN,
        MAX_TOKENS,
        CONTEXT_FULL,
        CANCELLED
    }
}
