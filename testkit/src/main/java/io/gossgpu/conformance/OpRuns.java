package io.gossgpu.conformance;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.model.ModelConfig;
import java.util.SplittableRandom;

/** Single ops run on any backend from host arrays to host arrays, for tests that compare two backends op by op. */
public final class OpRuns {
    private OpRuns() {}

    public static float[] gaussian(SplittableRandom r, int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = (float) r.nextGaussian();
        }
        return f;
    }

    /** The router's choice for the {@code T} rows of {@code x} at {@code layer}. */
    public static Routing routing(Backend b, LoadedWeights w, int layer, float[] x, int T, int h, int k) {
        try (DeviceTensor xb = b.allocate(T, h);
                DeviceRouting rb = b.allocateRouting(T, k)) {
            b.write(xb, x);
            b.router(w, layer, xb, rb);
            return b.readRouting(rb);
        }
    }

    /** The MoE of the {@code T} rows of {@code x} at {@code layer}, routed as given. */
    public static float[] moe(Backend b, LoadedWeights w, int layer, float[] x, int T, int h, Routing routing) {
        try (DeviceTensor xb = b.allocate(T, h);
                DeviceTensor out = b.allocate(T, h);
                DeviceRouting rb = b.allocateRouting(T, routing.k())) {
            b.write(xb, x);
            b.writeRouting(rb, routing);
            b.moe(w, layer, xb, rb, out);
            return b.read(out);
        }
    }

    /** Attention of {@code n} new positions from {@code start} on, their keys and values appended to {@code cache}. */
    public static float[] attention(
            Backend b,
            LoadedWeights w,
            int layer,
            KvCache cache,
            int start,
            int n,
            ModelConfig c,
            float[] q,
            float[] k,
            float[] v) {
        try (DeviceTensor qb = b.allocate(n, c.qDim());
                DeviceTensor kb = b.allocate(n, c.kvDim());
                DeviceTensor vb = b.allocate(n, c.kvDim());
                DeviceTensor out = b.allocate(n, c.qDim())) {
            b.write(qb, q);
            b.write(kb, k);
            b.write(vb, v);
            b.attention(w, layer, qb, kb, vb, Batch.of(cache, start, n), out);
            return b.read(out);
        }
    }
}
