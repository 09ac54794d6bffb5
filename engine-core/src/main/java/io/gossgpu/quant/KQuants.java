package io.gossgpu.quant;

import java.lang.foreign.MemorySegment;

/**
 * ggml's K-quants: super-blocks of 256 values made of 16 or 8 sub-blocks, each with its own small integer scale
 * (and, for Q2_K, Q4_K and Q5_K, a min) multiplied by the super-block's F16 {@code d} (and {@code dmin}). Decoded
 * exactly as ggml's {@code dequantize_row_q*_K}: {@code value = (d·scale)·q − (dmin·min)}, each product one float
 * rounding, no fused multiply-add.
 * <pre>
 *   Q2_K (84 B):  scales[16] (low nibble scale, high nibble min), qs[64] (2-bit), F16 d, F16 dmin
 *   Q3_K (110 B): hmask[32] (third bit), qs[64] (low 2 bits), scales[12] (16 × 6-bit, minus 32), F16 d
 *   Q4_K (144 B): F16 d, F16 dmin, scales[12] (8 × 6-bit scale and min, packed), qs[128] (nibbles)
 *   Q5_K (176 B): F16 d, F16 dmin, scales[12] as Q4_K, qh[32] (fifth bit), qs[128]
 *   Q6_K (210 B): ql[128] (low nibbles), qh[64] (high 2 bits), scales[16] (int8), F16 d
 * </pre>
 * Each 128 values of Q2_K, Q3_K and Q6_K read one 32-byte stretch of {@code qs} four times at bit shifts 0, 2, 4, 6
 * (16 values of a stretch per sub-block scale); each 64 values of Q4_K and Q5_K read one 32-byte stretch twice
 * (low then high nibbles), with the fifth bit of Q5_K at bits 2k and 2k+1 of {@code qh} for stretch k.
 */
public final class KQuants {
    public static final int QK = 256;

    private KQuants() {}

