package io.gossgpu.api;

/** Why a reply ended. */
public enum StopReason {
    /** The model ended it (Harmony's end of message or call token, or end of text in a raw completion). */
    STOP_TOKEN,
    /** It reached its token limit ({@link ChatOptions#maxTokens()} or the call's own). */
    MAX_TOKENS,
    /** The session's KV cache is full ({@link ChatOptions#contextLength()}). */
    CONTEXT_FULL,
    /** {@code cancel}, {@code close}, the engine's close, or a stop the caller asked for. */
    CANCELLED;

    static StopReason of(io.gossgpu.generate.GenerationResult.StopReason r) {
        return valueOf(r.name());
    }
}
