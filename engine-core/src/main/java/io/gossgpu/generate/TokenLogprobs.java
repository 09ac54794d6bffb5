package io.gossgpu.generate;

import java.util.Arrays;

/**
 * Log probabilities of one generated token under the model's distribution (the softmax of the raw logits, before
 * temperature or any top-k / top-p filter), and of the {@code top} most likely tokens at that step, most likely
 * first (ties to the lower id).
 */
public record TokenLogprobs(int token, float logprob, int[] topTokens, float[] topLogprobs) {
    /** Most alternatives a caller may ask for (OpenAI allows 20). */
    public static final int MAX_TOP = 20;

    /** The log probabilities of {@code token} and the {@code top} most likely tokens, from one step's logits. */
    public static TokenLogprobs of(float[] logits, int token, int top) {
        if (top < 0 || top > MAX_TOP)
            throw new IllegalArgumentException("top must be in [0, " + MAX_TOP + "], got " + top);
        float max = Float.NEGATIVE_INFINITY;
        for (float l : logits) max = Math.max(max, l);
        double sum = 0;
        for (float l : logits) sum += Math.exp(l - (double) max);
        double logZ = max + Math.log(sum);
        int[] ids = topIds(logits, top);
        float[] lps = new float[ids.length];
        for (int i = 0; i < ids.length; i++) lps[i] = (float) (logits[ids[i]] - logZ);
        return new TokenLogprobs(token, (float) (logits[token] - logZ), ids, lps);
    }

    /** The {@code k} ids with the highest logits, highest first, ties to the lower id (one pass, insertion into k slots). */
    static int[] topIds(float[] logits, int k) {
        int[] best = new int[k];
        int n = 0;
        for (int id = 0; id < logits.length; id++) {
            float l = logits[id];
            if (n == k && (k == 0 || l <= logits[best[k - 1]])) continue; // equal logits keep the lower id already in
            int j = n < k ? n++ : k - 1;
            while (j > 0 && logits[best[j - 1]] < l) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = id;
        }
        return Arrays.copyOf(best, n);
    }
}
