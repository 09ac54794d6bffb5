package io.gossgpu.cuda;

import static io.gossgpu.cuda.CudaAttentionMmaTest.attend;
import static io.gossgpu.cuda.CudaAttentionMmaTest.error;
import static io.gossgpu.cuda.CudaAttentionMmaTest.gaussian;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.forward.Executor;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * attention.cu over caches of every {@link KvType} (kv_round before the attention kernel, kv_store encoding, each
 * attention kernel decoding the cache per {@code AttentionParams.kvType}) against the reference backend, which rounds
 * per {@link KvType#round} and attends in double.
 *
 * <p>On one cache per (shape, layer): a prefill of 40 positions, a batch of 9 more (T &gt; 1 over a cache of several
 * positions), then two decode steps (attention_gqa with its keys split, merged by attention_combine), on layer 0 (sliding:
 * window 5 or 7, the ring wrapped) and layer 1 (full), the same random q, k, v on both backends, each output buffer NaN
 * before the call. Shapes: tiny (head_dim 16, 8 query heads per KV head), wide (head_dim 64, group 4) and ODD (head_dim
 * 14, kv_dim 42: a Q8_0 row of a full block and a short one, both across heads). Each call is checked to take the kernel it tests: attention_mma for the prefill where it fits
 * (the default backend, compute capability 9.0), attention_gqa with GOSS_CUDA_ATTENTION_MMA=0 and for ODD, and the plain
 * {@code attention} kernel with GOSS_CUDA_ATTENTION_SPLITS=0 and no batch large enough for attention_gqa. Then
 * gpt-oss-20b's attention shape (64 / 8 heads, head_dim 64, window 128) on tensor cores: 100 positions, 40 more (the
 * sliding layer's ring of 128 wrapped), one decode step (F32 there is {@link CudaAttentionMmaTest}'s).
 *
 * <p>After each sequence the device cache's bytes equal the layout of {@link KvType} encoded in Java from the inputs
 * (F32 floats, F16 / BF16 halves, Q8_0 quants then the F16 scales), byte for byte: the cache holds exactly what the
 * reference's does, so the outputs differ only as the F32 path's do.
 *
 * <p>Tolerance: {@link #TOL} of each output row's largest magnitude (the kit's attention tolerance; attention_mma's
 * BF16 hi + lo products stay well inside it, see {@link CudaAttentionMmaTest}). A decode of a small model with a typed
 * cache as CUDA graphs gives the logits of the same decode launched kernel by kernel bit for bit, and the reference's
 * within {@code 1e-3} ({@link CudaGraphDecodeTest}'s). Skipped like {@link CudaConformanceTest}.
 */
class CudaKvCacheTypesTest extends CudaAgainstReference {
    /** Of each output row's largest magnitude. */
    static final double TOL = 1e-4;
    /**
     * head_dim 14, 6 query heads over 3 KV heads (kv_dim 42: a Q8_0 row of a full block and one of 10, both across
     * heads), window 5: not a shape attention_mma takes.
     */
    static final ModelConfig ODD =
            new ModelConfig(2, 4, 2, 77, 64, 64, 7.0f, 14, 6, 3, 5, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    /** Context of the small shapes' caches: 40 + 9 + 2 positions. */
    static final int CTX = 51;

    private CudaBackend mma, gqa, plain;

    @BeforeAll
    void open() {
        if (!available()) {
            return;
        }
        mma = openCuda(BackendOptions.defaults());
        gqa = openCuda(BackendOptions.defaults().with(CudaKnobs.ATTENTION_MMA, 0));
        plain = openCuda(BackendOptions.defaults()
                .with(CudaKnobs.ATTENTION_SPLITS, 0)
                .with(CudaKnobs.ATTENTION_PREFILL_MIN_T, Integer.MAX_VALUE));
    }

    /** The default backend: prefill on tensor cores (tiny, wide), attention_gqa (ODD); split decode. */
    @ParameterizedTest
    @EnumSource(KvType.class)
    void prefillOnTensorCoresThenSplitDecode(KvType type) {
        assumeTrue(mma.attention.mma, "the device is below compute capability 8.0: no tensor-core attention");
        for (ModelConfig c : new ModelConfig[] {TestModelPresets.tiny(), BackendConformanceKit.wide(), ODD}) {
            report(type, "mma", c, sequenceMatches(mma, c, type, CTX, 40, 9, 1, 1));
        }
    }

    /** GOSS_CUDA_ATTENTION_MMA=0: attention_gqa for the prefill too. */
    @ParameterizedTest
    @EnumSource(KvType.class)
    void attentionGqaPrefillThenSplitDecode(KvType type) {
        for (ModelConfig c : new ModelConfig[] {TestModelPresets.tiny(), BackendConformanceKit.wide(), ODD}) {
            report(type, "gqa", c, sequenceMatches(gqa, c, type, CTX, 40, 9, 1, 1));
        }
    }

    /** The plain attention kernel for every call. */
    @ParameterizedTest
    @EnumSource(KvType.class)
    void plainAttentionKernel(KvType type) {
        for (ModelConfig c : new ModelConfig[] {TestModelPresets.tiny(), ODD}) {
            report(type, "plain", c, sequenceMatches(plain, c, type, CTX, 40, 9, 1, 1));
        }
    }

    /** gpt-oss-20b's attention shape on tensor cores: 100 positions, 40 more (ring of 128 wrapped), one decode step. */
    @ParameterizedTest
    @EnumSource(
            value = KvType.class,
            names = {"F16", "BF16", "Q8_0"})
    void gptOss20bShapeOnTensorCores(KvType type) {
        assumeTrue(mma.attention.mma, "the device is below compute capability 8.0: no tensor-core attention");
        ModelConfig c = CudaAttentionMmaTest.gptOss20bAttention();
        report(type, "mma", c, sequenceMatches(mma, c, type, 150, 100, 40, 1));
    }

    /**
     * A greedy decode of {@link CudaGraphDecodeTest#SMALL} over a typed cache: graphs on and off give the same logits bit
     * for bit (the type reaches kv_round, kv_store and the kernels through the step's params), the reference's within
     * 1e-3 on the same inputs.
     */
    @ParameterizedTest
    @EnumSource(
            value = KvType.class,
            names = {"F16", "BF16", "Q8_0"})
    void decodeStepsAsGraphs(KvType type) {
        ModelConfig c = CudaGraphDecodeTest.SMALL;
        try (Checkpoint ck = new TestModelGenerator(c, 33).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            int[] prompt = new SplittableRandom(9).ints(5, 0, c.vocabSize()).toArray();
            List<float[]> on, off, ref;
            int[] inputs = new int[24];
            try (Backend b = provider.create(CudaGraphDecodeTest.graphs("1"))) {
                on = greedy(b, w, c, type, prompt, inputs, false);
                assertTrue(b.counters().get("graph_launches") >= 24, "decode steps as graphs: " + b.counters());
            }
            try (Backend b = provider.create(CudaGraphDecodeTest.graphs("0"))) {
                off = greedy(b, w, c, type, prompt, inputs, true);
            }
            ref = greedy(reference, w, c, type, prompt, inputs, true);
            for (int i = 0; i < on.size(); i++) {
                assertArrayEquals(off.get(i), on.get(i), type + ": logits of step " + i + ", graphs on vs off");
                BackendConformanceKit.assertClose(
                        type + ": logits of decode step " + i, ref.get(i), on.get(i), 1, c.vocabSize(), 1e-3);
            }
        }
    }

    /** Logits of a prompt and 24 greedy steps; {@code forced}: take {@code inputs} instead of the argmax (else fill it). */
    private static List<float[]> greedy(
            Backend b, ModelWeights weights, ModelConfig c, KvType type, int[] prompt, int[] inputs, boolean forced) {
        List<float[]> out = new ArrayList<>();
        try (LoadedWeights w = b.loadWeights(weights);
                Session s = new Session(b, w, new KvCacheSpec(c, prompt.length + inputs.length + 3, 0, type), 0)) {
            float[] l = s.forward(prompt, Executor.Output.LAST_LOGITS).logits();
            out.add(l);
            for (int i = 0; i < inputs.length; i++) {
                if (!forced) {
                    inputs[i] = CudaGraphDecodeTest.argmax(l);
                }
                l = s.forward(new int[] {inputs[i]}, Executor.Output.LAST_LOGITS)
                        .logits();
                out.add(l);
            }
        }
        return out;
    }

    private static void report(KvType type, String kernels, ModelConfig c, double worst) {
        System.out.printf(
                "kv %s, %s backend, head_dim %d group %d: largest error %.2e of the row scale%n",
                type.flagName(), kernels, c.headDim(), c.queriesPerKvHead(), worst);
    }

    /** Which attention kernel {@code cuda} runs for a call of n rows of shape c (as CudaAttention plans it). */
    private static String kernel(CudaBackend cuda, ModelConfig c, int n) {
        boolean gqaFits = c.headDim() <= 128 && c.queriesPerKvHead() <= CudaAttention.GQA_PAIRS;
        if (cuda.attention.mma
                && n > 1
                && n >= cuda.attention.prefillMinT
                && CudaAttention.mmaFits(io.gossgpu.device.AttentionParams.of(c, 0, 1, n, 0))) return "mma";
        if (gqaFits && (n >= cuda.attention.prefillMinT || n == 1 && cuda.attention.splits > 0)) return "gqa";
        return "plain";
    }

    /**
     * On layers 0 (sliding) and 1 (full) of shape c, a cache of {@code type} for {@code ctx} positions and calls of the
     * given row counts from position 0, each compared with the reference (and checked to take its kernel); then the
     * cache's bytes. The largest error relative to its row's scale.
     */
    private double sequenceMatches(CudaBackend cuda, ModelConfig c, KvType type, int ctx, int... calls) {
        double worst = 0;
        SplittableRandom r = new SplittableRandom(1000L * type.ordinal() + c.headDim() + ctx);
        try (Checkpoint ck = new TestModelGenerator(c, 48).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            try (LoadedWeights mine = cuda.loadWeights(w);
                    LoadedWeights ref = reference.loadWeights(w)) {
                for (int layer = 0; layer < 2; layer++) {
                    KvCacheSpec spec = new KvCacheSpec(c, ctx, 0, type);
                    int slots = spec.slots(layer), kvDim = c.kvDim();
                    float[][] kRows = new float[slots][kvDim], vRows = new float[slots][kvDim];
                    try (KvCache cm = cuda.createKvCache(spec);
                            KvCache cr = reference.createKvCache(spec)) {
                        int at = 0;
                        for (int n : calls) {
                            float[] q = gaussian(r, n * c.qDim(), 2),
                                    k = gaussian(r, n * kvDim, 1),
                                    v = gaussian(r, n * kvDim, 1);
                            String what = type + " cache, " + kernel(cuda, c, n) + ", hd " + c.headDim() + " group "
                                    + c.queriesPerKvHead() + " layer " + layer + " positions " + at + ".."
                                    + (at + n - 1);
                            long gqaBefore = cuda.counters().get("attention_gqa_calls"),
                                    mmaBefore = cuda.counters().get("attention_mma_calls");
                            float[] want = attend(reference, ref, cr, layer, c, at, n, q, k, v);
                            float[] got = attend(cuda, mine, cm, layer, c, at, n, q, k, v);
                            long gqaCalls = cuda.counters().get("attention_gqa_calls") - gqaBefore,
                                    mmaCalls = cuda.counters().get("attention_mma_calls") - mmaBefore;
                            String expect = kernel(cuda, c, n);
                            assertEquals(expect.equals("gqa") ? 1 : 0, gqaCalls, what + ": attention_gqa calls");
                            assertEquals(expect.equals("mma") ? 1 : 0, mmaCalls, what + ": attention_mma calls");
                            BackendConformanceKit.assertClose(what, want, got, n, c.qDim(), TOL);
                            worst = Math.max(worst, error(want, got, n, c.qDim()));
                            for (int i = 0; i < n; i++) {
                                int slot = (at + i) % slots;
                                System.arraycopy(k, i * kvDim, kRows[slot], 0, kvDim);
                                System.arraycopy(v, i * kvDim, vRows[slot], 0, kvDim);
                            }
                            at += n;
                        }
                        String where =
                                type + " cache, hd " + c.headDim() + " layer " + layer + " (" + slots + " slots)";
                        assertArrayEquals(
                                encode(type, kRows, kvDim),
                                cacheBytes(cuda, cm, layer, true),
                                where + ": the keys' bytes");
                        assertArrayEquals(
                                encode(type, vRows, kvDim),
                                cacheBytes(cuda, cm, layer, false),
                                where + ": the values' bytes");
                    }
                }
            }
        }
        return worst;
    }

    /** Layer {@code layer}'s key (or value) buffer of a CUDA cache, as stored. */
    @SuppressWarnings("unchecked")
    private static byte[] cacheBytes(CudaBackend cuda, KvCache cache, int layer, boolean keys) {
        DeviceKvCache<CudaBuffer> d = (DeviceKvCache<CudaBuffer>) cache;
        byte[] out = new byte[Math.toIntExact(d.bytes(layer))];
        cuda.device.read(keys ? d.keys(layer) : d.values(layer), 0, MemorySegment.ofArray(out));
        return out;
    }

    /** Rows (slots × kvDim) in the layout of {@link KvType}, little-endian, each number encoded by its formulas. */
    static byte[] encode(KvType type, float[][] rows, int kvDim) {
        int n = rows.length, nb = KvType.q8Blocks(kvDim);
        ByteBuffer b =
                ByteBuffer.allocate(Math.toIntExact(type.bytes(n, kvDim))).order(ByteOrder.LITTLE_ENDIAN);
        for (float[] row : rows) {
            for (int col = 0; col < kvDim; col++) {
                switch (type) {
                    case F32 -> b.putFloat(row[col]);
                    case F16 -> b.putShort(Float.floatToFloat16(row[col]));
                    case BF16 -> b.putShort((short) KvType.bf16Bits(row[col]));
                    case Q8_0 -> {
                        int from = col / KvType.Q8_BLOCK * KvType.Q8_BLOCK;
                        float d = KvType.q8Scale(row, from, Math.min(kvDim, from + KvType.Q8_BLOCK));
                        b.put((byte) KvType.q8Quant(row[col], d));
                    }
                }
            }
        }
        if (type == KvType.Q8_0) {
            for (float[] row : rows) {
                for (int blk = 0; blk < nb; blk++) {
                    int from = blk * KvType.Q8_BLOCK;
                    b.putShort(
                            Float.floatToFloat16(KvType.q8Scale(row, from, Math.min(kvDim, from + KvType.Q8_BLOCK))));
                }
            }
        }
        assertEquals(b.capacity(), b.position(), "encoded bytes");
        return b.array();
    }
}
