package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.TemperatureDraw;
import org.junit.jupiter.api.Test;

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
        for (int i = 0; i < 20; i++)
            assertEquals(0, new Sampler(SamplerConfig.of(1f, i).withTopK(1)).sample(LOGITS));
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
        org.junit.jupiter.api.Assertions.assertArrayEquals(
                new int[] {2, 6, 0, 3, 7, 5, 1, 4}, Sampler.byLogitDescending(logits));
    }

    /** The token stream of plain temperature sampling is the one of the normalise-then-pick formulation it replaced. */
    @Test
    void plainTemperatureDrawsAsTheNormalisedPick() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(5);
        for (float t : new float[] {0.3f, 1f, 2f}) {
            Sampler s = new Sampler(SamplerConfig.of(t, 77));
            java.util.SplittableRandom old = new java.util.SplittableRandom(77);
            for (int k = 0; k < 2000; k++) {
                float[] l = new float[1 + r.nextInt(300)];
                for (int i = 0; i < l.length; i++) l[i] = (float) (r.nextGaussian() * 3);
                double[] p = s.probabilities(l);
                double u = old.nextDouble(), cum = 0;
                int want = -1;
                for (int i = 0; i < p.length && want < 0; i++) if (p[i] > 0 && u < (cum += p[i])) want = i;
                assertEquals(want, s.sample(l), "draw " + k + " at T=" + t);
            }
        }
    }

    @Test
    void sampleTemperatureTakesTheSmallestIdWhoseCumulativeSumExceedsUZ() {
        float[] ties = {3f, 3f, 3f, 3f}; // e_j = 1, Z = 4: u = k/4 gives u·Z = k exactly, crossed first by id k
        for (int k = 0; k < 4; k++) assertEquals(k, TemperatureDraw.draw(ties, 0, 4, 1, k / 4.0));
        assertEquals(3, TemperatureDraw.draw(ties, 0, 4, 1, Math.nextDown(1.0)));
        float ninf = Float.NEGATIVE_INFINITY;
        float[] holes = {ninf, 1f, ninf, 1f, ninf}; // zero-probability ids are never drawn
        assertEquals(1, TemperatureDraw.draw(holes, 0, 5, 1, 0));
        assertEquals(3, TemperatureDraw.draw(holes, 0, 5, 1, 0.5));
        assertEquals(3, TemperatureDraw.draw(holes, 0, 5, 1, Math.nextDown(1.0)));
        float[] offset = {9f, 0f, 0f, 5f}; // the range [1, 3): ids are relative to the offset
        assertEquals(1, TemperatureDraw.draw(offset, 1, 2, 1, 0.75));
    }

    /**
     * The draw keeps each e_j from the sum for the cumulative pass: the same ids as computing them twice, over shapes
     * that grow and shrink on one thread (so a longer earlier draw leaves values past {@code n} in the kept array),
     * with masked (−∞) ids and an offset.
     */
    @Test
    void drawGivesTheIdsOfComputingEachWeightTwice() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(11);
        for (int k = 0; k < 3000; k++) {
            int n = 1 + r.nextInt(k % 3 == 0 ? 5000 : 40), off = r.nextInt(3);
            float[] l = new float[off + n];
            for (int i = 0; i < l.length; i++)
                l[i] = r.nextInt(9) == 0 ? Float.NEGATIVE_INFINITY : (float) (r.nextGaussian() * 4);
            double t = new double[] {0.2, 0.7, 1, 1.9}[k % 4], u = k % 50 == 0 ? Math.nextDown(1.0) : r.nextDouble();
            // draw takes any u: outside [0, 1) too (the first nonzero weight below 0, the last one for NaN or past 1)
            if (k % 7 == 3) u = new double[] {-0.3, -0.0, 0.0, 1.0, 1.5, Double.NaN}[k % 6];
            if (k % 11 == 5) l[off] = Float.NEGATIVE_INFINITY; // a zero weight first: where u below 0 would go wrong
            assertEquals(
                    twoPassDraw(l, off, n, t, u),
                    TemperatureDraw.draw(l, off, n, t, u),
                    "draw " + k + ": n " + n + ", T " + t + ", u " + u);
        }
    }

    /** TemperatureDraw.draw as it was, each e_j computed in both passes. */
    private static int twoPassDraw(float[] logits, int offset, int n, double temperature, double u) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < n; j++) max = Math.max(max, logits[offset + j]);
        double z = 0;
        for (int j = 0; j < n; j++) z += Math.exp((logits[offset + j] - (double) max) / temperature);
        if (Double.isNaN(z)) return TemperatureDraw.NOT_FINITE;
        double target = u * z, cum = 0;
        int last = 0;
        for (int j = 0; j < n; j++) {
            double e = Math.exp((logits[offset + j] - (double) max) / temperature);
            if (e == 0) continue;
            last = j;
            cum += e;
            if (cum > target) return j;
        }
        return last;
    }
}
