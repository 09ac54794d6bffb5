package io.gossgpu.generate;

import io.gossgpu.backend.TemperatureDraw;
import java.util.Arrays;
import java.util.SplittableRandom;

/** Chooses tokens from logits as {@link SamplerConfig} describes; stateful only through its seeded RNG. */
public final class Sampler {
    private final SamplerConfig config;
    private final SplittableRandom random;

    public Sampler(SamplerConfig config) {
        this.config = config;
        this.random = new SplittableRandom(config.seed());
    }

    public SamplerConfig config() {
        return config;
    }

    /** Argmax, ties to the lower id. */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
        return best;
    }

    public int sample(float[] logits) {
        if (config.isGreedy()) return argmax(logits);
        if (!hasFilters()) return TemperatureDraw.draw(logits, 0, logits.length, config.temperature(), nextUniform());
        return pick(probabilities(logits), random.nextDouble());
    }

    /**
     * Whether this config is plain temperature sampling (not greedy, no top-k / top-p / min-p): then the draw
     * is {@link TemperatureDraw#draw} of {@link #nextUniform}, which a backend can compute next to the logits.
     */
    public boolean isPlainTemperature() {
        return !config.isGreedy() && !hasFilters();
    }

    /** The next uniform draw in [0, 1) of this sampler's RNG; {@link #sample} takes exactly one per token. */
    public double nextUniform() {
        return random.nextDouble();
    }

    private boolean hasFilters() {
        return config.topK() > 0 || config.topP() < 1 || config.minP() > 0;
    }

    /**
     * The filtered, renormalised distribution {@link #sample} draws from (zero outside the kept set).
     */
    double[] probabilities(float[] logits) {
        int n = logits.length;
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) max = Math.max(max, l);
        double[] p = new double[n];
        double z = 0;
        for (int i = 0; i < n; i++) {
            p[i] = Math.exp((logits[i] - max) / config.temperature());
            z += p[i];
        }
        for (int i = 0; i < n; i++) p[i] /= z;
        boolean filtered = (config.topK() > 0 && config.topK() < n) || config.topP() < 1 || config.minP() > 0;
        if (!filtered)
            return p; // plain temperature sampling needs no ordering (and sorting 201088 ids per token is slow)
        int[] order = byLogitDescending(logits);
        int keep = config.topK() > 0 ? Math.min(config.topK(), n) : n;
        if (config.topP() < 1) {
            double cum = 0;
            for (int j = 0; j < keep; j++) {
                cum += p[order[j]];
                if (cum >= config.topP()) {
                    keep = j + 1;
                    break;
                }
            }
        }
        if (config.minP() > 0) {
            double threshold = config.minP() * p[order[0]];
            int j = 1;
            while (j < keep && p[order[j]] >= threshold) j++;
            keep = j;
        }
        double[] out = new double[n];
        double kept = 0;
        for (int j = 0; j < keep; j++) kept += p[order[j]];
        for (int j = 0; j < keep; j++) out[order[j]] = p[order[j]] / kept;
        return out;
    }

    /**
     * Token ids from the highest logit down, ties to the lower id: the order of the probabilities (exp is
     * monotonic; ids whose probabilities underflow to equal zeros carry no mass and never change the result).
     * Sorted as primitive longs: (order-preserving int of the float) << 32 | (~id), ascending, read backwards.
     */
    static int[] byLogitDescending(float[] logits) {
        int n = logits.length;
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            int bits = Float.floatToIntBits(logits[i]);
            int sortable = bits ^ ((bits >> 31) & 0x7fffffff);
            keys[i] = ((long) sortable << 32) | (0xffffffffL - i);
        }
        Arrays.sort(keys);
        int[] order = new int[n];
        for (int j = 0; j < n; j++) order[j] = (int) (0xffffffffL - (keys[n - 1 - j] & 0xffffffffL));
        return order;
    }

    private static int pick(double[] p, double u) {
        double cum = 0;
        int last = -1;
        for (int i = 0; i < p.length; i++) {
            if (p[i] == 0) continue;
            last = i;
            cum += p[i];
            if (u < cum) return i;
        }
        return last;
    }
}
