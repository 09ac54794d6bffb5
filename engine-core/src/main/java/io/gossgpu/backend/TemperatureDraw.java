package io.gossgpu.backend;

/**
 * Plain temperature sampling as the SPI defines it ({@link Backend#sample}): the contract every backend's sampling
 * implements, and what the host computes when a backend samples on the host.
 */
public final class TemperatureDraw {
    private TemperatureDraw() {}

    /**
     * The id drawn from {@code logits[offset .. offset+n−1]} with the uniform draw {@code u ∈ [0, 1)}: the smallest
     * {@code i} with {@code Σ_{j≤i} e_j > u·Z}, where {@code e_j = exp((l_j − max)/T)}, {@code Z = Σ_j e_j}, all in
     * double, summed in ascending id order; if rounding leaves {@code u·Z} never crossed, the last id with
     * {@code e_j > 0}. A device summing in another order may differ only when {@code u·Z} lies within rounding of a
     * cumulative sum. {@link #NOT_FINITE} when {@code Z} is NaN: a NaN or +∞ logit, or no finite one (−∞ alone is an
     * id never drawn, as a mask writes it).
     */
    public static int draw(float[] logits, int offset, int n, double temperature, double u) {
        if (n <= 0) throw new IllegalArgumentException("no logits to sample from");
        float max = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < n; j++) max = Math.max(max, logits[offset + j]);
        double[] e = WEIGHTS.get();
        if (e.length < n) WEIGHTS.set(e = new double[n]);
        for (int j = 0; j < n; j++) e[j] = Math.exp((logits[offset + j] - (double) max) / temperature);
        return idOfWeights(e, n, u);
    }

    /**
     * The second half of {@link #draw}: its id from the weights {@code e_j} in {@code e[0 .. n−1]}, which are overwritten
     * with their running sums. {@code Z} is summed in ascending id order, and the running sums are exactly the
     * cumulative sums {@link #draw} compares (adding a zero changes nothing) and never decrease ({@code e_j ≥ 0}), so the
     * id is a binary search: the first running sum above {@code max(u·Z, 0)}. For {@code u·Z ≥ 0} that id has
     * {@code e_j > 0}; below 0 it is the first id with {@code e_j > 0}, as a pass that skips zero weights finds; NaN or
     * nothing above it gives the last id with {@code e_j > 0}. Backends that compute the weights elsewhere (the cpu
     * backend, on its pool) finish here.
     */
    public static int idOfWeights(double[] e, int n, double u) {
        double z = 0;
        int last = 0;
        for (int j = 0; j < n; j++) {
            double v = e[j];
            z += v;
            e[j] = z;
            if (v != 0) last = j;
        }
        if (Double.isNaN(z)) return NOT_FINITE;
        double target = Math.max(u * z, 0);
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (e[mid] > target) hi = mid;
            else lo = mid + 1;
        }
        return lo < n ? lo : last;
    }

    /**
     * Per thread, the weights of its last {@link #draw}: the search reads their running sums instead of computing each
     * exponential again (the exponentials are most of a draw's time: 1.9 → 1.4 ms over gpt-oss's 201088 logits on a
     * Zen 4 core), and the array is reused, so a token allocates nothing once it is sized.
     */
    private static final ThreadLocal<double[]> WEIGHTS = ThreadLocal.withInitial(() -> new double[0]);

    /**
     * The id {@link Backend#argmax} returns for a row whose logits are not all finite (NaN or ±infinity): no token is
     * chosen from such a row, the executor's guard reports it instead ({@code io.gossgpu.forward.NonFinite}).
     */
    public static final int NOT_FINITE = -1;

    /**
     * The id of the largest of {@code logits[offset .. offset+n−1]}, ties to the lower id, or {@link #NOT_FINITE} when
     * one of them is NaN or infinite (what {@link Backend#argmax} returns).
     */
    public static int argmax(float[] logits, int offset, int n) {
        int best = 0;
        for (int r = 0; r < n; r++) {
            float x = logits[offset + r];
            if (!Float.isFinite(x)) return NOT_FINITE;
            if (x > logits[offset + best]) best = r;
        }
        return best;
    }

    /**
     * Checks the arguments of {@link Backend#sample}: {@code rows} temperatures (0 for argmax, else finite and &gt; 0) and
     * draws in {@code [0, 1)}; a {@link io.gossgpu.GossException} naming the first bad one.
     */
    public static void check(int rows, double[] temperatures, double[] draws) {
        if (rows <= 0) throw new io.gossgpu.GossException("sample: no rows from the given row");
        if (temperatures.length != rows || draws.length != rows)
            throw new io.gossgpu.GossException("sample: " + rows + " rows but " + temperatures.length
                    + " temperatures and " + draws.length + " draws");
        for (int i = 0; i < rows; i++) {
            double t = temperatures[i], u = draws[i];
            if (t != 0 && (!(t > 0) || !Double.isFinite(t) || !(u >= 0 && u < 1)))
                throw new io.gossgpu.GossException(
                        "sampling needs a finite temperature > 0 and u in [0, 1), got " + t + " and " + u);
        }
    }
}