    public static void decodeQ2_K(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int s = 0; s < n / QK; s++) {
            long b = offset + s * 84L;
            float d = LegacyQuants.f16(data, b + 80), dmin = LegacyQuants.f16(data, b + 82);
            int y = o + s * QK, is = 0;
            for (int half = 0; half < 2; half++) {
                long q = b + 16 + 32L * half;
                for (int shift = 0; shift < 8; shift += 2)
                    for (int part = 0; part < 2; part++) {
                        int sc = data.get(LE.U8, b + is++) & 0xff;
                        float dl = d * (sc & 0xf), ml = dmin * (sc >>> 4);
                        for (int l = 0; l < 16; l++)
                            out[y++] = dl * ((data.get(LE.U8, q + 16 * part + l) & 0xff) >>> shift & 3) - ml;
                    }
            }
        }
    }

    /** Sub-block {@code i}'s 6-bit Q3_K scale (before the −32): low 4 bits from bytes 0..7, high 2 from bytes 8..11. */
    static int q3Scale(MemorySegment data, long scales, int i) {
        int low = i < 8 ? data.get(LE.U8, scales + i) & 0xf : (data.get(LE.U8, scales + i - 8) & 0xff) >>> 4;
        int high = (data.get(LE.U8, scales + 8 + i % 4) & 0xff) >>> 2 * (i / 4) & 3;
        return low | high << 4;
    }

    public static void decodeQ3_K(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int s = 0; s < n / QK; s++) {
            long b = offset + s * 110L, hmask = b, scales = b + 96;
            float d = LegacyQuants.f16(data, b + 108);
            int y = o + s * QK, is = 0, bit = 0;
            for (int half = 0; half < 2; half++) {
                long q = b + 32 + 32L * half;
                for (int shift = 0; shift < 8; shift += 2, bit++)
                    for (int part = 0; part < 2; part++) {
                        float dl = d * (q3Scale(data, scales, is++) - 32);
                        for (int l = 16 * part; l < 16 * part + 16; l++) {
                            int low = (data.get(LE.U8, q + l) & 0xff) >>> shift & 3;
                            int hi = (data.get(LE.U8, hmask + l) & 0xff) >>> bit & 1;
                            out[y++] = dl * (low - (hi != 0 ? 0 : 4));
                        }
                    }
            }
        }
    }

    /**
     * Q4_K / Q5_K sub-block {@code j}'s (0..7) 6-bit scale ({@code min = false}) or min: sub-blocks 0..3 keep theirs
     * in the low 6 bits of bytes j (scale) and j+4 (min); 4..7 take a nibble of byte j+4 and the top 2 bits of byte
     * j−4 (scale) or j (min).
     */
    static int k4ScaleMin(MemorySegment data, long scales, int j, boolean min) {
        int at = j < 4 ? (min ? j + 4 : j) : j + 4;
        int v = data.get(LE.U8, scales + at) & 0xff;
        if (j < 4) return v & 63;
        int top = (data.get(LE.U8, scales + (min ? j : j - 4)) & 0xff) >>> 6;
        return (min ? v >>> 4 : v & 0xf) | top << 4;
    }

    public static void decodeQ4_K(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int s = 0; s < n / QK; s++) {
            long b = offset + s * 144L;
            float d = LegacyQuants.f16(data, b), dmin = LegacyQuants.f16(data, b + 2);
            int y = o + s * QK;
            for (int k = 0; k < 4; k++) {
                long q = b + 16 + 32L * k;
                for (int nib = 0; nib < 2; nib++) {
                    int j = 2 * k + nib;
                    float dl = d * k4ScaleMin(data, b + 4, j, false), ml = dmin * k4ScaleMin(data, b + 4, j, true);
                    for (int l = 0; l < 32; l++)
                        out[y++] = dl * ((data.get(LE.U8, q + l) & 0xff) >>> 4 * nib & 0xf) - ml;
                }
            }
        }
    }

    public static void decodeQ5_K(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int s = 0; s < n / QK; s++) {
            long b = offset + s * 176L, qh = b + 16;
            float d = LegacyQuants.f16(data, b), dmin = LegacyQuants.f16(data, b + 2);
            int y = o + s * QK;
            for (int k = 0; k < 4; k++) {
                long q = b + 48 + 32L * k;
                for (int nib = 0; nib < 2; nib++) {
                    int j = 2 * k + nib;
                    float dl = d * k4ScaleMin(data, b + 4, j, false), ml = dmin * k4ScaleMin(data, b + 4, j, true);
                    for (int l = 0; l < 32; l++) {
                        int low = (data.get(LE.U8, q + l) & 0xff) >>> 4 * nib & 0xf;
                        int high = (data.get(LE.U8, qh + l) & 0xff) >>> j & 1;
                        out[y++] = dl * (low | high << 4) - ml;
                    }
                }
            }
        }
    }

    public static void decodeQ6_K(MemorySegment data, long offset, int n, float[] out, int o) {
        for (int s = 0; s < n / QK; s++) {
            long b = offset + s * 210L;
            float d = LegacyQuants.f16(data, b + 208);
            for (int half = 0; half < 2; half++) {
                long ql = b + 64L * half, qh = b + 128 + 32L * half, sc = b + 192 + 8L * half;
                int y = o + s * QK + 128 * half;
                for (int l = 0; l < 32; l++) {
                    int lo0 = data.get(LE.U8, ql + l) & 0xff, lo1 = data.get(LE.U8, ql + 32 + l) & 0xff;
                    int h = data.get(LE.U8, qh + l) & 0xff;
                    int is = l / 16;
                    // quarter k of this half: nibble (k / 2) of ql[l + 32·(k % 2)], high bits (h >> 2k) & 3
                    int[] q = {
                        (lo0 & 0xf) | (h & 3) << 4,
                        (lo1 & 0xf) | (h >>> 2 & 3) << 4,
                        lo0 >>> 4 | (h >>> 4 & 3) << 4,
                        lo1 >>> 4 | (h >>> 6 & 3) << 4
                    };
                    for (int k = 0; k < 4; k++)
                        out[y + 32 * k + l] = d * data.get(LE.U8, sc + is + 2 * k) * (q[k] - 32);
                }
            }
        }
    }
}
