package io.gossgpu.benchmarks.opencl;

import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
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

/** The fused MXFP4 MoE (gate/up + SwiGLU, down + weighted sum) of one layer, for T tokens, at 20b widths. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector"})
public class OpenClMoeBenchmark {
    @Param({"32"})
    public int experts;

    @Param({"1", "128"})
    public int tokens;

    private OpenClBench bench;
    private DeviceTensor x, out;
    private DeviceRouting routing;

    @Setup(Level.Trial)
    public void setUp() {
        bench = new OpenClBench(1, experts, 1024);
        int h = bench.config.hiddenSize();
        x = bench.backend.allocate(tokens, h);
        out = bench.backend.allocate(tokens, h);
        bench.backend.write(x, bench.random(tokens * h, 1));
        routing = bench.backend.allocateRouting(tokens, bench.config.expertsPerToken());
        bench.backend.router(bench.weights, 0, x, routing);
        bench.backend.synchronize();
    }

    @Benchmark
    public void moe() {
        bench.backend.moe(bench.weights, 0, x, routing, out);
        bench.backend.synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        x.close();
        out.close();
        routing.close();
        bench.close();
    }
}
