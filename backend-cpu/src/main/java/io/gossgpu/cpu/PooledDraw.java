package io.gossgpu.cpu;

import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.cpu.compute.CpuPool;

/**
 * {@link TemperatureDraw#draw} with the maximum and the exponentials on a {@link CpuPool}, returning the same id
 * bit for bit. The maximum is taken per chunk and the chunks' maxima combined ({@link Math#max} is associative and
 * commutative, NaN and ±0 included). Each {@code e_j = exp((l_j − max)/T)} is the same double expression on any thread.
 * The id then comes from the reference's own second half, {@link TemperatureDraw#idOfWeights}, on the caller (its sum
 * of {@code Z} in id order is serial). Not thread-safe: one caller at a time, as the backend's ops.
 */
public final class PooledDraw {
    /** Logits per chunk of a pool job: a few chunks per thread over gpt-oss's 201088. */
    private static final int GRAIN = 8192;

    private final CpuPool pool;
    private double[] sums = new double[0];
    private float[] maxima = new float[0];

    public PooledDraw(CpuPool pool) {
        this.pool = pool;
    }

    /** {@link TemperatureDraw#draw}{@code (logits, offset, n, temperature, u)}, the same id for every input. */
    public int draw(float[] logits, int offset, int n, double temperature, double u) {
        if (n <= 0) return TemperatureDraw.draw(logits, offset, n, temperature, u); // its error
        int chunks = (n + GRAIN - 1) / GRAIN;
        if (maxima.length < chunks) maxima = new float[chunks];
        if (sums.length < n) sums = new double[n];
        float[] m = maxima;
        double[] e = sums;
        pool.run(chunks, 1, (from, to, worker) -> {
            for (int c = from; c < to; c++) {
                float max = Float.NEGATIVE_INFINITY;
                for (int j = c * GRAIN, end = Math.min(n, j + GRAIN); j < end; j++)
                    max = Math.max(max, logits[offset + j]);
                m[c] = max;
            }
        });
        float max = Float.NEGATIVE_INFINITY;
        for (int c = 0; c < chunks; c++) max = Math.max(max, m[c]);
        double dmax = max;
        pool.run(chunks, 1, (from, to, worker) -> {
            for (int j = from * GRAIN, end = Math.min(n, to * GRAIN); j < end; j++)
                e[j] = Math.exp((logits[offset + j] - dmax) / temperature);
        });
        return TemperatureDraw.idOfWeights(e, n, u);
    }
}
