package io.gossgpu.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** MXFP4 in both byte layouts, against values worked out by hand from the format definitions. */
class Mxfp4Test {

    /** E2M1: sign bit 3, exponent bits 2..1 (bias 1), mantissa bit 0; exponent 0 is subnormal (0 or 0.5). */
    @Test
    void everyFp4CodeDecodesToItsE2M1Value() {
        float[] expected = {0f, 0.5f, 1f, 1.5f, 2f, 3f, 4f, 6f, -0f, -0.5f, -1f, -1.5f, -2f, -3f, -4f, -6f};
        for (int code = 0; code < 16; code++) {
            assertEquals(
                    Float.floatToRawIntBits(expected[code]), Float.floatToRawIntBits(Mxfp4.fp4(code)), "code " + code);
        }
        // −0 keeps its sign bit: 1/(−0) is −∞.
        assertEquals(Float.NEGATIVE_INFINITY, 1f / Mxfp4.value(8, 127));
    }

    @Test
    void e8m0ScaleExtremes() {
        assertEquals(1.5f, Mxfp4.value(3, 127)); // 2^0
        assertEquals(-12f, Mxfp4.value(15, 128)); // -6 × 2
        assertEquals(0x1p-128f, Mxfp4.value(1, 0)); // 0.5 × 2^-127: subnormal, exact
        assertEquals(0x1.8p-125f, Mxfp4.value(7, 0)); // 6 × 2^-127 = 1.5 × 2^-125
        assertEquals(0x1.8p127f, Mxfp4.value(3, 254)); // 1.5 × 2^127: finite below byte 255
        for (int code = 0; code < 16; code++) // byte 255 is NaN (OCP MX), zeros included
        assertTrue(Float.isNaN(Mxfp4.value(code, 255)), "code " + code);
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(Mxfp4.value(8, 0)));
    }

    @Test
    void openAiLayoutLowNibbleIsTheEvenElement() {
        try (Arena arena = Arena.ofConfined()) {
            // One block of 32: byte b = (odd << 4) | even. Fill with codes 0..15 then 15..0.
            byte[] codes = new byte[32];
            for (int i = 0; i < 16; i++) {
                codes[i] = (byte) i;
                codes[16 + i] = (byte) (15 - i);
            }
            MemorySegment blocks = arena.allocate(16);
            byte[] packed = Mxfp4.packOpenAi(codes);
            assertEquals((byte) 0x10, packed[0]); // elements 0 (code 0) and 1 (code 1)
            assertEquals((byte) 0x32, packed[1]);
            assertEquals((byte) 0xEF, packed[8]); // elements 16 (code 15) and 17 (code 14)
            MemorySegment.copy(packed, 0, blocks, LE.U8, 0, 16);
            MemorySegment scales = arena.allocate(1);
            scales.set(LE.U8, 0, (byte) 126); // × 0.5
            float[] out = new float[32];
            Mxfp4.decodeOpenAiRow(blocks, 0, scales, 0, 32, out, 0);
            float[] expected = new float[32];
            for (int i = 0; i < 32; i++) expected[i] = Mxfp4.fp4(codes[i]) * 0.5f;
            assertArrayEquals(expected, out);
            assertEquals(0.75f, out[3]); // code 3 = 1.5
            assertEquals(-3f, out[16]); // code 15 = -6
        }
    }

    @Test
    void ggmlLayoutSplitsHalvesAcrossNibbles() {
        try (Arena arena = Arena.ofConfined()) {
            byte[] codes = new byte[64];
            for (int i = 0; i < 64; i++) codes[i] = (byte) ((i * 7) & 0xf);
            byte[] scales = {(byte) 127, (byte) 130};
            byte[] packed = Mxfp4.packGgml(codes, scales);
            assertEquals(34, packed.length);
            assertEquals((byte) 127, packed[0]);
            // Byte 1 of block 0 holds element 0 (code 0) low and element 16 (code 16*7&15 = 0) high.
            assertEquals((byte) 0x00, packed[1]);
            // Byte 2 holds element 1 (code 7) low and element 17 (code 119&15 = 7) high.
            assertEquals((byte) 0x77, packed[2]);
            assertEquals((byte) 130, packed[17]);
            MemorySegment seg = arena.allocate(packed.length);
            MemorySegment.copy(packed, 0, seg, LE.U8, 0, packed.length);
            float[] out = new float[64];
            Mxfp4.decodeGgmlRow(seg, 0, 64, out, 0);
            for (int i = 0; i < 64; i++) {
                float scale = i < 32 ? 1f : 8f;
                assertEquals(Mxfp4.fp4(codes[i]) * scale, out[i], "element " + i);
            }
        }
    }

    @Test
    void bothLayoutsDecodeTheSameNumbers() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
        int n = 96;
        byte[] codes = randomBytes(rnd, n, 16), scales = randomBytes(rnd, n / 32, 256);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment oa = arena.allocate(n / 2),
                    os = arena.allocate(scales.length),
                    gg = arena.allocate(n / 32 * 17);
            MemorySegment.copy(Mxfp4.packOpenAi(codes), 0, oa, LE.U8, 0, n / 2);
            MemorySegment.copy(scales, 0, os, LE.U8, 0, scales.length);
            MemorySegment.copy(Mxfp4.packGgml(codes, scales), 0, gg, LE.U8, 0, n / 32 * 17);
            float[] a = new float[n], b = new float[n];
            Mxfp4.decodeOpenAiRow(oa, 0, os, 0, n, a, 0);
            Mxfp4.decodeGgmlRow(gg, 0, n, b, 0);
            for (int i = 0; i < n; i++)
                assertEquals(Float.floatToRawIntBits(a[i]), Float.floatToRawIntBits(b[i]), "element " + i);
        }
    }

    /** {@code n} values drawn from 0 until {@code bound}, as bytes. */
    private static byte[] randomBytes(java.util.SplittableRandom rnd, int n, int bound) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) rnd.nextInt(bound);
        return b;
    }

    /** The CUDA backend's upload repack: ggml blocks give exactly OpenAI's codes and scale planes. */
    @Test
    void ggmlRepacksToOpenAiBytes() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(8);
        int n = 96;
        byte[] codes = randomBytes(rnd, n, 16), scales = randomBytes(rnd, n / 32, 256);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment gg = arena.allocate(1 + n / 32 * 17);
            MemorySegment.copy(
                    Mxfp4.packGgml(codes, scales), 0, gg, LE.U8, 1, n / 32 * 17); // at an odd offset, as in a file
            byte[] c = new byte[2 + n / 2], s = new byte[1 + n / 32];
            Mxfp4.ggmlToOpenAi(gg, 1, n / 32, c, 2, s, 1);
            assertArrayEquals(Mxfp4.packOpenAi(codes), java.util.Arrays.copyOfRange(c, 2, c.length));
            assertArrayEquals(scales, java.util.Arrays.copyOfRange(s, 1, s.length));
        }
    }
}
