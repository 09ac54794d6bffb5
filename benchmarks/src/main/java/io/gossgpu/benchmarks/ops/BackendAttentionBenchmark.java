package io.gossgpu.benchmarks.ops;

import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code Backend.attention} with sinks on a full-attention layer (layer 1) at gpt-oss-20b widths, on any
 * backend: {@code tokens} new rows after {@code context} cached positions (decode: 1; a prefill chunk: 128),
 * the cache store included.
 */
public class BackendAttentionBenchmark extends BackendBenchmark {
    @Param({"1024", "8192", "32768"})
    public int context;

    @Param({"1", "128"})
    public int tokens;

    private OpsModel m;
    private DeviceTensor q, k, v, out;
    private KvCache cache;

    @Setup(Level.Trial)
    public void setUp() {
        m = new OpsModel(backend, 2, 4, 1024);
        var c = m.config;
        q = m.backend.allocate(tokens, c.qDim());
        k = m.backend.allocate(tokens, c.kvDim());
        v = m.backend.allocate(tokens, c.kvDim());
        out = m.backend.allocate(tokens, c.qDim());
        m.backend.write(q, OpsModel.random(tokens * c.qDim(), 1));
        m.backend.write(k, OpsModel.random(tokens * c.kvDim(), 2));
        m.backend.write(v, OpsModel.random(tokens * c.kvDim(), 3));
        cache = m.backend.createKvCache(new KvCacheSpec(c, context + tokens));
        m.backend.synchronize();
    }

    @Benchmark
    public void attention() {
        m.backend.attention(m.weights, 1, q, k, v, Batch.of(cache, context, tokens), out);
        m.backend.synchronize();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (m == null) return;
        for (DeviceTensor t : new DeviceTensor[] {q, k, v, out}) t.close();
        cache.close();
        m.close();
    }
}
