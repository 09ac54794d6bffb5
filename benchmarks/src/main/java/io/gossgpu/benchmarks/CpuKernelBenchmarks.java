package io.gossgpu.benchmarks;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;
import io.gossgpu.testmodel.TestModelGenerator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The {@code cpu} backend's decode-time ops at gpt-oss-20b widths (hidden 2880, intermediate 2880, 64
 * query heads over 8 KV heads of 64, 32 experts top-4), on one generated layer in OpenAI's layout (MXFP4
 * experts, BF16 dense) held in memory:
 * <ul>
 *   <li>{@code moeDecode}: the MoE of one token over 4 experts (3 MXFP4 matrices of 2880×2880 each);</li>
 *   <li>{@code bf16Matvec}: the attention output projection, BF16 2880×4096, one token;</li>
 *   <li>{@code attentionDecode}: one token attending over 1024 cached positions (full-attention layer).</li>
 * </ul>
 * Each reports time per op and, as the secondary metric {@code gigabytes} (ops/s = GB/s), the weight
 * (or KV) bytes the op reads divided by its time. Threads: {@code -Dgoss.cpu.threads=N} in the forked JVM
 * ({@code -jvmArgsAppend -Dgoss.cpu.threads=1}); default all cores.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx6g"})
@State(Scope.Benchmark)
public class CpuKernelBenchmarks {
    static final int CONTEXT = 1024;

    Checkpoint checkpoint;
    Backend cpu;
    LoadedWeights w;
    DeviceTensor xH, xQ, outH, q, k, v, attnOut;
    DeviceRouting routing;
    KvCache cache;
    long moeBytes, bf16Bytes, attnBytes;

    /** One layer of gpt-oss-20b's widths with a 64-token vocabulary (the embedding is not benchmarked). */
    static ModelConfig oneLayer() {
        ModelConfig r = ModelConfig.gptOss20b();
        return new ModelConfig(
                2,
                r.numExperts(),
                r.expertsPerToken(),
                64,
                r.hiddenSize(),
                r.intermediateSize(),
                r.swigluLimit(),
                r.headDim(),
                r.numAttentionHeads(),
                r.numKeyValueHeads(),
                r.slidingWindow(),
                r.initialContextLength(),
                r.ropeTheta(),
                r.ropeScalingFactor(),
                r.ropeNtkAlpha(),
                r.ropeNtkBeta(),
                r.rmsNormEps());
    }

    @Setup(Level.Trial)
    public void setUp() {
        ModelConfig c = oneLayer();
        checkpoint = new TestModelGenerator(c, 7).inMemory();
        ModelWeights mw = ModelWeights.of(checkpoint);
        cpu = new CpuBackendProvider().create(io.gossgpu.backend.BackendOptions.fromEnvironment());
        w = cpu.loadWeights(mw);
        SplittableRandom r = new SplittableRandom(1);
        xH = tensor(1, c.hiddenSize(), r);
        xQ = tensor(1, c.qDim(), r);
        outH = cpu.allocate(1, c.hiddenSize());
        q = tensor(1, c.qDim(), r);
        k = tensor(1, c.kvDim(), r);
        v = tensor(1, c.kvDim(), r);
        attnOut = cpu.allocate(1, c.qDim());
        routing = cpu.allocateRouting(1, c.expertsPerToken());
        cpu.writeRouting(routing, new Routing(1, 4, new int[] {3, 17, 8, 29}, new float[] {0.4f, 0.3f, 0.2f, 0.1f}));
        cache = cpu.createKvCache(new KvCacheSpec(c, CONTEXT));
        // fill the cache of layer 1 (full attention) with 1023 positions, one prefill batch
        try (DeviceTensor qq = tensor(CONTEXT - 1, c.qDim(), r);
                DeviceTensor kk = tensor(CONTEXT - 1, c.kvDim(), r);
                DeviceTensor vv = tensor(CONTEXT - 1, c.kvDim(), r);
                DeviceTensor oo = cpu.allocate(CONTEXT - 1, c.qDim())) {
            cpu.attention(w, 1, qq, kk, vv, Batch.of(cache, 0, CONTEXT - 1), oo);
        }
        var l = mw.layers().get(0);
        moeBytes = 4 * (bytes(l.gate()) + bytes(l.up()) + bytes(l.down()));
        bf16Bytes = bytes(l.out());
        attnBytes = 2L * CONTEXT * c.kvDim() * Float.BYTES;
    }

    private static long bytes(WeightView v) {
        long b = (long) v.rows() * v.rowBytes();
        if (v.scales() != null) b += (long) v.rows() * (v.cols() / 32);
        return b;
    }

    private DeviceTensor tensor(int rows, int cols, SplittableRandom r) {
        DeviceTensor t = cpu.allocate(rows, cols);
        float[] f = new float[rows * cols];
        for (int i = 0; i < f.length; i++) f[i] = (float) r.nextGaussian();
        cpu.write(t, f);
        return t;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        cache.close();
        w.close();
        cpu.close();
        checkpoint.close();
    }

    /** Secondary metric: gigabytes read, reported per second (= GB/s). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bandwidth {
        public double gigabytes;

        @Setup(Level.Iteration)
        public void clear() {
            gigabytes = 0;
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public DeviceTensor moeDecode(Bandwidth bw) {
        cpu.moe(w, 0, xH, routing, outH);
        bw.gigabytes += moeBytes / 1e9;
        return outH;
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public DeviceTensor bf16Matvec(Bandwidth bw) {
        cpu.dense(w, 0, DenseKind.ATTN_OUT, xQ, outH);
        bw.gigabytes += bf16Bytes / 1e9;
        return outH;
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public DeviceTensor attentionDecode(Bandwidth bw) {
        // position 1023 attends over 1023 cached positions plus itself; re-storing slot 1023 each time is harmless
        cpu.attention(w, 1, q, k, v, Batch.of(cache, CONTEXT - 1, 1), attnOut);
        bw.gigabytes += attnBytes / 1e9;
        return attnOut;
    }
}
