package io.gossgpu.generate;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SamplerTest {
    static final float[] LOGITS = {2f, 1f, 0f, 2f, -1f, 0.5f};

    @Test
    void greedyTakesTheLowerIdOnTies() {
        assertEquals(0, new Sampler(SamplerConfig.greedy()).sample(LOGITS));
    }

    @Test
    void topKKeepsTheKMostLikely() {
        double[] p = new Sampler(SamplerConfig.of(1f, 1).withTopK(2)).probabilities(LOGITS);
        assertEquals(0.5, p[0], 1e-12);
        assertEquals(0.5, p[3], 1e-12);
        assertEquals(0, p[1]);
        for (int i = 0; i < 20; i++) assertEquals(0, new Sampler(SamplerConfig.of(1f, i).withTopK(1)).sample(LOGITS));
    }

    @Test
    void topPKeepsTheSmallestPrefixReachingP() {
        // softmax of {2,1,0,2,-1,0.5}: the two 2s hold 2e²/Z ≈ 0.72 → top-p 0.6 keeps exactly them; the 1 adds 0.13
        double[] p = new Sampler(SamplerConfig.of(1f, 1).withTopP(0.6f)).probabilities(LOGITS);
        assertEquals(0.5, p[0], 1e-12);
        assertEquals(0.5, p[3], 1e-12);
        double[] q = new Sampler(SamplerConfig.of(1f, 1).withTopP(0.75f)).probabilities(LOGITS);
        assertEquals(0, q[2]);
        assertEquals(Math.E / (2 * Math.E * Math.E + Math.E), q[1], 1e-12); // the 1 joins
    }

    @Test
    void minPDropsTokensBelowAFractionOfTheBest() {
        // p_i / p_max = e^(l_i − 2): keep l ≥ 2 + ln(0.3) = 0.796 → ids 0, 1, 3
        double[] p = new Sampler(SamplerConfig.of(1f, 1).withMinP(0.3f)).probabilities(LOGITS);
        assertEquals(0, p[5]);
        assertEquals(Math.E / (2 * Math.E * Math.E + Math.E), p[1], 1e-12);
    }

    @Test
    void temperatureSharpens() {
        double[] p = new Sampler(SamplerConfig.of(0.5f, 1)).probabilities(LOGITS);
        double z = 0;
        for (float l : LOGITS) z += Math.exp(l / 0.5);
        assertEquals(Math.exp(1 / 0.5) / z, p[1], 1e-12);
    }

    @Test
    void logitOrderIsDescendingWithTiesToTheLowerId() {
        float[] logits = {0.5f, -3f, 2f, 0.5f, Float.NEGATIVE_INFINITY, -0.25f, 2f, 1e-30f};
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[]{2, 6, 0, 3, 7, 5, 1, 4}, Sampler.byLogitDescending(logits));
    }
}
