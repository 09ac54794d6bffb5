package io.gossgpu.cpu.compute;

/**
 * e^x in float by the polynomial of {@code backend-cpu/kernels/vexp.h}, the same operations in the same order (Java's
 * float arithmetic and {@link Math#fma} are exact IEEE operations in every JIT tier), so scalar tails, the Vector
 * API kernels ({@link VectorKernels#exp}) and the native kernels agree bit for bit and never depend on which
 * compiler tier ran. {@code Math.exp} and the Vector API's {@code EXP} are not used on hot paths: the JIT may
 * replace either with an intrinsic that rounds differently from the interpreter.
 *
 * <p>x = n·ln2 + r with n = round(x·log2 e) (ties to even, by adding and subtracting 1.5·2^23), ln2 in two
 * parts; e^r by a degree-6 polynomial; times 2^n built in the exponent bits. Below −87.34 the result is 0,
 * above 88.72 it is +∞; relative error about 1e-7.
 */
public final class ExpF {
    private ExpF() {}

    static final float LO = -87.33654f, HI = 88.72283f;
    static final float LOG2E = 1.44269504088896341f, LN2_HI = 0.693359375f, LN2_LO = -2.12194440e-4f;
    static final float P0 = 1.9875691500e-4f,
            P1 = 1.3981999507e-3f,
            P2 = 8.3334519073e-3f,
            P3 = 4.1665795894e-2f,
            P4 = 1.6666665459e-1f,
            P5 = 5.0000001201e-1f;
    /** 1.5·2^23: adding and subtracting it rounds a float of magnitude below 2^22 to an integer, ties to even. */
    static final float ROUND = 12582912f;

    public static float exp(float x) {
        if (x < LO) return 0f;
        if (x > HI) return Float.POSITIVE_INFINITY;
        if (Float.isNaN(x)) return x;
        float n = (x * LOG2E + ROUND) - ROUND;
        float r = Math.fma(n, -LN2_HI, x);
        r = Math.fma(n, -LN2_LO, r);
        float p = P0;
        p = Math.fma(p, r, P1);
        p = Math.fma(p, r, P2);
        p = Math.fma(p, r, P3);
        p = Math.fma(p, r, P4);
        p = Math.fma(p, r, P5);
        p = Math.fma(p, r * r, r + 1f);
        return p * Float.intBitsToFloat(((int) n + 127) << 23);
    }
}
