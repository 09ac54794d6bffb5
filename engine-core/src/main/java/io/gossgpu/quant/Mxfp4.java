package io.gossgpu.quant;

import java.lang.foreign.MemorySegment;

/**
 * MXFP4 (OCP microscaling): blocks of 32 FP4 (E2M1) values sharing one E8M0 scale.
 *
 * <pre>
 *   value = FP4[code] × 2^(scale − 127)
 *   FP4   = {0, .5, 1, 1.5, 2, 3, 4, 6, −0, −.5, −1, −1.5, −2, −3, −4, −6}   (bit 3 is the sign)
 * </pre>
 *
 * The product is taken exactly and rounded once to float ({@link Math#scalb}): scale 0 gives
 * subnormal floats. Scale byte 255 is NaN, as the OCP MX specification defines it, for every code of
 * its block (zeros included): real checkpoints never use it, and NaN is the one reading that every
 * backend gives alike whether it scales each value or each block's sum ({@code --check-tensors}
 * reports such a byte, the runtime guard names the op where its NaN surfaces).
 *
 * <p>Two byte layouts hold the same numbers:
 * <ul>
 *   <li>OpenAI's checkpoint: a row of {@code n} values is {@code n/2} bytes of codes, low nibble =
 *       even element, high nibble = odd element, plus {@code n/32} scale bytes kept in a separate
 *       tensor.</li>
 *   <li>ggml's {@code block_mxfp4}: per 32 values, 1 scale byte then 16 bytes; byte {@code j} holds
 *       element {@code j} in its low nibble and element {@code j+16} in its high nibble. (ggml's own
 *       table stores doubled FP4 values with a halved scale; the numbers are the same.)</li>
 * </ul>
 */
public final class Mxfp4 {
    public static final int BLOCK = 32;
    /** Bytes of one ggml block: scale + 16 bytes of codes. */
    public static final int GGML_BLOCK_BYTES = 17;

    private static final float[] FP4 = {
        +0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f, -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f
    };

    private Mxfp4() {}

    /** The E2M1 value of a 4-bit code (bit 3 = sign). */
    public static float fp4(int code) {
        return FP4[code & 0xf];
    }

    /** The E8M0 scale byte reserved for NaN. */
    public static final int NAN_SCALE = 255;

    /** FP4[code] × 2^(scale − 127), exact then rounded once; NaN for scale byte 255. */
    public static float value(int code, int scaleByte) {
        if ((scaleByte & 0xff) == NAN_SCALE) return Float.NaN;
        return Math.scalb(FP4[code & 0xf], (scaleByte & 0xff) - 127);
    }

    /** Decodes one row of {@code n} values in OpenAI's layout (codes and scales in separate tensors). */
    public static void decodeOpenAiRow(
            MemorySegment codes,
            long codeOffset,
            MemorySegment scales,
            long scaleOffset,
            int n,
            float[] out,
            int outOffset) {
        for (int g = 0; g < n / BLOCK; g++) {
            int scale = scales.get(LE.U8, scaleOffset + g) & 0xff;
            for (int b = 0; b < BLOCK / 2; b++) {
                int packed = codes.get(LE.U8, codeOffset + (long) g * (BLOCK / 2) + b) & 0xff;
                int o = outOffset + g * BLOCK + 2 * b;
                out[o] = value(packed & 0xf, scale);
                out[o + 1] = value(packed >>> 4, scale);
            }
        }
    }

    /** Decodes one row of {@code n} values stored as ggml {@code block_mxfp4} blocks. */
    public static void decodeGgmlRow(MemorySegment data, long offset, int n, float[] out, int outOffset) {
        for (int g = 0; g < n / BLOCK; g++) {
            long block = offset + (long) g * GGML_BLOCK_BYTES;
            int scale = data.get(LE.U8, block) & 0xff;
            for (int j = 0; j < BLOCK / 2; j++) {
                int packed = data.get(LE.U8, block + 1 + j) & 0xff;
                int o = outOffset + g * BLOCK + j;
                out[o] = value(packed & 0xf, scale);
                out[o + BLOCK / 2] = value(packed >>> 4, scale);
            }
        }
    }

    /**
     * Decodes one row of Ollama's first gpt-oss layout (its type id 4): per 32 values, the scale byte then 16 bytes
     * in OpenAI's nibble order (byte j: element 2j low, 2j+1 high).
     */
    public static void decodeOllamaRow(MemorySegment data, long offset, int n, float[] out, int outOffset) {
        for (int g = 0; g < n / BLOCK; g++) {
            long block = offset + (long) g * GGML_BLOCK_BYTES;
            decodeOpenAiRow(data, block + 1, data, block, BLOCK, out, outOffset + g * BLOCK);
        }
    }

    /** Rewrites {@code blocks} Ollama-layout blocks (see {@link #decodeOllamaRow}) as ggml {@code block_mxfp4}s: same scales, codes reordered. */
    public static void ollamaToGgml(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long blocks) {
        byte[] in = new byte[GGML_BLOCK_BYTES], out = new byte[GGML_BLOCK_BYTES];
        for (long b = 0; b < blocks; b++) {
            MemorySegment.copy(src, LE.U8, srcOffset + b * GGML_BLOCK_BYTES, in, 0, GGML_BLOCK_BYTES);
            out[0] = in[0];
            for (int j = 0; j < BLOCK / 2; j++) {
                int lo = nibbleOfOpenAi(in, j), hi = nibbleOfOpenAi(in, j + BLOCK / 2);
                out[1 + j] = (byte) (lo | hi << 4);
            }
            MemorySegment.copy(out, 0, dst, LE.U8, dstOffset + b * GGML_BLOCK_BYTES, GGML_BLOCK_BYTES);
        }
    }

