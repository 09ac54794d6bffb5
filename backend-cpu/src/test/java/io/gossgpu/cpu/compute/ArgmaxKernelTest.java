package io.gossgpu.cpu.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.TemperatureDraw;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link CpuKernels#argmax} of every kernel set returns exactly {@link TemperatureDraw#argmax}'s id: ties to the lower
 * id, {@link TemperatureDraw#NOT_FINITE} for NaN or ±∞ anywhere, on rows whose lengths and offsets are not multiples of
 * the vector width or of the vector kernel's block.
 */
class ArgmaxKernelTest {
    private static final CpuKernels[] KERNELS = {CpuKernels.best(), new ScalarKernels("test")};
    private static final float[] NOT_FINITE = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};

    /** Lengths around the vector widths (4..16 lanes, unrolled ×4), the block, and gpt-oss's vocabulary. */
    private static final int[] LENGTHS = {
        1,
        2,
        7,
        15,
        16,
        17,
        63,
        64,
        65,
        100,
        VectorKernels.ARGMAX_BLOCK - 1,
        VectorKernels.ARGMAX_BLOCK,
        VectorKernels.ARGMAX_BLOCK + 1,
        3 * VectorKernels.ARGMAX_BLOCK + 37,
        201088
    };

    @Test
    void randomRowsWithPlantedTiesMatchTheReference() {
        SplittableRandom r = new SplittableRandom(42);
        int cases = 0;
        for (int n : LENGTHS)
            for (int rep = 0; rep < (n > 10_000 ? 6 : 40); rep++) {
                int off = r.nextInt(5);
                float[] x = new float[off + n + r.nextInt(3)];
                // few distinct values on some rows, so many elements tie with the maximum
                boolean coarse = rep % 3 == 0;
                for (int i = 0; i < x.length; i++) x[i] = coarse ? r.nextInt(8) - 4 : (float) (r.nextGaussian() * 5);
                if (rep % 3 == 1) { // the maximum planted at two or more positions, maybe across blocks
                    float top = 100f + r.nextInt(3);
                    for (int t = 0; t < 2 + r.nextInt(3); t++) x[off + r.nextInt(n)] = top;
                }
                if (rep % 5 == 2) x[off + n - 1] = 1e6f; // the maximum in the tail
                if (rep % 7 == 3) { // a signed-zero tie at the top
                    java.util.Arrays.fill(x, off, off + n, -1f);
                    x[off + r.nextInt(n)] = -0f;
                    x[off + r.nextInt(n)] = 0f;
                }
                check(x, off, n);
                cases++;
            }
        assertTrue(cases > 300, cases + " cases");
    }

    @Test
    void aNonFiniteLogitAnywhereGivesNotFinite() {
        SplittableRandom r = new SplittableRandom(7);
        for (int n : LENGTHS)
            for (float bad : NOT_FINITE)
                for (int where : new int[] {0, n - 1, n / 2, r.nextInt(n), n - 1 - Math.min(n - 1, 5)}) {
                    int off = r.nextInt(4);
                    float[] x = new float[off + n];
                    for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
                    x[off + where] = bad;
                    for (CpuKernels k : KERNELS)
                        assertEquals(
                                TemperatureDraw.NOT_FINITE,
                                k.argmax(x, off, n),
                                k.describe() + ": " + bad + " at " + where + " of " + n);
                }
    }

    @Test
    void nonFiniteValuesOutsideTheRowAreNotRead() {
        for (int n : LENGTHS) {
            float[] x = new float[n + 2];
            for (int i = 0; i < x.length; i++) x[i] = (i * 7919) % 1000;
            x[0] = Float.NaN;
            x[n + 1] = Float.POSITIVE_INFINITY;
            check(x, 1, n);
        }
    }

    @Test
    void allEqualRowsGiveTheFirstId() {
        for (int n : LENGTHS) {
            float[] x = new float[n];
            java.util.Arrays.fill(x, -3.5f);
            for (CpuKernels k : KERNELS) assertEquals(0, k.argmax(x, 0, n), k.describe() + " length " + n);
        }
    }

    private static void check(float[] x, int off, int n) {
        int want = TemperatureDraw.argmax(x, off, n);
        for (CpuKernels k : KERNELS)
            assertEquals(want, k.argmax(x, off, n), k.describe() + ": length " + n + " offset " + off);
    }
}
