package io.gossgpu.backend;

import io.gossgpu.GossException;
import io.gossgpu.model.ModelConfig;

/**
 * The size of a KV cache for {@code contextLength} positions, known before anything is allocated.
 * Sliding-window layers keep only their window: {@code min(window, ctx)} slots; the others {@code ctx}.
 * Bytes = Σ_layers 2 (K and V) × kv_dim × slots × 4 (F32).
 *
 * <p>A window of W slots is enough even for a batch of T &gt; 1 new tokens because the attention op
 * reads the batch's own keys from its inputs and only stores them after attending (see
 * {@link Backend#attention}); the oldest position a query at {@code p ≥ start} needs from the cache is
 * {@code p − W + 1 ≥ start − W + 1}, and the ring still holds {@code start − W .. start − 1}.
 */
public record KvCacheSpec(ModelConfig config, int contextLength) {
    public KvCacheSpec {
        if (contextLength <= 0) throw new GossException("context length must be positive, got " + contextLength);
    }

    public int slots(int layer) {
        return config.isSlidingLayer(layer) ? Math.min(config.slidingWindow(), contextLength) : contextLength;
    }

    public long bytes() {
        long total = 0;
        for (int l = 0; l < config.numHiddenLayers(); l++) total += 2L * config.kvDim() * slots(l) * Float.BYTES;
        return total;
    }

    /** e.g. "KV cache for 4096 positions: 3 layers × 2 × 128 floats … = 1.5 MiB". */
    public String describe() {
        return "KV cache for " + contextLength + " positions: " + humanBytes(bytes())
                + " (" + config.numHiddenLayers() + " layers, kv_dim " + config.kvDim()
                + (config.slidingWindow() > 0 ? ", sliding layers keep " + Math.min(config.slidingWindow(), contextLength) + " positions" : "") + ")";
    }

    public static String humanBytes(long b) {
        if (b < 1024) return b + " B";
        if (b < 1024L * 1024) return String.format("%.1f KiB", b / 1024.0);
        if (b < 1024L * 1024 * 1024) return String.format("%.1f MiB", b / (1024.0 * 1024));
        return String.format("%.2f GiB", b / (1024.0 * 1024 * 1024));
    }
}
