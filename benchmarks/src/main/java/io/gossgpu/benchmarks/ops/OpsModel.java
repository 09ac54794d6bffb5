package io.gossgpu.benchmarks.ops;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.SplittableRandom;

/**
 * Shared set-up of the backend-neutral op benchmarks: a generated model at gpt-oss-20b's widths (hidden 2880,
 * 64 query heads over 8 KV heads of 64, intermediate 2880, top-4 of {@code experts}, window 128) with
 * {@code layers} layers and a {@code vocab}-token vocabulary (smaller than the real 201088 so that set-up
 * stays quick), loaded on the named backend. An unavailable backend fails the set-up with its one-line reason
 * ({@link OpsReport} runs only the available ones).
 */
final class OpsModel implements AutoCloseable {
    final ModelConfig config;
    final Checkpoint checkpoint;
    final ModelWeights model;
    final Backend backend;
    final LoadedWeights weights;

    OpsModel(String backend, int layers, int experts, int vocab) {
        BackendProvider p = Backends.provider(backend);
        Availability a = Backends.safeAvailability(p);
        if (!a.available()) throw new IllegalStateException("backend " + backend + " unavailable here: " + a.reason());
        config = TestModelPresets.withOverrides(TestModelPresets.gptOss20bWidths(layers), null, experts, vocab);
        checkpoint = new TestModelGenerator(config, 7).inMemory();
        model = ModelWeights.of(checkpoint);
        this.backend =
                p.create(io.gossgpu.backend.BackendOptions
                        .fromEnvironment()); // a benchmark is an edge: knobs from the environment
        weights = this.backend.loadWeights(model);
    }

    /** Standard normal values, reproducible. */
    static float[] random(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
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
