package io.gossgpu.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.model.ModelConfig;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class KvTypeTest {
    private static float[] random(long seed, int n, double scale) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) (r.nextGaussian() * scale);
        return x;
    }

    @Test
    void f16AndBf16RoundToNearestEven() {
        float[] x = {1f, 1 + 0x1p-11f, 1 + 0x1p-11f + 0x1p-20f, 1 + 3 * 0x1p-11f, 65520f, 1e-8f, -2.5f};
        KvType.F16.round(x, 0, 1, x.length);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to the even one (1); a hair above goes up
        assertArrayEquals(new float[] {1f, 1f, 1 + 0x1p-10f, 1 + 4 * 0x1p-11f, Float.POSITIVE_INFINITY, 0f, -2.5f}, x);
        float[] y = {1 + 0x1p-8f, 1 + 3 * 0x1p-8f, 1 + 0x1p-8f + 0x1p-20f, -3f};
        KvType.BF16.round(y, 0, 1, y.length);
        assertArrayEquals(new float[] {1f, 1 + 4 * 0x1p-8f, 1 + 0x1p-7f, -3f}, y);
        assertTrue(Float.isNaN(KvType.roundBf16(Float.NaN)));
    }

    @Test
    void q8BlocksOf32WithAnF16ScaleAndAShortLastBlock() {
        int kvDim = 40; // one block of 32, one of 8
        float[] x = new float[kvDim];
        for (int i = 0; i < kvDim; i++) x[i] = i < 32 ? (i - 16) * 0.1f : (i - 36) * 3f;
        float[] q = x.clone();
        KvType.Q8_0.round(q, 0, 1, kvDim);
        float d0 = 1.6f / 127, d1 = 12f / 127;
        for (int i = 0; i < kvDim; i++) {
            float d = i < 32 ? d0 : d1;
            assertEquals((float) Math.rint(x[i] / d) * KvType.roundF16(d), q[i], 0f, "element " + i);
        }
        assertEquals(-1.6f, q[0], 1.6f / 127); // the block's largest magnitude maps to ±127 steps
        float[] zeros = new float[8];
        KvType.Q8_0.round(zeros, 0, 1, 8);
        assertArrayEquals(new float[8], zeros);
    }

    @ParameterizedTest
    @EnumSource(KvType.class)
    void roundingTwiceChangesNothing(KvType t) {
        for (double scale : new double[] {1e-6, 1, 1e3}) {
            float[] x = random(7, 3 * 72, scale);
            t.round(x, 0, 3, 72);
            float[] again = x.clone();
            t.round(again, 0, 3, 72);
            for (int i = 0; i < x.length; i++) // == : a Q8_0 block whose scale underflows f16 reads as ±0
            assertTrue(
                        x[i] == again[i],
                        t + " at scale " + scale + ", element " + i + ": " + x[i] + " then " + again[i]);
        }
    }

    @ParameterizedTest
    @EnumSource(KvType.class)
    void roundingErrorIsWithinTheTypesStep(KvType t) {
        float[] x = random(11, 64 * 64, 2), r = x.clone();
        t.round(r, 0, 64, 64);
        double worst = 0;
        for (int i = 0; i < x.length; i++) {
            int b = i / 32 * 32;
            double amax = 0;
            for (int j = b; j < b + 32; j++) amax = Math.max(amax, Math.abs(x[j]));
            double err = Math.abs(x[i] - r[i]);
            worst = Math.max(
                    worst,
                    switch (t) {
                        case F32 -> err;
                        case F16 -> err / (Math.abs(x[i]) * 0x1p-11 + 0x1p-25);
                        case BF16 -> err / (Math.abs(x[i]) * 0x1p-8);
                        case Q8_0 -> err / (amax / 127 * 0.5 * 1.001 + amax * 0x1p-11);
                    });
        }
        assertTrue(worst <= (t == KvType.F32 ? 0 : 1), t + ": worst error " + worst + " of half a step");
    }

    @Test
    void rowBytesAndParse() {
        assertEquals(2048, KvType.F32.rowBytes(512));
        assertEquals(1024, KvType.F16.rowBytes(512));
        assertEquals(1024, KvType.BF16.rowBytes(512));
        assertEquals(512 + 32, KvType.Q8_0.rowBytes(512));
        assertEquals(40 + 4, KvType.Q8_0.rowBytes(40));
        assertEquals(KvType.Q8_0, KvType.parse("Q8_0"));
        assertEquals(KvType.BF16, KvType.parse(" bf16 "));
        GossException e = assertThrows(GossException.class, () -> KvType.parse("q4_0"));
        assertEquals("unknown KV cache type 'q4_0'; choose one of f32, f16, bf16, q8_0", e.getMessage());
    }

    /** gpt-oss-20b at its full 131072 context: F16 is half of F32, Q8_0 17/64 ≈ 0.27 of it. */
    @Test
    void theSpecPricesEachType() {
        ModelConfig c = ModelConfig.gptOss20b();
        long f32 = new KvCacheSpec(c, 131072, 0, KvType.F32).bytes();
        assertEquals(f32 / 2, new KvCacheSpec(c, 131072, 0, KvType.F16).bytes());
        assertEquals(f32 * 17 / 64, new KvCacheSpec(c, 131072, 0, KvType.Q8_0).bytes());
        assertTrue(new KvCacheSpec(c, 8192, 2048, KvType.F16).describe().contains("(f16, 24 layers"));
        assertEquals(Arrays.asList(KvType.values()).indexOf(KvType.F16), 1); // the kernels' kvType ordinals
    }
}
