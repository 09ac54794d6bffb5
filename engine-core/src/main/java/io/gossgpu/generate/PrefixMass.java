package io.gossgpu.generate;

import java.util.HashMap;
import java.util.Map;

/**
 * Grammar-aligned mass for constrained decoding: a token the mask forbids hands its probability to the longest
 * allowed token whose bytes begin it ({@code "}} forbidden while a required key is due: its mass goes to {@code "}),
 * so the constrained distribution follows what the model meant instead of renormalising what is left (where a model
 * that wanted to close a string may go on writing it). Works on logits, before temperature and the mask.
 */
public final class PrefixMass {
    /** Tokens more than this far below the top logit (a share under e^-20 of it) are not worth moving. */
    private static final float CUTOFF = 20f;

    private PrefixMass() {}

    /**
     * Moves the mass of each forbidden id of {@code logits} to its longest allowed prefix: {@code prefix[id]} is the
     * id of the longest token whose bytes are a proper prefix of id's (−1 when none; ids past its length have none).
     */
    public static void transfer(float[] logits, long[] allowed, int[] prefix) {
        transfer(logits, allowed, prefix, new int[0], -1);
    }

    /**
     * {@link #transfer(float[], long[], int[])}, and the mass of each forbidden id of {@code ends} (tokens that end a
     * message the document cannot end yet) to {@code closer} when it is allowed (−1: none).
     */
    public static void transfer(float[] logits, long[] allowed, int[] prefix, int[] ends, int closer) {
        int n = Math.min(logits.length, prefix.length);
        float max = Float.NEGATIVE_INFINITY;
        for (float l : logits) max = Math.max(max, l);
        if (max == Float.NEGATIVE_INFINITY) return;
        float floor = max - CUTOFF;
        Map<Integer, Double> moved = new HashMap<>();
        for (int id = 0; id < n; id++) {
            if (!(logits[id] > floor) || isAllowed(allowed, id)) continue;
            int a = prefix[id];
            while (a >= 0 && !isAllowed(allowed, a)) a = prefix[a];
            if (a >= 0) moved.merge(a, Math.exp(logits[id] - max), Double::sum);
        }
        if (closer >= 0 && isAllowed(allowed, closer))
            for (int e : ends)
                if (e < logits.length && logits[e] > floor && !isAllowed(allowed, e))
                    moved.merge(closer, Math.exp(logits[e] - max), Double::sum);
        for (Map.Entry<Integer, Double> e : moved.entrySet()) {
            int a = e.getKey();
            logits[a] = (float) (max + Math.log(Math.exp(logits[a] - max) + e.getValue()));
        }
    }

    private static boolean isAllowed(long[] allowed, int id) {
        int w = id >>> 6;
        return w < allowed.length && (allowed[w] & 1L << id) != 0;
    }
}
