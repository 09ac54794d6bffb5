package io.gossgpu.api;

/** Streaming callbacks of a reply, called on the generating thread as tokens arrive. All optional. */
public interface ChatListener {
    /** Every generated token id, before it is parsed. */
    default void onToken(int token) {}

    /** Text of the analysis channel (the model's reasoning). */
    default void onReasoning(String delta) {}

    /** Text meant for the user: the final channel in a chat, everything in a raw completion. */
    default void onContent(String delta) {}

    /** The model began a call of function tool {@code functionName}; its arguments follow in {@link #onToolCallDelta}. */
    default void onToolCallStart(String functionName) {}

    /** More of the arguments of the function call begun by the last {@link #onToolCallStart} (as they are generated). */
    default void onToolCallDelta(String functionName, String argumentsDelta) {}

    /** The model called a function tool ({@code arguments} as the model wrote them, usually JSON). */
    default void onToolCall(String functionName, String arguments) {}

    /**
     * How many alternatives {@link #onLogprobs} lists per token (0 to {@link TokenLogprob#MAX_TOP}); -1, the default,
     * asks for no log probabilities (they make GPU backends send every step's logits back to the host).
     */
    default int topLogprobs() {
        return -1;
    }

    /** Each generated token's log probabilities, just before {@link #onToken}; only when {@link #topLogprobs()} ≥ 0. */
    default void onLogprobs(TokenLogprob logprobs) {}

    /** Model output that broke the Harmony format (common with random-weight test models). */
    default void onMalformed(String reason, String text) {}
}
