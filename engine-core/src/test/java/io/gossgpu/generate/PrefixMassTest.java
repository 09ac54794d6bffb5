package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

/** A forbidden token's mass goes to its longest allowed byte-prefix, on constructed logits. */
class PrefixMassTest {
    // ids: 0 = ", 1 = "}, 2 = a, 3 = "}} (prefix "}), 4 = b (no prefix)
    private static final int[] PREFIX = {-1, 0, -1, 1, -1};

    private static long[] allowed(int... ids) {
        long[] m = new long[1];
        for (int id : ids) m[0] |= 1L << id;
        return m;
    }

    @Test
    void aForbiddenTokensMassGoesToItsAllowedPrefix() {
        float[] logits = {0f, 5f, 2f, Float.NEGATIVE_INFINITY, 1f};
        long[] ok = allowed(0, 2);
        float[] masked = logits.clone();
        TokenConstraint.apply(ok, masked);
        assertEquals(2, Sampler.argmax(masked), "without the transfer the model's quote loses to a");
        PrefixMass.transfer(logits, ok, PREFIX);
        assertEquals(Math.log(Math.exp(0) + Math.exp(5)), logits[0], 1e-5);
        assertEquals(2f, logits[2]); // no prefix of a forbidden token: unchanged
        TokenConstraint.apply(ok, logits);
        assertEquals(0, Sampler.argmax(logits));
    }

    @Test
    void theMassSkipsForbiddenPrefixesToTheLongestAllowedOne() {
        float[] logits = {-1f, 3f, 0f, 4f, 0f};
        PrefixMass.transfer(logits, allowed(0, 2, 4), PREFIX);
        assertEquals(Math.log(Math.exp(-1) + Math.exp(3) + Math.exp(4)), logits[0], 1e-5);
        float[] two = {-1f, 3f, 0f, 4f, 0f};
        PrefixMass.transfer(two, allowed(0, 1, 2), PREFIX);
        assertEquals(Math.log(Math.exp(3) + Math.exp(4)), two[1], 1e-5); // "}} to "}, not to "
        assertEquals(-1f, two[0]);
    }

    @Test
    void tokensWithoutAnAllowedPrefixKeepTheirMass() {
        float[] logits = {0f, 5f, 2f, 1f, 3f};
        PrefixMass.transfer(logits, allowed(2), PREFIX);
        assertArrayEquals(new float[] {0f, 5f, 2f, 1f, 3f}, logits);
    }

    @Test
    void aForbiddenEndGoesToTheCloser() {
        float[] logits = {1f, Float.NEGATIVE_INFINITY, 2f, Float.NEGATIVE_INFINITY, 0f, 3f}; // id 5 ends the message
        PrefixMass.transfer(logits, allowed(0, 2, 4), new int[] {-1, 0, -1, 1, -1}, new int[] {5}, 0);
        assertEquals(Math.log(Math.exp(1) + Math.exp(3)), logits[0], 1e-5);
        float[] endAllowed = {1f, Float.NEGATIVE_INFINITY, 2f, Float.NEGATIVE_INFINITY, 0f, 3f};
        PrefixMass.transfer(endAllowed, allowed(0, 2, 4, 5), new int[] {-1, 0, -1, 1, -1}, new int[] {5}, 0);
        assertEquals(1f, endAllowed[0]);
    }
}
