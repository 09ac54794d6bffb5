package io.gossgpu.conformance;

import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.backend.TemperatureDraw;

/**
 * Checks a backend's plain temperature sample against {@link io.gossgpu.backend.TemperatureDraw#draw} on the same logits.
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

    public static void assertSameDraw(
            String what, float[] logits, int offset, int n, double temperature, double u, int got) {
        int want = TemperatureDraw.draw(logits, offset, n, temperature, u);
        if (want == got) return;
        if (got < 0 || got >= n) fail(what + ": sampled id " + got + " outside 0.." + (n - 1) + " (host " + want + ")");
        double[] c = cumulative(logits, offset, n, temperature);
        double z = c[n - 1], target = u * z;
        for (int i = Math.min(want, got); i < Math.max(want, got); i++)
            if (Math.abs(c[i] - target) > slack(n) * z)
                fail(what + ": device sampled " + got + ", host " + want + " (T=" + temperature + ", u=" + u
                        + "): cumulative sum at " + i + " is " + Math.abs(c[i] - target) / z
                        + "·Z from u·Z, beyond rounding "
                        + slack(n));
    }

    /**
     * Draws worth testing for these logits: near 0 and 1, random ones, and {@code u = C_k / Z} exactly on
     * host cumulative boundaries (including the one just before the largest jump and the last nonzero).
     */
    public static double[] draws(
            float[] logits, int offset, int n, double temperature, java.util.SplittableRandom r, int randomCount) {
        double[] c = cumulative(logits, offset, n, temperature);
        double z = c[n - 1];
        java.util.List<Double> u = new java.util.ArrayList<>(
                java.util.List.of(0.0, Math.ulp(1.0), 1e-9, 0.5, 1 - 1e-9, Math.nextDown(1.0)));
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

    /** A backend's sampling kernels run on a one-row tensor taken as the logits. */
    public interface RowSampler {
        int sample(io.gossgpu.backend.DeviceTensor row, double temperature, double u);
    }

    /** Logit vectors a model cannot produce at will: gaussian, ties, very peaked, very flat, ids whose e_j underflows to 0. */
    public static float[] logits(String kind, int n, java.util.SplittableRandom r) {
        float[] l = new float[n];
        for (int i = 0; i < n; i++) {
            l[i] = switch (kind) {
                case "gaussian" -> (float) (r.nextGaussian() * 3);
                case "ties" -> r.nextInt(3); // many equal logits: equal e_j
                case "peaked" -> i == n / 3 ? 40f : (float) r.nextGaussian();
                case "flat" -> (float) (r.nextGaussian() * 1e-3);
                case "holes" ->
                    r.nextInt(4) == 0 ? -1e5f : (float) r.nextGaussian(); // e_j = 0 for a quarter of the ids
                default -> throw new IllegalArgumentException(kind);
            };
        }
        return l;
    }

    /**
     * A device sampler against {@link io.gossgpu.backend.TemperatureDraw#draw}: gpt-oss's vocabulary (201088) and odd sizes around
     * the kernels' chunk size, every {@link #logits} kind, temperatures 0.3, 1, 2. Random draws must give the host's
     * id exactly (they land within rounding of a boundary with probability ~n·2⁻⁵²); draws near 0 and 1 and exactly
     * on host cumulative boundaries must pass {@link #assertSameDraw}. Returns {checked, differing} draw counts.
     */
    public static int[] checkDeviceSampler(io.gossgpu.backend.Backend b, RowSampler s) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(17);
        int checked = 0, differing = 0;
        for (int n : new int[] {201088, 1, 2, 7, 255, 2047, 2048, 2049, 6145, 100003}) {
            for (String kind : new String[] {"gaussian", "ties", "peaked", "flat", "holes"}) {
                float[] l = logits(kind, n, r);
                try (io.gossgpu.backend.DeviceTensor t = b.allocate(1, n)) {
                    b.write(t, l);
                    for (double temperature : new double[] {0.3, 1, 2}) {
                        for (int k = 0; k < 4; k++) {
                            double u = r.nextDouble();
                            org.junit.jupiter.api.Assertions.assertEquals(
                                    TemperatureDraw.draw(l, 0, n, temperature, u),
                                    s.sample(t, temperature, u),
                                    kind + " n=" + n + " T=" + temperature + " u=" + u);
                            checked++;
                        }
                        for (double u : draws(l, 0, n, temperature, r, n > 10000 ? 3 : 6)) {
                            int got = s.sample(t, temperature, u);
                            assertSameDraw(kind + " n=" + n, l, 0, n, temperature, u, got);
                            checked++;
                            if (got != TemperatureDraw.draw(l, 0, n, temperature, u)) differing++;
                        }
                    }
                }
            }
        }
        return new int[] {checked, differing};
    }
}
