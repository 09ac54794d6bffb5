package io.gossgpu.benchmarks.opencl;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.opencl.OpenCl;
import io.gossgpu.opencl.OpenClBackend;
import io.gossgpu.testmodel.TestModelGenerator;

/**
 * Shared set-up of the OpenCL benchmarks: a generated model at gpt-oss-20b's widths (hidden 2880, 64 query
 * heads over 8 KV heads of 64, intermediate 2880, top-4, window 128) with {@code layers} layers,
 * {@code experts} experts and a {@code vocab}-token vocabulary (smaller than the real 201088 so that set-up
 * stays quick), loaded on the device {@code GOSS_OPENCL_DEVICE} selects.
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -cp <benchmarks
 * class path> org.openjdk.jmh.Main 'io.gossgpu.benchmarks.opencl.*'}.
 */
final class OpenClBench implements AutoCloseable {
    final ModelConfig config;
    final Checkpoint checkpoint;
    final OpenClBackend backend;
    final LoadedWeights weights;

    OpenClBench(int layers, int experts, int vocab) {
        Availability a = OpenCl.availability();
        if (!a.available()) throw new IllegalStateException("OpenCL unavailable: " + a.reason());
        config = new ModelConfig(layers, experts, 4, vocab, 2880, 2880, 7.0f, 64, 64, 8, 128, 4096,
                150000f, 32f, 1f, 32f, 1e-5f);
        checkpoint = new TestModelGenerator(config, 7).inMemory();
        backend = OpenClBackend.create();
        weights = backend.loadWeights(ModelWeights.of(checkpoint));
    }

    float[] random(int n, long seed) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        float[] f = new float[n];
        for (int i = 0; i < n; i++) f[i] = (float) r.nextGaussian();
        return f;
    }

    @Override
    public void close() {
        weights.close();
        backend.close();
        checkpoint.close();
    }
}
