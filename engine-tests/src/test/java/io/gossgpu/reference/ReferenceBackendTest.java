package io.gossgpu.reference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Rope;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.forward.Executor;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The reference backend against an independent formula-level implementation, and its own invariants. */
class ReferenceBackendTest {
    static final ModelConfig C = TestModelPresets.tiny(); // sliding window 5, 8:1 GQA, YaRN on
    static Checkpoint ckpt;
    static ModelWeights weights;
    static Backend backend;
    static LoadedWeights loaded;

    @BeforeAll
    static void load() {
        ckpt = new TestModelGenerator(C, 11).inMemory();
        weights = ModelWeights.of(ckpt);
        backend = new ReferenceBackend();
        loaded = backend.loadWeights(weights);
    }

    @AfterAll
    static void close() {
        loaded.close();
        backend.close();
        ckpt.close();
    }

    static int[] tokens(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = r.nextInt(C.vocabSize());
        return t;
    }

    /** tiny (16:2 heads of 16, window 5) and the kit's odd shape (6:3 heads of 10, window 3), 24 positions. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"tiny", "odd"})
    void executorMatchesIndependentWholeSequenceForward(String shape) {
        ModelConfig c = shape.equals("tiny") ? C : io.gossgpu.conformance.BackendConformanceKit.odd();
        try (Checkpoint ck = new TestModelGenerator(c, 12).inMemory()) {
            ModelWeights mw = ModelWeights.of(ck);
            SplittableRandom r = new SplittableRandom(1);
            int[] toks = new int[24];
            for (int i = 0; i < toks.length; i++) toks[i] = r.nextInt(c.vocabSize());
            double[][] expected = new NaiveForward(mw).logits(toks);
            float[] got;
            try (LoadedWeights lw = backend.loadWeights(mw);
                    Session s = new Session(backend, lw, 32)) {
                got = s.prefillAllLogits(toks);
            }
            for (int i = 0; i < toks.length; i++) {
                double scale = 0;
                for (double v : expected[i]) scale = Math.max(scale, Math.abs(v));
                // The executor stores every activation in float32 (rounding 6e-8 relative per op) while the
                // oracle is double throughout; over 3 layers of ~10 ops the drift stays well below 1e-5 of
                // the row's largest logit (measured: 6e-7), while any formula error (mask, RoPE pairing, GQA)
                // is O(1). 1e-5 keeps a 15x margin over the measurement.
                for (int v = 0; v < c.vocabSize(); v++)
                    assertEquals(
                            expected[i][v], got[i * c.vocabSize() + v], 1e-5 * scale, "position " + i + " token " + v);
            }
        }
    }

    @Test
    void kvCachedDecodingEqualsRecomputingTheWholeSequenceEveryStep() {
        int[] toks = tokens(14, 2); // window 5: positions 5.. evict from the ring on sliding layers
        try (Session s = new Session(backend, loaded, 16)) {
            for (int n = 1; n <= toks.length; n++) {
                float[] cached = s.decode(toks[n - 1]);
                float[] recomputed;
                try (Session fresh = new Session(backend, loaded, 16)) {
                    recomputed = fresh.prefill(Arrays.copyOf(toks, n));
                }
                // same float operations in the same order: bit-identical
                assertArrayEquals(recomputed, cached, "step " + n);
            }
        }
    }

    @Test
    void prefillOfTTokensEqualsTSingleSteps() {
        int[] toks = tokens(11, 3);
        float[] batch;
        try (Session s = new Session(backend, loaded, 20)) {
            s.prefill(Arrays.copyOf(toks, 3)); // then a second batch that crosses the window
            batch = s.prefillAllLogits(Arrays.copyOfRange(toks, 3, 11));
        }
        try (Session s = new Session(backend, loaded, 20)) {
            for (int i = 0; i < 3; i++) s.decode(toks[i]);
            for (int i = 3; i < 11; i++) {
                float[] step = s.decode(toks[i]);
                assertArrayEquals(
                        Arrays.copyOfRange(batch, (i - 3) * C.vocabSize(), (i - 2) * C.vocabSize()),
                        step,
                        "position " + i);
            }
        }
    }

    @Test
    void chunkedPrefillEqualsOneBatch() {
        int[] toks = tokens(13, 8);
        float[] one, chunked, lastOne, lastChunked;
        try (Session s = new Session(backend, loaded, 16)) {
            one = s.prefillAllLogits(toks);
        }
        try (Session s = new Session(backend, loaded, 16).maxBatch(4)) {
            chunked = s.prefillAllLogits(toks);
            assertEquals(13, s.position());
        }
        try (Session s = new Session(backend, loaded, 16)) {
            lastOne = s.prefill(toks);
        }
        try (Session s = new Session(backend, loaded, 16).maxBatch(3)) {
            lastChunked = s.prefill(toks);
        }
        assertArrayEquals(one, chunked);
        assertArrayEquals(lastOne, lastChunked);
        assertArrayEquals(Arrays.copyOfRange(one, 12 * C.vocabSize(), 13 * C.vocabSize()), lastOne);
    }

    @Test
    void yarnInverseFrequenciesForHeadDim16ComputedByHand() {
        // theta 150000, factor 32, ctx0 4096, alpha 1, beta 32, hd 16 → d = 8;
        // low = 8·ln(4096/(32·2π))/ln(150000) = 2.02319, high = 8·ln(4096/(2π))/ln(150000) = 4.34951.
        // i ≤ 2: ramp < 0 → mask 1 → 1/freq (pure extrapolation); i ≥ 5: ramp > 1 → 1/(32·freq);
        // i = 3: mask 0.58011, i = 4: mask 0.15024 (blend).
        double[] expected = {
            1.0,
            0.2254180002028708,
            0.050813274815461475,
            0.006794959489732219,
            0.00045648391922324086,
            1.818833668168956e-05,
            4.0999784818029795e-06,
            9.242089502428301e-07
        };
        double[] got = Rope.invFreq(C);
        for (int i = 0; i < 8; i++)
            assertEquals(expected[i], got[i], 1e-12 * Math.max(1, expected[i]) + expected[i] * 1e-12, "i=" + i);
        assertEquals(1 / Math.pow(150000, 2.0 / 16), got[1], 1e-15);
        assertEquals(1 / (32 * Math.pow(150000, 14.0 / 16)), got[7], 1e-20);
        assertEquals(0.1 * Math.log(32) + 1, Rope.concentration(C), 1e-15); // 1.34657…
        ModelConfig noYarn =
                new ModelConfig(3, 6, 4, 1031, 96, 160, 7f, 16, 16, 2, 5, 4096, 10000f, 1f, 1f, 32f, 1e-5f);
        assertEquals(1 / Math.pow(10000, 6.0 / 16), Rope.invFreq(noYarn)[3], 1e-15);
        assertEquals(1.0, Rope.concentration(noYarn));
        float[] table = Rope.cosSinTable(C, 3000, 2); // position 3001, j = 7: cos(3001·invFreq_7)·1.3466
        assertEquals((float) (Math.cos(3001 * expected[7]) * (0.1 * Math.log(32) + 1)), table[16 + 14], 1e-7);
        assertEquals((float) (Math.sin(3001 * expected[0]) * (0.1 * Math.log(32) + 1)), table[16 + 1], 1e-6);
    }

    @Test
    void ropePairsTheTwoHalvesOfAHead() {
        // one head of 16: x1 = e_0 (element 0), x2 = 0; at position 1 element 0 → cos·conc, element 8 → sin·conc
        HeapMemoryBackend.Tensor t = new HeapMemoryBackend.Tensor(1, 16);
        t.data[0] = 1;
        float[] table = new float[16];
        for (int j = 0; j < 8; j++) {
            table[2 * j] = (float) (Math.cos(1.0) * 1.5);
            table[2 * j + 1] = (float) (Math.sin(1.0) * 1.5);
        }
        ReferenceBackend.rope(t, 16, table, 0, 1);
        assertEquals((float) (Math.cos(1.0) * 1.5), t.data[0], 1e-6);
        assertEquals((float) (Math.sin(1.0) * 1.5), t.data[8], 1e-6); // not element 1 (adjacent pairing)
        assertEquals(0f, t.data[1]);
    }

    /** Attention over hand-set q/k/v: checks the sink term and the grouped GQA mapping. */
    @Test
    void attentionWithSinksUsesGroupedKvHeads() {
        int layer = 1; // full attention
        int T = 3, hd = C.headDim(), heads = C.numAttentionHeads(), kvDim = C.kvDim();
        float[] sinks = weights.layers().get(layer).sinks().dequantizeAll();
        float[] q = new float[T * C.qDim()], k = new float[T * kvDim], v = new float[T * kvDim];
        // all scores 0 (q = 0); KV head 0 values = 1, KV head 1 values = 2
        for (int j = 0; j < T; j++)
            for (int d = 0; d < hd; d++) {
                v[j * kvDim + d] = 1;
                v[j * kvDim + hd + d] = 2;
            }
        float[] o = attention(layer, T, q, k, v);
        for (int i = 0; i < T; i++)
            for (int h = 0; h < heads; h++) {
                int n = i + 1; // keys 0..i, each e^0
                double weightSum = n / (n + Math.exp(sinks[h])); // the sink takes its share and is dropped
                double value = h / (heads / C.numKeyValueHeads()) == 0 ? 1 : 2; // h / 8, never h % 2
                assertEquals(weightSum * value, o[i * C.qDim() + h * hd + 3], 1e-6, "row " + i + " head " + h);
            }
    }

