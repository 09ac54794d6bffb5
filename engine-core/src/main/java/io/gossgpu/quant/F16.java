package io.gossgpu.quant;

/** IEEE half precision, decoded exactly by the JDK (subnormals included). */
public final class F16 {
    private F16() {}

    public static float toFloat(short bits) {
        return Float.float16ToFloat(bits);
    }

    /** Rounds to nearest, ties to even. */
    public static short fromFloat(float f) {
        return Float.floatToFloat16(f);
    }
}
