package io.gossgpu.quant;

import java.lang.foreign.MemorySegment;

/**
 * ggml's first block formats, 32 values a block, decoded exactly as ggml does ({@code dequantize_row_*}):
 * each value is one float product (and, for the _1 types, one sum) of the block's F16 constants and its integer.
 * <pre>
 *   Q4_0 (18 B): F16 d, 16 bytes of nibbles          value = d·(q − 8)
 *   Q4_1 (20 B): F16 d, F16 m, 16 bytes of nibbles   value = d·q + m
 *   Q5_0 (22 B): F16 d, u32 high bits, 16 bytes      value = d·(q − 16)
 *   Q5_1 (24 B): F16 d, F16 m, u32 high bits, 16 B   value = d·q + m
 * </pre>
 * Byte {@code j} of the nibbles holds element {@code j} (low nibble) and element {@code j+16} (high nibble); bit
 * {@code i} of the 5-bit types' u32 is the fifth bit of element {@code i}.
 */
public final class LegacyQuants {
    public static final int BLOCK = 32;

    private LegacyQuants() {}

    /** The signed integer of element {@code i} of a Q4_0 / Q5_0 block at {@code b} (its {@code q − 8} or {@code q − 16}). */
    public static int q4_0(MemorySegment data, long b, int i) {
        return nibble(data, b + 2, i) - 8;
    }

    public static int q5_0(MemorySegment data, long b, int i) {
        return (nibble(data, b + 6, i) | highBit(data, b + 2, i) << 4) - 16;
    }

    public static void decodeQ4_0(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int g = 0; g < n / BLOCK; g++) {
            long b = offset + g * 18L;
            float d = f16(data, b);
            for (int i = 0; i < BLOCK; i++) out[o + g * BLOCK + i] = d * q4_0(data, b, i);
        }
    }

    public static void decodeQ4_1(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int g = 0; g < n / BLOCK; g++) {
            long b = offset + g * 20L;
            float d = f16(data, b), m = f16(data, b + 2);
            for (int i = 0; i < BLOCK; i++) out[o + g * BLOCK + i] = d * nibble(data, b + 4, i) + m;
        }
    }

    public static void decodeQ5_0(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int g = 0; g < n / BLOCK; g++) {
            long b = offset + g * 22L;
            float d = f16(data, b);
            for (int i = 0; i < BLOCK; i++) out[o + g * BLOCK + i] = d * q5_0(data, b, i);
        }
    }

    public static void decodeQ5_1(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int g = 0; g < n / BLOCK; g++) {
            long b = offset + g * 24L;
            float d = f16(data, b), m = f16(data, b + 2);
            for (int i = 0; i < BLOCK; i++)
                out[o + g * BLOCK + i] = d * (nibble(data, b + 8, i) | highBit(data, b + 4, i) << 4) + m;
        }
    }

    /** Element {@code i} (0..31) of 16 bytes of nibbles at {@code qs}: low nibbles hold 0..15, high ones 16..31. */
    static int nibble(MemorySegment data, long qs, int i) {
        int v = data.get(LE.U8, qs + (i & 15)) & 0xff;
        return i < 16 ? v & 0xf : v >>> 4;
    }

    private static int highBit(MemorySegment data, long qh, int i) {
        return data.get(LE.I32, qh) >>> i & 1;
    }

    static float f16(MemorySegment data, long at) {
        return F16.toFloat(data.get(LE.I16, at));
    }
}
