package io.gossgpu.benchmarks.ops;

import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Each Backend SPI op of one layer through the {@link io.gossgpu.backend.Backend} interface, on any backend,
 * at gpt-oss-20b widths ({@link OpsModel}) for {@code tokens} rows (1: decode; 128: a prefill chunk); each
 * call ends with {@code synchronize()} so queued work is timed. {@link OpBytes} gives each op's bytes for
 * GB/s; {@link OpsReport} runs this on the available backends and prints both.
 * <ul>
 *   <li>{@code linear}: the attention output projection (2880 × 4096);</li>
 *   <li>{@code qkvRope}: the Q, K, V projections with RoPE;</li>
 *   <li>{@code router}: router logits and top-4 softmax;</li>
 *   <li>{@code moe}: the MXFP4 experts the router chose (gate/up, SwiGLU, down, weighted sum);</li>
 *   <li>{@code logits}: the unembedding, logits back to the host; {@code argmax}: the same with one id per row back.</li>
 * </ul>
 */
public class BackendOpsBenchmark extends BackendBenchmark {
    @Param({"1", "128"})
    public int tokens;

    @Param({"32"})
    public int experts;

    @Param({"32768"})
    public int vocab;

    private OpsModel m;
    private DeviceTensor x, attn, q, k, v, out;
    private DeviceRouting routing;
    /** Only for the positions of qkvRope's rows (0 .. tokens − 1). */
    private KvCache cache;

    private Batch batch;

    @Setup(Level.Trial)
    public void setUp() {
        m = new OpsModel(backend, 1, experts, vocab);
        var c = m.config;
        x = m.backend.allocate(tokens, c.hiddenSize());
        attn = m.backend.allocate(tokens, c.qDim());
        q = m.backend.allocate(tokens, c.qDim());
        k = m.backend.allocate(tokens, c.kvDim());
        v = m.backend.allocate(tokens, c.kvDim());
        out = m.backend.allocate(tokens, c.hiddenSize());
        cache = m.backend.createKvCache(new KvCacheSpec(c, tokens));
        batch = Batch.of(cache, 0, tokens);
        m.backend.write(x, OpsModel.random(tokens * c.hiddenSize(), 1));
        m.backend.write(attn, OpsModel.random(tokens * c.qDim(), 2));
        routing = m.backend.allocateRouting(tokens, c.expertsPerToken());
        m.backend.router(m.weights, 0, x, routing);
        m.backend.synchronize();
    }

    @Benchmark
    public void linear() {
        m.backend.dense(m.weights, 0, DenseKind.ATTN_OUT, attn, out);
        m.backend.synchronize();
    }

    @Benchmark
    public void qkvRope() {
        m.backend.qkvRope(m.weights, 0, x, batch, q, k, v);
        m.backend.synchronize();
    }

    @Benchmark
    public void router() {
        m.backend.router(m.weights, 0, x, routing);
        m.backend.synchronize();
    }

    @Benchmark
    public void moe() {
        m.backend.moe(m.weights, 0, x, routing, out);
        m.backend.synchronize();
    }

    @Benchmark
    public float[] logits() {
        return m.backend.logits(m.weights, x, 0);
    }

    @Benchmark
    public int[] argmax() {
        return m.backend.argmax(m.weights, x, 0);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (m == null) return;
        for (DeviceTensor t : new DeviceTensor[] {x, attn, q, k, v, out}) t.close();
        routing.close();
        cache.close();
        m.close();
    }
}
