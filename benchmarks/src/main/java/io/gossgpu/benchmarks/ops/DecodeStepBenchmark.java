package io.gossgpu.benchmarks.ops;

import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.forward.Executor;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One decode step (embed → every layer → final norm → logits → {@code output}) at
 * position {@code position} of a {@code layers}-layer model at gpt-oss-20b widths, through the engine's
 * executor, on any backend. Per-layer cost × 24 plus the unembedding estimates gpt-oss-20b (whose vocabulary
 * is 201088, not 32768). {@code output}: {@code argmax} (greedy, one int back), {@code sample} (temperature 1 on
 * the device, {@link io.gossgpu.backend.Backend#sample}, one int back), {@code logits} (the same temperature
 * sampling as the host did before: all logits back, then {@link io.gossgpu.backend.TemperatureDraw#draw}).
 */
@Measurement(iterations = 3, time = 2)
public class DecodeStepBenchmark extends BackendBenchmark {
    @Param({"2"})
    public int layers;

    @Param({"32"})
    public int experts;

    @Param({"32768"})
    public int vocab;

    @Param({"512"})
    public int position;

    @Param({"argmax", "sample", "logits"})
    public String output;

    private final SplittableRandom random = new SplittableRandom(1);

    private OpsModel m;
    private Executor executor;
    private KvCache cache;

    @Setup(Level.Trial)
    public void setUp() {
        m = new OpsModel(backend, layers, experts, vocab);
        executor = new Executor(m.backend, m.weights);
        cache = m.backend.createKvCache(new KvCacheSpec(m.config, position + 1));
    }

    @Benchmark
    public int decodeStep() {
        int[] token = {42};
        return switch (output) {
            case "argmax" ->
                executor.forward(token, position, cache, Executor.Output.LAST_ARGMAX)
                        .argmax()[0];
            case "sample" ->
                executor.forward(token, position, cache, new Executor.Sampling(1.0, random.nextDouble()))
                        .sampled();
            case "logits" -> {
                float[] l = executor.forward(token, position, cache, Executor.Output.LAST_LOGITS)
                        .logits();
                yield TemperatureDraw.draw(l, 0, l.length, 1.0, random.nextDouble());
            }
            default -> throw new IllegalArgumentException("output must be argmax, sample or logits, got " + output);
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (m == null) return;
        executor.close();
        cache.close();
        m.close();
    }
}
