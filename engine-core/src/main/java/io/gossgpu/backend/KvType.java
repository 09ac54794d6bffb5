package io.gossgpu.backend;

import io.gossgpu.GossException;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How a KV cache stores each key and value number. A row is one position's {@code kv_dim} keys (or values).
 *
 * <ul>
 *   <li>{@link #F32}: as computed, 4 bytes. The exact path; every other type is measured against it.
 *   <li>{@link #F16}: IEEE half, round to nearest even, 2 bytes.
 *   <li>{@link #BF16}: the upper 16 bits of the float after round to nearest even, 2 bytes.
 *   <li>{@link #Q8_0}: blocks of {@value #Q8_BLOCK} consecutive numbers of a row (the last block of a row may be
 *       shorter), each stored as int8 {@code q} with one F16 scale {@code dh} per block:
 *       <pre>
 *   amax = max |x|,  d = amax / 127 (float),  dh = f16(d),
 *   q = clamp(rint(x / d), −127, 127)   (q = 0 when d = 0),   x' = q · dh</pre>
 *       34 bytes per 32 numbers. A device buffer of {@code n} rows holds first all rows' quants, row-major
 *       ({@code n · kv_dim} bytes), then all rows' scales ({@code n · ceil(kv_dim / 32)} halves).
 * </ul>
 *
 * <p>{@link #round} is the reference formula: what a number reads back as once stored. Rounding twice changes
 * no value (for Q8_0: {@code q·dh} is exact in float, so the second pass finds {@code d = dh} and the same
 * {@code q}; a block whose scale underflows F16 reads as zeros, −0 on the first pass and +0 on the second); backends rely on that, rounding a batch's own keys and values in place before attending to them and
 * storing them afterwards (see {@link Backend#attention}).
 */
public enum KvType {
    F32(4),
    F16(2),
    BF16(2),
    Q8_0(1);

    /** Numbers per Q8_0 block. */
    public static final int Q8_BLOCK = 32;

    /** The type an engine uses unless told otherwise: half the bytes of F32, at the accuracy the README states. */
    public static final KvType DEFAULT = F16;

    private final int elementBytes;

    KvType(int elementBytes) {
        this.elementBytes = elementBytes;
    }

    /** The name the flags use: {@code f32}, {@code f16}, {@code bf16}, {@code q8_0}. */
    public String flagName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a flag value (case-insensitive); anything else is a GossException that lists the choices. */
    public static KvType parse(String s) {
        if (s != null) for (KvType t : values()) if (t.flagName().equalsIgnoreCase(s.trim())) return t;
        throw new GossException("unknown KV cache type '" + s + "'; choose one of " + choices());
    }

    /** {@code "f32, f16, bf16, q8_0"}. */
    public static String choices() {
        return Arrays.stream(values()).map(KvType::flagName).collect(Collectors.joining(", "));
    }

    /** Scale count of one Q8_0 row of {@code kvDim} numbers. */
    public static int q8Blocks(int kvDim) {
        return (kvDim + Q8_BLOCK - 1) / Q8_BLOCK;
    }

    /** Bytes one row of {@code kvDim} numbers takes (for Q8_0 its quants plus its scales). */
    public long rowBytes(int kvDim) {
        return this == Q8_0 ? kvDim + 2L * q8Blocks(kvDim) : (long) elementBytes * kvDim;
    }

    /** Bytes of {@code rows} rows of {@code kvDim} numbers. */
    public long bytes(long rows, int kvDim) {
        return rows * rowBytes(kvDim);
    }

    /**
     * Rounds {@code rows} consecutive rows of {@code kvDim} numbers, from {@code x[off]}, in place to what this type
     * stores (the formulas of the class comment). F32 changes nothing.
     */
    public void round(float[] x, int off, int rows, int kvDim) {
        switch (this) {
            case F32 -> {}
            case F16 -> {
                for (int i = off, end = off + rows * kvDim; i < end; i++) x[i] = roundF16(x[i]);
            }
            case BF16 -> {
                for (int i = off, end = off + rows * kvDim; i < end; i++) x[i] = roundBf16(x[i]);
            }
            case Q8_0 -> {
                for (int r = 0; r < rows; r++)
                    for (int b = 0; b < kvDim; b += Q8_BLOCK) {
                        int from = off + r * kvDim + b, to = from + Math.min(Q8_BLOCK, kvDim - b);
                        float d = q8Scale(x, from, to), dh = roundF16(d);
                        for (int i = from; i < to; i++) x[i] = q8Quant(x[i], d) * dh;
                    }
            }
        }
    }

    /** f16(x): IEEE half, round to nearest even, back to float. */
    public static float roundF16(float x) {
        return Float.float16ToFloat(Float.floatToFloat16(x));
    }

    /** The float whose bits are the upper 16 of {@code x}'s after round to nearest even (NaN stays NaN). */
    public static float roundBf16(float x) {
        if (Float.isNaN(x)) return x;
        return Float.intBitsToFloat(bf16Bits(x) << 16);
    }

    /** The 16 BF16 bits of {@code x}, round to nearest even (NaN: a quiet NaN). */
    public static int bf16Bits(float x) {
        int b = Float.floatToRawIntBits(x);
        if (Float.isNaN(x)) return ((b >>> 16) | 0x40) & 0xffff;
        return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
    }

    /** Q8_0's unrounded scale {@code d = amax / 127} of {@code x[from .. to)}. */
    public static float q8Scale(float[] x, int from, int to) {
        float amax = 0;
        for (int i = from; i < to; i++) amax = Math.max(amax, Math.abs(x[i]));
        return amax / 127f;
    }

    /** Q8_0's quant of {@code x} under unrounded scale {@code d}: {@code clamp(rint(x / d), −127, 127)}, 0 when d = 0. */
    public static int q8Quant(float x, float d) {
        if (d == 0) return 0;
        return (int) Math.max(-127, Math.min(127, Math.rint(x / d)));
    }
}
