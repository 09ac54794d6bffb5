package io.gossgpu.quant;

/** bfloat16: the top 16 bits of an IEEE float32 (subnormals, infinities and NaN included). */
public final class Bf16 {
    private Bf16() {}

    public static float toFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    /** Rounds to nearest, ties to even; NaN stays a (quiet) NaN. */
    public static short fromFloat(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7fffffff) > 0x7f800000) return (short) ((bits >>> 16) | 0x40);
        int roundingBias = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + roundingBias) >>> 16);
    }

    /** The float nearest to {@code f} that bfloat16 can hold exactly. */
    public static float round(float f) {
        return toFloat(fromFloat(f));
    }
}
