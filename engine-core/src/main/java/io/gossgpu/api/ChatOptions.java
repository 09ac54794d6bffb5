package io.gossgpu.api;

import io.gossgpu.GossException;
import io.gossgpu.ReasoningEffort;
import io.gossgpu.backend.KvCacheSpec;
import java.time.LocalDate;

/**
 * Settings of one chat (or raw completion) session.
 *
 * @param contextLength   tokens the session's KV cache holds (its memory cost is checked up front)
 * @param maxTokens       most new tokens per reply
 * @param sampling        temperature, top-k/p, min-p, seed and logit adjustments ({@link Sampling#greedy()} for greedy)
 * @param reasoningEffort Harmony system message's reasoning level
 * @param instructions    developer message instructions (Harmony), or null
 * @param currentDate     the date the system message states
 * @param swaRollback     extra KV cache slots on sliding-window layers so that a chat whose next prompt diverges inside
 *                        the last reply (Harmony drops the reasoning from the history) keeps the cache up to there
 *                        instead of prefilling everything again; 0 keeps exactly the window
 *                        ({@link KvCacheSpec}, default {@link KvCacheSpec#DEFAULT_SWA_ROLLBACK})
 * @param responseFormat  the shape every answer must have (structured output), or null for free text
 * @param toolChoice      whether each reply must call a tool ({@link ToolChoice}), or null to leave it to the model
 */
public record ChatOptions(
        int contextLength,
        int maxTokens,
        Sampling sampling,
        ReasoningEffort reasoningEffort,
        String instructions,
        LocalDate currentDate,
        int swaRollback,
        ResponseFormat responseFormat,
        ToolChoice toolChoice) {
    /** Most new tokens per reply unless told otherwise (the library's and the command line's default). */
    public static final int DEFAULT_MAX_TOKENS = 1024;

    public ChatOptions {
        if (swaRollback < 0) throw new GossException("sliding-window rollback must be >= 0, got " + swaRollback);
    }

    /** The model decides whether to call a tool. */
    public ChatOptions(
            int contextLength,
            int maxTokens,
            Sampling sampling,
            ReasoningEffort reasoningEffort,
            String instructions,
            LocalDate currentDate,
            int swaRollback,
            ResponseFormat responseFormat) {
        this(
                contextLength,
                maxTokens,
                sampling,
                reasoningEffort,
                instructions,
                currentDate,
                swaRollback,
                responseFormat,
                null);
    }

    /** Free-text answers. */
    public ChatOptions(
            int contextLength,
            int maxTokens,
            Sampling sampling,
            ReasoningEffort reasoningEffort,
            String instructions,
            LocalDate currentDate,
            int swaRollback) {
        this(contextLength, maxTokens, sampling, reasoningEffort, instructions, currentDate, swaRollback, null);
    }

    public static ChatOptions defaults() {
        return new ChatOptions(
                4096,
                DEFAULT_MAX_TOKENS,
                Sampling.of(1.0f, System.nanoTime()),
                ReasoningEffort.MEDIUM,
                null,
                LocalDate.now(),
                KvCacheSpec.DEFAULT_SWA_ROLLBACK);
    }

    public ChatOptions withContextLength(int n) {
        return new ChatOptions(
                n,
                maxTokens,
                sampling,
                reasoningEffort,
                instructions,
                currentDate,
                swaRollback,
                responseFormat,
                toolChoice);
    }

    public ChatOptions withMaxTokens(int n) {
        return new ChatOptions(
                contextLength,
                n,
                sampling,
                reasoningEffort,
                instructions,
                currentDate,
                swaRollback,
                responseFormat,
                toolChoice);
    }

    public ChatOptions withSampling(Sampling s) {
        return new ChatOptions(
                contextLength,
                maxTokens,
                s,
                reasoningEffort,
                instructions,
                currentDate,
                swaRollback,
                responseFormat,
                toolChoice);
    }

    public ChatOptions withReasoningEffort(ReasoningEffort e) {
        return new ChatOptions(
                contextLength,
                maxTokens,
                sampling,
                e,
                instructions,
                currentDate,
                swaRollback,
                responseFormat,
                toolChoice);
    }

    public ChatOptions withInstructions(String text) {
        return new ChatOptions(
                contextLength,
                maxTokens,
                sampling,
                reasoningEffort,
                text,
                currentDate,
                swaRollback,
                responseFormat,
                toolChoice);
    }

    public ChatOptions withCurrentDate(LocalDate d) {
        return new ChatOptions(
                contextLength,
                maxTokens,
                sampling,
                reasoningEffort,
                instructions,
                d,
                swaRollback,
                responseFormat,
                toolChoice);
    }

    public ChatOptions withSwaRollback(int n) {
        return new ChatOptions(
                contextLength,
                maxTokens,
                sampling,
                reasoningEffort,
                instructions,
                currentDate,
                n,
                responseFormat,
                toolChoice);
    }

    /** Answers must be {@code f} ({@link ResponseFormat}); null for free text. */
    public ChatOptions withResponseFormat(ResponseFormat f) {
        return new ChatOptions(
                contextLength,
                maxTokens,
                sampling,
                reasoningEffort,
                instructions,
                currentDate,
                swaRollback,
                f,
                toolChoice);
    }

    /** Whether each reply must call a tool ({@link ToolChoice}); null leaves it to the model. */
    public ChatOptions withToolChoice(ToolChoice c) {
        return new ChatOptions(
                contextLength,
                maxTokens,
                sampling,
                reasoningEffort,
                instructions,
                currentDate,
                swaRollback,
                responseFormat,
                c);
    }

    /** Answers must be JSON valid under {@code schema} (JSON Schema text); see {@link ResponseFormat#jsonSchema}. */
    public ChatOptions withJsonSchema(String schema) {
        return withResponseFormat(ResponseFormat.jsonSchema(schema));
    }

    /** Answers must match GBNF {@code grammar} (llama.cpp's notation, rule {@code root}); see {@link ResponseFormat#gbnf}. */
    public ChatOptions withGrammar(String grammar) {
        return withResponseFormat(ResponseFormat.gbnf(grammar));
    }

    /** Answers must be a JSON object. */
    public ChatOptions withJsonObject() {
        return withResponseFormat(ResponseFormat.jsonObject());
    }
}
