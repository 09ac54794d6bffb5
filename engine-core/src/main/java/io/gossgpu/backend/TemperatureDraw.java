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
     * cumulative sum.
     */
    public static int draw(float[] logits, int offset, int n, double temperature, double u) {
        if (n <= 0) throw new IllegalArgumentException("no logits to sample from");
        float max = Float.NEGATIVE_INFINITY;
        for (int j = 0; j < n; j++) max = Math.max(max, logits[offset + j]);
        double z = 0;
        for (int j = 0; j < n; j++) z += Math.exp((logits[offset + j] - (double) max) / temperature);
        double target = u * z, cum = 0;
        int last = 0;
        for (int j = 0; j < n; j++) {
            double e = Math.exp((logits[offset + j] - (double) max) / temperature);
            if (e == 0) continue;
            last = j;
            cum += e;
            if (cum > target) return j;
        }
        return last;
    }
}
