package io.gossgpu.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.conformance.SamplingCheck;
import io.gossgpu.cpu.compute.CpuPool;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The cpu backend's pooled temperature draw returns exactly {@link TemperatureDraw#draw}'s id — not "within rounding",
 * as a device may: same maximum, same exponentials, the same ascending sum — on pools of 1 to 3 threads, rows of one
 * chunk and of many, draws on the cumulative boundaries, −∞ masks, and NaN or ±∞ logits.
 */
class PooledDrawTest {
    private static final String[] KINDS = {"gaussian", "ties", "peaked", "flat", "holes"};
    private static final double[] TEMPERATURES = {1.0, 0.7, 0.05, 1e-3, 2.5, 10.0};
    /** One chunk, a chunk's edge, several chunks with a short last one. */
    private static final int[] LENGTHS = {1, 2, 5, 100, 8191, 8192, 8193, 30_001};

    @Test
    void sameIdsAsTheReferenceOverThousandsOfCases() {
        SplittableRandom r = new SplittableRandom(2026);
        int cases = 0;
        for (int threads = 1; threads <= 3; threads++)
            try (CpuPool pool = new CpuPool(threads)) {
                PooledDraw draw = new PooledDraw(pool);
                for (int n : LENGTHS)
                    for (String kind : KINDS) {
                        int off = r.nextInt(3);
                        float[] row = SamplingCheck.logits(kind, n, r);
                        float[] l = new float[off + n + 1];
                        System.arraycopy(row, 0, l, off, n);
                        l[off + n] = 1e9f; // past the row: never read
                        if (kind.equals("holes"))
                            for (int j = 0; j < n; j += 3) l[off + j] = Float.NEGATIVE_INFINITY; // a mask
                        double t = TEMPERATURES[r.nextInt(TEMPERATURES.length)];
                        for (double u : SamplingCheck.draws(l, off, n, t, r, 12)) {
                            check(draw, l, off, n, t, u);
                            cases++;
                        }
                    }
            }
        assertTrue(cases > 1000, cases + " cases");
    }

    @Test
    void aFullVocabularyRowAtEveryTemperature() {
        SplittableRandom r = new SplittableRandom(5);
        float[] l = SamplingCheck.logits("gaussian", 201088, r);
        try (CpuPool pool = new CpuPool(2)) {
            PooledDraw draw = new PooledDraw(pool);
            for (double t : TEMPERATURES)
                for (double u : SamplingCheck.draws(l, 0, l.length, t, r, 4)) check(draw, l, 0, l.length, t, u);
        }
    }

    @Test
    void nonFiniteLogitsAndMasksGiveTheReferenceAnswer() {
        SplittableRandom r = new SplittableRandom(9);
        try (CpuPool pool = new CpuPool(2)) {
            PooledDraw draw = new PooledDraw(pool);
            for (int n : LENGTHS)
                for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY})
                    for (int where : new int[] {0, n - 1, n / 2}) {
                        float[] l = SamplingCheck.logits("gaussian", n, r);
                        l[where] = bad;
                        for (double u : new double[] {0, 0.5, Math.nextDown(1.0)}) check(draw, l, 0, n, 1.0, u);
                    }
            for (int n : LENGTHS) { // every id masked: no finite logit
                float[] l = new float[n];
                java.util.Arrays.fill(l, Float.NEGATIVE_INFINITY);
                assertEquals(TemperatureDraw.NOT_FINITE, draw.draw(l, 0, n, 1.0, 0.5));
            }
            float[] one = new float[20_000]; // all masked but one id, in the last chunk
            java.util.Arrays.fill(one, Float.NEGATIVE_INFINITY);
            one[19_999] = 3f;
            for (double u : new double[] {0, 0.3, Math.nextDown(1.0)})
                assertEquals(19_999, draw.draw(one, 0, one.length, 0.8, u));
        }
    }

    private static void check(PooledDraw draw, float[] l, int off, int n, double t, double u) {
        int want = TemperatureDraw.draw(l, off, n, t, u);
        assertEquals(want, draw.draw(l, off, n, t, u), () -> "n=" + n + " off=" + off + " T=" + t + " u=" + u);
    }
}
