package io.gossgpu.benchmarks.opencl;

import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
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
 * Attention with sinks on a full-attention layer (layer 1) of 20b widths: T new tokens after {@code context}
 * cached positions (decode: T = 1; prefill chunk: T = 128), the cache store included.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector"})
public class OpenClSdpaBenchmark {
    @Param({"1024", "8192"})
    public int context;

    @Param({"1", "128"})
    public int tokens;

    @Param({"1"})
    public int layer;

    private OpenClBench bench;
    private DeviceTensor q, k, v, out;
    private KvCache cache;

    @Setup(Level.Trial)
    public void setUp() {
        bench = new OpenClBench(2, 4, 1024);
        var c = bench.config;
        q = bench.backend.allocate(tokens, c.qDim());
        k = bench.backend.allocate(tokens, c.kvDim());
        v = bench.backend.allocate(tokens, c.kvDim());
        out = bench.backend.allocate(tokens, c.qDim());
        bench.backend.write(q, bench.random(tokens * c.qDim(), 1));
        bench.backend.write(k, bench.random(tokens * c.kvDim(), 2));
        bench.backend.write(v, bench.random(tokens * c.kvDim(), 3));
        cache = bench.backend.createKvCache(new KvCacheSpec(c, context + tokens));
        bench.backend.synchronize();
    }

    @Benchmark
    public void attention() {
        bench.backend.attention(bench.weights, layer, q, k, v, cache, context, out);
        bench.backend.synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (DeviceTensor t : new DeviceTensor[]{q, k, v, out}) t.close();
        cache.close();
        bench.close();
    }
}