    /**
     * Rewrites {@code blocks} ggml {@code block_mxfp4}s from {@code src} at {@code srcOffset} in OpenAI's layout: 16
     * code bytes per block to {@code codes} from {@code codesAt} (byte j: element 2j low, 2j+1 high), the scale bytes
     * to {@code scales} from {@code scalesAt}.
     */
    public static void ggmlToOpenAi(
            MemorySegment src, long srcOffset, int blocks, byte[] codes, int codesAt, byte[] scales, int scalesAt) {
        byte[] in = new byte[GGML_BLOCK_BYTES];
        for (int b = 0; b < blocks; b++) {
            MemorySegment.copy(src, LE.U8, srcOffset + (long) b * GGML_BLOCK_BYTES, in, 0, GGML_BLOCK_BYTES);
            scales[scalesAt + b] = in[0];
            for (int j = 0; j < BLOCK / 2; j++) {
                int e = 2
                        * j; // elements e and e + 1: ggml keeps element i < 16 in byte i's low nibble, i >= 16 in byte
                // i - 16's high
                codes[codesAt + b * (BLOCK / 2) + j] = (byte) (nibbleOfGgml(in, e) | nibbleOfGgml(in, e + 1) << 4);
            }
        }
    }

    /** Code of element {@code e} of a ggml block held in {@code block} (scale at 0). */
    private static int nibbleOfGgml(byte[] block, int e) {
        int packed = block[1 + e % (BLOCK / 2)] & 0xff;
        return e < BLOCK / 2 ? packed & 0xf : packed >>> 4;
    }

    /** Code of element {@code e} of an Ollama-layout block held in {@code block} (scale at 0). */
    private static int nibbleOfOpenAi(byte[] block, int e) {
        int packed = block[1 + e / 2] & 0xff;
        return (e & 1) == 0 ? packed & 0xf : packed >>> 4;
    }

    /**
     * Quantizes 32 values to one block: writes their codes to {@code codes[0..32)} and returns the E8M0 scale byte.
     * Of the two power-of-two scales that matter, 2^e with {@code e = floor(log2 max|x|) − 2} (OCP's choice; values
     * past 6·2^e saturate) and 2^(e+1) (none saturates), it keeps the one with the smaller squared error; each value
     * rounds to the nearest FP4 magnitude, ties to the even code, and keeps its sign (−0 included).
     */
    public static int quantizeBlock(float[] x, int offset, byte[] codes) {
        float amax = 0;
        for (int i = 0; i < BLOCK; i++) amax = Math.max(amax, Math.abs(x[offset + i]));
        if (amax == 0 || !Float.isFinite(amax)) {
            for (int i = 0; i < BLOCK; i++) codes[i] = (byte) (Float.floatToRawIntBits(x[offset + i]) < 0 ? 8 : 0);
            return amax == 0 ? 127 : NAN_SCALE;
        }
        int e = Math.getExponent(amax) - 2;
        int lo = Math.clamp(e + 127, 0, 254), hi = Math.clamp(e + 128, 0, 254);
        return squaredError(x, offset, lo) <= squaredError(x, offset, hi)
                ? encode(x, offset, lo, codes)
                : encode(x, offset, hi, codes);
    }

    private static double squaredError(float[] x, int offset, int scaleByte) {
        double sse = 0;
        for (int i = 0; i < BLOCK; i++) {
            float v = x[offset + i];
            double err = v - value(nearestCode(Math.scalb(v, 127 - scaleByte)), scaleByte);
            sse += err * err;
        }
        return sse;
    }

    private static int encode(float[] x, int offset, int scaleByte, byte[] codes) {
        for (int i = 0; i < BLOCK; i++) codes[i] = (byte) nearestCode(Math.scalb(x[offset + i], 127 - scaleByte));
        return scaleByte;
    }

    /** The FP4 code nearest to {@code v} (saturating at ±6; ties to the even code); the sign bit follows {@code v}'s. */
    static int nearestCode(float v) {
        float m = Math.abs(v);
        int code = m <= 0.25f
                ? 0
                : m < 0.75f ? 1 : m <= 1.25f ? 2 : m < 1.75f ? 3 : m <= 2.5f ? 4 : m < 3.5f ? 5 : m <= 5f ? 6 : 7;
        return Float.floatToRawIntBits(v) < 0 ? code | 8 : code;
    }

    /** Packs 4-bit codes of a row ({@code n} codes) into OpenAI's nibble order: {@code n/2} bytes. */
    public static byte[] packOpenAi(byte[] codes) {
        byte[] out = new byte[codes.length / 2];
        for (int b = 0; b < out.length; b++) out[b] = (byte) ((codes[2 * b] & 0xf) | (codes[2 * b + 1] & 0xf) << 4);
        return out;
    }

    /** Packs a row's codes and per-block scales into ggml {@code block_mxfp4} blocks. */
    public static byte[] packGgml(byte[] codes, byte[] scales) {
        int blocks = codes.length / BLOCK;
        byte[] out = new byte[blocks * GGML_BLOCK_BYTES];
        for (int g = 0; g < blocks; g++) {
            int base = g * GGML_BLOCK_BYTES;
            out[base] = scales[g];
            for (int j = 0; j < BLOCK / 2; j++) {
                int lo = codes[g * BLOCK + j] & 0xf, hi = codes[g * BLOCK + j + BLOCK / 2] & 0xf;
                out[base + 1 + j] = (byte) (lo | hi << 4);
            }
        }
        return out;
    }
}
