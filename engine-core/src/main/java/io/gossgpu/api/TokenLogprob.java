package io.gossgpu.api;

/**
 * The log probability of one generated token under the model's distribution (the softmax of the raw logits, before
 * temperature or any top-k / top-p filter), and those of the most likely tokens at that step, most likely first (ties
 * to the lower id). Ask for them with {@link ChatListener#topLogprobs()}.
 *
 * @param token       the generated token's id ({@link Tokens#decode})
 * @param logprob     its natural-log probability
 * @param topTokens   the most likely ids at this step, as many as asked for
 * @param topLogprobs their log probabilities, in the same order
 */
public record TokenLogprob(int token, float logprob, int[] topTokens, float[] topLogprobs) {
    /** Most alternatives a listener may ask for per token (OpenAI allows 20). */
    public static final int MAX_TOP = io.gossgpu.generate.TokenLogprobs.MAX_TOP;

    static TokenLogprob of(io.gossgpu.generate.TokenLogprobs t) {
        return new TokenLogprob(t.token(), t.logprob(), t.topTokens(), t.topLogprobs());
    }
}