    @Test
    void slidingLayersSeeOnlyTheWindow() {
        // layer 0 slides (window 5): position 7 sees keys 3..7 only. Make key 2's value huge: no effect.
        int layer = 0, T = 8, kvDim = C.kvDim();
        float[] q = new float[T * C.qDim()], k = new float[T * kvDim], v = new float[T * kvDim];
        float[] sinks = weights.layers().get(layer).sinks().dequantizeAll();
        Arrays.fill(v, 1);
        for (int d = 0; d < kvDim; d++) v[2 * kvDim + d] = 1e6f;
        float[] o = attention(layer, T, q, k, v);
        assertEquals(5 / (5 + Math.exp(sinks[0])), o[7 * C.qDim()], 1e-6); // exactly 5 keys, all value 1
        assertTrue(o[6 * C.qDim()] > 1e4); // position 6 still sees key 2 (6 − 5 < 2)
    }

    /** Attention of {@code T} positions from 0 on over a new cache, which they fill. */
    private float[] attention(int layer, int T, float[] q, float[] k, float[] v) {
        try (KvCache cache = backend.createKvCache(new KvCacheSpec(C, 8))) {
            return OpRuns.attention(backend, loaded, layer, cache, 0, T, C, q, k, v);
        }
    }

    @Test
    void topKTiesPickTheLowerIndexAndSoftmaxOnlyTheChosen() {
        float[] logits = {1f, 3f, 2f, 3f, 2f, -1f};
        int[] ids = new int[4];
        float[] w = new float[4];
        ReferenceBackend.topK(logits, 0, 6, 4, ids, w, 0);
        assertArrayEquals(new int[] {1, 3, 2, 4}, ids);
        double z = 2 * Math.exp(0) + 2 * Math.exp(-1);
        assertEquals(1 / z, w[0], 1e-7);
        assertEquals(1 / z, w[1], 1e-7);
        assertEquals(Math.exp(-1) / z, w[2], 1e-7);
        assertEquals(1.0, w[0] + w[1] + w[2] + w[3], 1e-6);
    }

