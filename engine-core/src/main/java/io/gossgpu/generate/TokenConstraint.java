package io.gossgpu.generate;

/**
 * Limits which tokens one sequence may sample next (structured output). Stateful and per generation: the sampler asks
 * {@link #allowed} before each token and reports the chosen one to {@link #accept}. Each sequence of a batch carries
 * its own, so sequences decoding side by side can follow different constraints.
 */
public interface TokenConstraint {
    /**
     * The ids that may come next as a bitset (bit {@code id % 64} of word {@code id / 64}), or null when any may. The
     * array may be reused by the next call.
     */
    long[] allowed();

    /** {@code token} was chosen (it was allowed). */
    void accept(int token);

    /**
     * Per id, the id of the longest token whose bytes are a proper prefix of its bytes (−1 when none), or null: then
     * forbidden tokens keep their mass to themselves. When given, a forbidden token's probability goes to its longest
     * allowed prefix before the mask applies ({@link PrefixMass}).
     */
    default int[] prefixes() {
        return null;
    }

    /**
     * The token that brings the document nearest to its end when the model would end the message now but may not (a
     * string's closing quote), or −1: the mass of the forbidden ids of {@link #endTokens} goes to it.
     */
    default int closer() {
        return -1;
    }

    /** The ids that end a message (their mass goes to {@link #closer} while they are forbidden). */
    default int[] endTokens() {
        return new int[0];
    }

    /** Sets every logit whose id {@code allowed} leaves out to −∞ (so that no sampling rule can pick it). */
    static void apply(long[] allowed, float[] logits) {
        int n = logits.length;
        for (int w = 0, base = 0; base < n; w++, base += 64) {
            long bits = w < allowed.length ? allowed[w] : 0;
            if (bits == -1L) continue;
            int end = Math.min(n, base + 64);
            if (bits == 0) {
                java.util.Arrays.fill(logits, base, end, Float.NEGATIVE_INFINITY);
                continue;
            }
            for (int i = base; i < end; i++) if ((bits & (1L << (i - base))) == 0) logits[i] = Float.NEGATIVE_INFINITY;
        }
    }
}
