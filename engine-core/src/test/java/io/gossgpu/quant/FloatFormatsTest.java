package io.gossgpu.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** BF16, F16 and Q8_0 edge values, worked out by hand from the bit layouts. */
class FloatFormatsTest {
    @Test
    void bf16DecodesSubnormalsInfinitiesAndNegativeZero() {
        assertEquals(1f, Bf16.toFloat((short) 0x3F80));
        assertEquals(-2f, Bf16.toFloat((short) 0xC000));
        assertEquals(0x1p-133f, Bf16.toFloat((short) 0x0001)); // smallest subnormal: 2^-126 × 2^-7
        assertEquals(0x1.fcp-127f, Bf16.toFloat((short) 0x007F)); // largest subnormal: (127/128) × 2^-126
        assertEquals(Float.POSITIVE_INFINITY, Bf16.toFloat((short) 0x7F80));
        assertTrue(Float.isNaN(Bf16.toFloat((short) 0x7FC0)));
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(Bf16.toFloat((short) 0x8000)));
    }

    @Test
    void bf16RoundsToNearestEven() {
        assertEquals((short) 0x3F80, Bf16.fromFloat(Float.intBitsToFloat(0x3F808000))); // tie → even (down)
        assertEquals((short) 0x3F82, Bf16.fromFloat(Float.intBitsToFloat(0x3F818000))); // tie → even (up)
        assertEquals((short) 0x3F81, Bf16.fromFloat(Float.intBitsToFloat(0x3F808001))); // above tie → up
        assertTrue(Float.isNaN(Bf16.round(Float.NaN)));
    }

    @Test
    void f16DecodesSubnormalsAndExtremes() {
        assertEquals(0x1p-24f, F16.toFloat((short) 0x0001));
        assertEquals(65504f, F16.toFloat((short) 0x7BFF));
        assertEquals(-0.5f, F16.toFloat((short) 0xB800));
        assertEquals(Float.NEGATIVE_INFINITY, F16.toFloat((short) 0xFC00));
    }

    @Test
    void q8_0IsScaleTimesSignedByte() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = arena.allocate(34);
            block.set(LE.I16, 0, (short) 0x3800); // d = 0.5
            for (int j = 0; j < 32; j++) block.set(LE.U8, 2 + j, (byte) (j - 16 + (j == 0 ? -112 : 0)));
            float[] out = new float[32];
            Q8_0.decodeRow(block, 0, 32, out, 0);
            assertEquals(-64f, out[0]); // q = -128
            assertEquals(-7.5f, out[1]); // q = -15
            assertEquals(7.5f, out[31]); // q = 15
            float[] x = new float[32];
            for (int j = 0; j < 32; j++) x[j] = (j - 16) * 0.25f;
            byte[] q = Q8_0.quantizeRow(x, 0, 32);
            MemorySegment.copy(q, 0, block, LE.U8, 0, 34);
            Q8_0.decodeRow(block, 0, 32, out, 0);
            for (int j = 0; j < 32; j++) assertEquals(x[j], out[j], 4f / 127 / 2 + 1e-3, "j=" + j);
        }
    }
}
