package io.gossgpu.device;

import io.gossgpu.backend.Rope;
import io.gossgpu.model.ModelConfig;
import java.lang.foreign.MemorySegment;

/**
 * The RoPE cos/sin table of one model on the device ({@link Rope#cosSinTable}: {@code positions × head_dim} F32,
 * angles computed in double on the host), grown on demand: to at least twice its size, 256 positions and the
 * backend's hint (the longest KV cache created, so that the table does not move while a cache is decoded: a
 * recorded CUDA graph keeps its address).
 *
 * @param <B> the device's buffer handle
 */
final class RopeTable<B> {
    private final DeviceBackend<B, ?> backend;
    private final ModelConfig config;
    private B table;
    private int positions;

    RopeTable(DeviceBackend<B, ?> backend, ModelConfig config) {
        this.backend = backend;
        this.config = config;
    }

    /** The table covering positions {@code 0 .. needed − 1}. */
    B covering(int needed, int hint) {
        if (needed > positions) {
            int n = Math.max(Math.max(needed, hint), Math.max(256, (int)
                    Math.min(Integer.MAX_VALUE / 2, 2L * positions)));
            float[] t = Rope.cosSinTable(config, 0, n);
            B b = backend.driver.allocate(4L * t.length, "RoPE cos/sin table");
            backend.driver.write(b, 0, MemorySegment.ofArray(t));
            if (table != null) backend.release(table);
            table = b;
            positions = n;
        }
        return table;
    }

    void close() {
        if (table != null) backend.release(table);
        table = null;
        positions = 0;
    }
}