    @Test
    void swigluClampsGateAboveOnlyAndLinearBothWays() {
        float L = 7f;
        double sig = 1 / (1 + Math.exp(-1.702 * 7));
        assertEquals(7 * sig * (2 + 1), ReferenceBackend.swiglu(10f, 2f, L), 1e-5); // gate clamped to 7
        assertEquals(7 * sig * (7 + 1), ReferenceBackend.swiglu(7f, 50f, L), 1e-5); // linear clamped to +7
        assertEquals(7 * sig * (-7 + 1), ReferenceBackend.swiglu(7f, -50f, L), 1e-5); // linear clamped to −7
        double a = -10; // no lower clamp on the gate
        assertEquals(a / (1 + Math.exp(1.702 * 10)) * (0.5 + 1), ReferenceBackend.swiglu(-10f, 0.5f, L), 1e-9);
        assertEquals(0f, ReferenceBackend.swiglu(0f, 3f, L));
    }

    @Test
    void greedyArgmaxEqualsArgmaxOfLogits() {
        int[] toks = tokens(6, 4);
        try (Session s = new Session(backend, loaded, 8);
                KvCache other = backendCache()) {
            Executor.Result r = s.executor().forward(toks, 0, other, Executor.Output.LAST_ARGMAX);
            float[] l = s.prefill(toks);
            assertEquals(io.gossgpu.generate.Sampler.argmax(l), r.argmax()[0]);
        }
    }

    private static KvCache backendCache() {
        return backend.createKvCache(new KvCacheSpec(C, 8));
    }
}
