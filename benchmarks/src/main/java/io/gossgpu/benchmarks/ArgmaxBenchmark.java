package io.gossgpu.benchmarks;

import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.cpu.compute.CpuKernels;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The argmax of a greedy token over gpt-oss's 201088 logits, which the cpu backend runs on the calling thread after
 * the logits matrix: the reference loop ({@link TemperatureDraw#argmax}) against the cpu backend's kernel
 * ({@link CpuKernels#argmax} of {@link CpuKernels#best()}), which returns the same id.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
@State(Scope.Thread)
public class ArgmaxBenchmark {
    static final int VOCAB = SamplingBenchmark.VOCAB;

    float[] logits;
    CpuKernels kernels;

    @Setup
    public void setup() {
        logits = SamplingBenchmark.gaussianLogits();
        kernels = CpuKernels.best();
        if (kernels.argmax(logits, 0, VOCAB) != TemperatureDraw.argmax(logits, 0, VOCAB))
            throw new IllegalStateException("the kernel's argmax differs from the reference");
    }

    @Benchmark
    public int reference() {
        return TemperatureDraw.argmax(logits, 0, VOCAB);
    }

    @Benchmark
    public int kernel() {
        return kernels.argmax(logits, 0, VOCAB);
    }
}
