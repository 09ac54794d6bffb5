package io.gossgpu.quant;

import java.lang.foreign.MemorySegment;

/**
 * ggml's non-linear 4-bit types: each nibble indexes {@link #VALUES}, scaled per 32 values.
 * <pre>
 *   IQ4_NL (18 B per 32):  F16 d, 16 bytes of nibbles (byte j: element j low, j+16 high)   value = d·VALUES[q]
 *   IQ4_XS (136 B per 256): F16 d, u16 scales_h, 4 bytes scales_l, 8 × 16 bytes of nibbles;
 *          sub-block b's 6-bit scale ls = (scales_l[b/2] >> 4·(b%2) & 15) | (scales_h >> 2b & 3) << 4,
 *          value = (d·(ls − 32))·VALUES[q]
 * </pre>
 * llama-quantize gives the 2880-wide gpt-oss matrices IQ4_NL where a Q2_K or Q3_K file asks for a K-quant.
 */
public final class Iq4 {
    /** ggml's kvalues_iq4nl. */
    static final byte[] VALUES = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

    private Iq4() {}

    /** The signed integer (one of {@link #VALUES}) of element {@code i} of the IQ4_NL block at {@code b}. */
    public static int nl(MemorySegment data, long b, int i) {
        return VALUES[LegacyQuants.nibble(data, b + 2, i)];
    }

    public static void decodeNl(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int g = 0; g < n / 32; g++) {
            long b = offset + g * 18L;
            float d = LegacyQuants.f16(data, b);
            for (int i = 0; i < 32; i++) out[o + g * 32 + i] = d * nl(data, b, i);
        }
    }

    public static void decodeXs(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int s = 0; s < n / 256; s++) {
            long b = offset + s * 136L;
            float d = LegacyQuants.f16(data, b);
            int scalesH = data.get(LE.I16, b + 2) & 0xffff;
            for (int sub = 0; sub < 8; sub++) {
                int lo = (data.get(LE.U8, b + 4 + sub / 2) & 0xff) >>> 4 * (sub % 2) & 15;
                int ls = lo | (scalesH >>> 2 * sub & 3) << 4;
                float dl = d * (ls - 32);
                long qs = b + 8 + 16L * sub;
                int y = o + s * 256 + sub * 32;
                for (int i = 0; i < 32; i++) out[y + i] = dl * VALUES[LegacyQuants.nibble(data, qs, i)];
            }
        }
    }
}
