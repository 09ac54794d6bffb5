package io.gossgpu.quant;

import java.lang.foreign.MemorySegment;

/**
 * ggml block_q8_0: per 32 values, an F16 scale {@code d} then 32 signed bytes {@code q}:
 * {@code value = d × q}.
 */
public final class Q8_0 {
    public static final int BLOCK = 32;
    public static final int BLOCK_BYTES = 34;

    private Q8_0() {}

    public static void decodeRow(MemorySegment data, long offset, int n, float[] out, int outOffset) {
        for (int g = 0; g < n / BLOCK; g++) {
            long block = offset + (long) g * BLOCK_BYTES;
            float d = F16.toFloat(data.get(LE.I16, block));
            for (int j = 0; j < BLOCK; j++) out[outOffset + g * BLOCK + j] = d * data.get(LE.U8, block + 2 + j);
        }
    }

    /**
     * Quantizes {@code n} floats the way ggml does: d = max|x| / 127, q = round(x / d). Non-finite values stay
     * non-finite in every product: a block holding NaN gets d = NaN; one holding ±Inf gets d = Inf, code ±127 at the
     * infinite value and 0 elsewhere (ggml's rule would give all codes 0 there).
     */
    public static byte[] quantizeRow(float[] x, int offset, int n) {
        byte[] out = new byte[n / BLOCK * BLOCK_BYTES];
        for (int g = 0; g < n / BLOCK; g++) {
            float amax = 0;
            for (int j = 0; j < BLOCK; j++) amax = Math.max(amax, Math.abs(x[offset + g * BLOCK + j]));
            float d = amax / 127f;
            float id = d != 0 ? 1f / d : 0f;
            short dh = F16.fromFloat(d);
            int base = g * BLOCK_BYTES;
            out[base] = (byte) dh;
            out[base + 1] = (byte) (dh >>> 8);
            for (int j = 0; j < BLOCK; j++) {
                float v = x[offset + g * BLOCK + j];
                out[base + 2 + j] = (byte) (Float.isInfinite(v) ? (v > 0 ? 127 : -127) : Math.round(v * id));
            }
        }
        return out;
    }
}
