package io.gossgpu.generate;

import io.gossgpu.GossException;
import java.util.HashMap;
import java.util.Map;

/**
 * OpenAI's logit adjustments, applied to the raw logits before temperature and the other sampling rules: each id in
 * {@code bias} gets its bias added (−100..100), and every id already generated in this reply loses
 * {@code frequencyPenalty} per time it was generated plus {@code presencePenalty} once (both −2..2):
 * {@code logit[j] −= count[j]·frequency + (count[j] > 0 ? presence : 0)}. Counts cover the generated tokens only,
 * not the prompt.
 */
public record LogitAdjustments(Map<Integer, Float> bias, float presencePenalty, float frequencyPenalty) {
    public LogitAdjustments {
        bias = Map.copyOf(bias);
        for (Map.Entry<Integer, Float> e : bias.entrySet()) {
            if (e.getKey() < 0) throw new GossException("logit bias token id must be >= 0, got " + e.getKey());
            if (!(e.getValue() >= -100 && e.getValue() <= 100))
                throw new GossException(
                        "logit bias must be in [-100, 100], got " + e.getValue() + " for token " + e.getKey());
        }
        if (!(presencePenalty >= -2 && presencePenalty <= 2))
            throw new GossException("presence penalty must be in [-2, 2], got " + presencePenalty);
        if (!(frequencyPenalty >= -2 && frequencyPenalty <= 2))
            throw new GossException("frequency penalty must be in [-2, 2], got " + frequencyPenalty);
    }

    /** Whether these change nothing. */
    public boolean isNone() {
        return bias.isEmpty() && presencePenalty == 0 && frequencyPenalty == 0;
    }

    /** Adjusts {@code logits} in place; {@code counts}: how often each id was generated so far in this reply. */
    public void apply(float[] logits, Map<Integer, Integer> counts) {
        for (Map.Entry<Integer, Float> e : bias.entrySet())
            if (e.getKey() < logits.length) logits[e.getKey()] += e.getValue();
        if (presencePenalty == 0 && frequencyPenalty == 0) return;
        for (Map.Entry<Integer, Integer> e : counts.entrySet())
            if (e.getKey() < logits.length && e.getValue() > 0)
                logits[e.getKey()] -= e.getValue() * frequencyPenalty + presencePenalty;
    }

    /** Counts one generated token (the bookkeeping {@link #apply} reads). */
    public static void count(Map<Integer, Integer> counts, int token) {
        counts.merge(token, 1, Integer::sum);
    }

    public static Map<Integer, Integer> newCounts() {
        return new HashMap<>();
    }
}
