package io.gossgpu.benchmarks.ops;

import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.graph.Executor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * One greedy decode step (embed → every layer → final norm → logits → on-device argmax, one int back) at
 * position {@code position} of a {@code layers}-layer model at gpt-oss-20b widths, through the engine's
 * executor, on any backend. Per-layer cost × 24 plus the unembedding estimates gpt-oss-20b (whose vocabulary
 * is 201088, not 32768).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector"})
public class DecodeStepBenchmark {
    @Param({"cpu", "opencl", "cuda", "metal"})
    public String backend;

    @Param({"2"})
    public int layers;

    @Param({"32"})
    public int experts;

    @Param({"32768"})
    public int vocab;

    @Param({"512"})
    public int position;

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
        return executor.forward(new int[]{42}, position, cache, Executor.Output.LAST_ARGMAX).argmax()[0];
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (m == null) return;
        executor.close();
        cache.close();
        m.close();
    }
}
