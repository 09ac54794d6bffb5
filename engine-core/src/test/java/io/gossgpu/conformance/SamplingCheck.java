package io.gossgpu.conformance;

import io.gossgpu.generate.Sampler;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Checks a backend's plain temperature sample against {@link Sampler#sampleTemperature} on the same logits.
 *
 * <p>Why a device may differ at all: it sums {@code e_j = exp((l_j − max)/T)} in another order (blocks, then
 * threads) and its {@code exp} may differ from {@link Math#exp} by an ulp, so its {@code Z} and cumulative sums
 * differ from the host's by at most about {@code (n + 2)·2⁻⁵² · Z} (all terms are positive, each partial sum is
 * at most {@code Z}; every term's relative error is ≤ 2 ulp). A different id is therefore possible only where
 * {@code u·Z} lies within that distance of a cumulative sum. {@link #assertSameDraw} fails unless the ids are
 * equal or every host cumulative sum between the two ids is within {@code slack(n)·Z} of {@code u·Z}.
 */
public final class SamplingCheck {
    private SamplingCheck() {}

    /** The relative distance from a cumulative boundary below which two summation orders may disagree. */
    public static double slack(int n) {
        return 4.0 * (n + 2) * Math.ulp(1.0);
    }

    /** Host cumulative sums {@code C_i = Σ_{j≤i} e_j} (index n: Z), ascending order, as the contract defines them. */
    public static double[] cumulative(float[] logits, int offset, int n, double temperature) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < n; j++) max = Math.max(max, logits[offset + j]);
        double[] c = new double[n];
        double cum = 0;
        for (int j = 0; j < n; j++) {
            cum += Math.exp((logits[offset + j] - (double) max) / temperature);
            c[j] = cum;
        }
        return c;
    }

    public static void assertSameDraw(String what, float[] logits, int offset, int n, double temperature, double u, int got) {
        int want = Sampler.sampleTemperature(logits, offset, n, temperature, u);
        if (want == got) return;
        if (got < 0 || got >= n) fail(what + ": sampled id " + got + " outside 0.." + (n - 1) + " (host " + want + ")");
        double[] c = cumulative(logits, offset, n, temperature);
        double z = c[n - 1], target = u * z;
        for (int i = Math.min(want, got); i < Math.max(want, got); i++)
            if (Math.abs(c[i] - target) > slack(n) * z)
                fail(what + ": device sampled " + got + ", host " + want + " (T=" + temperature + ", u=" + u
                        + "): cumulative sum at " + i + " is " + Math.abs(c[i] - target) / z + "·Z from u·Z, beyond rounding "
                        + slack(n));
    }

    /**
     * Draws worth testing for these logits: near 0 and 1, random ones, and {@code u = C_k / Z} exactly on
     * host cumulative boundaries (including the one just before the largest jump and the last nonzero).
     */
    public static double[] draws(float[] logits, int offset, int n, double temperature, java.util.SplittableRandom r, int randomCount) {
        double[] c = cumulative(logits, offset, n, temperature);
        double z = c[n - 1];
        java.util.List<Double> u = new java.util.ArrayList<>(java.util.List.of(0.0, Math.ulp(1.0), 1e-9, 0.5,
                1 - 1e-9, Math.nextDown(1.0)));
        for (int i = 0; i < randomCount; i++) u.add(r.nextDouble());
        for (int i = 0; i < randomCount; i++) {
            double b = c[r.nextInt(n)] / z;
            if (b < 1) u.add(b);
        }
        int big = 0;
        for (int i = 1; i < n; i++) if (c[i] - c[i - 1] > c[big] - (big == 0 ? 0 : c[big - 1])) big = i;
        if (big > 0 && c[big - 1] / z < 1) u.add(c[big - 1] / z);
        return u.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
