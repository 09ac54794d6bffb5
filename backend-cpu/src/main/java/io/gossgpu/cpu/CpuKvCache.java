package io.gossgpu.cpu;

import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;

/** The cpu backend's KV cache: per layer, keys and values of {@code spec.slots(layer)} positions, in Java arrays. */
final class CpuKvCache implements KvCache {
    final KvCacheSpec spec;
    /**
     * Keys in blocks of 16 slots, transposed within a block so that one vector holds 16 positions of one
     * channel: key {@code c} of slot {@code s} at {@code ((s >> 4)·kvDim + c)·16 + (s & 15)}. Values row-major:
     * {@code [slot·kvDim + c]}.
     */
    final float[][] keys, values;

    CpuKvCache(KvCacheSpec spec) {
        this.spec = spec;
        int layers = spec.config().numHiddenLayers();
        keys = new float[layers][];
        values = new float[layers][];
        for (int l = 0; l < layers; l++) {
            int slots = spec.slots(l);
            keys[l] = new float
                    [Math.multiplyExact((slots + 15) & ~15, spec.config().kvDim())];
            values[l] = new float[Math.multiplyExact(slots, spec.config().kvDim())];
        }
    }

    @Override
    public KvCacheSpec spec() {
        return spec;
    }

    @Override
    public void close() {}
}
