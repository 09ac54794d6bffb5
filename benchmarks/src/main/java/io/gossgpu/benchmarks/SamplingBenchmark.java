package io.gossgpu.benchmarks;

import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.cpu.PooledDraw;
import io.gossgpu.cpu.compute.CpuPool;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Host temperature sampling ({@link TemperatureDraw#draw}) over gpt-oss's 201088 logits at T = 1: what the cpu
 * backend (and any backend sampling on the host) spends per sampled token after the logits. The draws take turns over
 * a few uniform values, so the cumulative pass stops at different ids. {@code pooledDraw} is the cpu backend's draw
 * ({@link PooledDraw}: the same ids, the maximum and exponentials on a pool of all cores).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class SamplingBenchmark {
    static final int VOCAB = 201088;

    float[] logits;
    int draw;
    CpuPool pool;
    PooledDraw pooled;

    /** A row of {@link #VOCAB} logits, normal with σ = 3 (seeded, the same in every run). */
    static float[] gaussianLogits() {
        SplittableRandom r = new SplittableRandom(1);
        float[] l = new float[VOCAB];
        for (int i = 0; i < VOCAB; i++) l[i] = (float) (r.nextGaussian() * 3);
        return l;
    }

    @Setup
    public void setup() {
        logits = gaussianLogits();
        pool = new CpuPool(Runtime.getRuntime().availableProcessors());
        pooled = new PooledDraw(pool);
    }

    @TearDown
    public void close() {
        pool.close();
    }

    @Benchmark
    public int temperatureDraw() {
        return TemperatureDraw.draw(logits, 0, VOCAB, 1.0, (draw++ % 7) / 7.0 + 0.05);
    }

    @Benchmark
    public int pooledDraw() {
        return pooled.draw(logits, 0, VOCAB, 1.0, (draw++ % 7) / 7.0 + 0.05);
    }
}
