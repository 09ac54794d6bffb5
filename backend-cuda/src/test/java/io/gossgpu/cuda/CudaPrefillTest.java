package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The prefill kernels at batch sizes around their tiles, which the conformance kit (batches of 1, 3, 17 and
 * whole-model prefills of 26) does not reach: the MoE batched by expert (moe.cu's tiled kernels, tiles of 32 slots)
 * with T·K from a few slots to several tiles per expert, in both MXFP4 layouts (the OpenAI checkpoint's and
 * GGUF's block_mxfp4, whose 51-byte rows at width 96 are not 4-byte aligned), and whole-model prefill
 * logits of 70 tokens (sliding window 5) against the reference; decode attention with its keys split over 3
 * blocks per KV head. Skipped like {@link CudaConformanceTest}.
 */
class CudaPrefillTest extends CudaAgainstReference {
    static final double OP_TOL = 1e-4, MODEL_TOL = 1e-3; // the kit's tolerances (BackendConformanceKit)
    private CudaBackend cuda, perSlot, fp32Attention;
    private Mxfp4Layouts layouts;

    @BeforeAll
    void setUp(@TempDir Path dir) {
        if (!available()) {
            return;
        }
        BackendOptions none = BackendOptions.defaults();
        // decode attention: uneven shares, of two key tiles each at T = 130
        cuda = openCuda(none.with(CudaKnobs.MOE_PREFILL_MIN_T, 1).with(CudaKnobs.ATTENTION_SPLITS, 3));
        // the MoE kernels for decode at every T
        perSlot = openCuda(none.with(CudaKnobs.MOE_PREFILL_MIN_T, Integer.MAX_VALUE));
        // prefill attention on attention_gqa where cuda takes attention_mma (compute capability 8.0+)
        fp32Attention = openCuda(none.with(CudaKnobs.ATTENTION_SPLITS, 3).with(CudaKnobs.ATTENTION_MMA, 0));
        layouts = closeAfterAll(new Mxfp4Layouts(TestModelPresets.tiny(), 41, 42, dir));
    }

    /**
     * T = 1 .. 70 tokens of 4 slots over 6 experts: from single slots to three tiles of 32 for one expert; the
     * same with the per-slot kernels that decode uses.
     */
    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {1, 2, 9, 33, 70})
    void moeBatchedByExpertMatchesTheReference(int T) {
        moeMatchesTheReference(cuda, T, true, layouts.both());
    }

    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {1, 3, 70})
    void moePerSlotMatchesTheReference(int T) {
        moeMatchesTheReference(perSlot, T, false, layouts.both());
    }

    /**
     * moe_down with rows too long for shared memory to hold every slot's activations (intermediate 4032, 3 experts
     * per token: passes of 2 slots, then 1), in both layouts. gpt-oss's own widths fit all 4 slots in one pass.
     */
    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {1, 3})
    void moePerSlotInPassesMatchesTheReference(int T, @TempDir Path dir) {
        ModelConfig c = new ModelConfig(1, 4, 3, 64, 64, 4032, 7.0f, 16, 4, 2, 5, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
        try (Mxfp4Layouts longRows = new Mxfp4Layouts(c, 44, 45, dir)) {
            moeMatchesTheReference(perSlot, T, false, longRows.both());
        }
    }

    private void moeMatchesTheReference(CudaBackend cuda, int T, boolean tiled, ModelWeights... layouts) {
        for (ModelWeights w : layouts) {
            ModelConfig c = w.config();
            int k = c.expertsPerToken(), h = c.hiddenSize();
            float[] x = OpRuns.gaussian(new SplittableRandom(900 + T), T * h);
            long before = cuda.counters().get("moe_tiled_calls");
            try (LoadedWeights mine = cuda.loadWeights(w);
                    LoadedWeights ref = reference.loadWeights(w)) {
                for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
                    Routing want = OpRuns.routing(reference, ref, layer, x, T, h, k);
                    String what = w.layers().get(0).gate().format() + " moe layer " + layer + ", T=" + T;
                    BackendConformanceKit.assertClose(
                            what,
                            OpRuns.moe(reference, ref, layer, x, T, h, want),
                            OpRuns.moe(cuda, mine, layer, x, T, h, want),
                            T,
                            h,
                            OP_TOL);
                }
            }
            assertEquals(
                    tiled ? c.numHiddenLayers() : 0,
                    cuda.counters().get("moe_tiled_calls") - before,
                    "MoE batched by expert in every layer, or in none");
        }
    }

    /**
     * Attention in three calls on one cache (7 positions, then T, then one decode step) on a sliding and a full
     * layer of tiny (16 heads over 2 KV heads: group 8, hd 16, window 5), odd (group 2, hd 10, window 3) and wide
     * (group 4, hd 64, window 7): query tiles of 2, 8 and 4 rows, key tiles of 32 crossing the window and the
     * cache/batch boundary. The prefill calls take attention_mma where it fits (tiny, wide: head_dim a multiple of 16) on
     * {@code cuda} and attention_gqa on {@code fp32Attention} (GOSS_CUDA_ATTENTION_MMA=0).
     */
    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {2, 9, 33, 70, 130})
    void tiledAttentionMatchesTheReference(int T) {
        tiledAttentionMatchesTheReference(cuda, T);
        tiledAttentionMatchesTheReference(fp32Attention, T);
        assertEquals(0, fp32Attention.counters().get("attention_mma_calls"));
    }

    private void tiledAttentionMatchesTheReference(CudaBackend cuda, int T) {
        for (ModelConfig c :
                new ModelConfig[] {TestModelPresets.tiny(), BackendConformanceKit.odd(), BackendConformanceKit.wide()
                }) {
            try (Checkpoint ck = new TestModelGenerator(c, 43).inMemory()) {
                ModelWeights w = ModelWeights.of(ck);
                long before = cuda.counters().get("attention_gqa_calls")
                        + cuda.counters().get("attention_mma_calls");
                SplittableRandom r = new SplittableRandom(300 + T);
                try (LoadedWeights mine = cuda.loadWeights(w);
                        LoadedWeights ref = reference.loadWeights(w)) {
                    for (int layer = 0; layer < 2; layer++) { // 0 slides, 1 does not
                        KvCacheSpec spec = new KvCacheSpec(c, 7 + T + 1 + 3);
                        try (KvCache cm = cuda.createKvCache(spec);
                                KvCache cr = reference.createKvCache(spec)) {
                            int start = 0;
                            for (int n : new int[] {7, T, 1}) {
                                float[] q = OpRuns.gaussian(r, n * c.qDim()),
                                        k = OpRuns.gaussian(r, n * c.kvDim()),
                                        v = OpRuns.gaussian(r, n * c.kvDim());
                                String what = "attention, hd " + c.headDim() + " group " + c.queriesPerKvHead()
                                        + " layer " + layer + " positions " + start + ".." + (start + n - 1);
                                BackendConformanceKit.assertClose(
                                        what,
                                        OpRuns.attention(reference, ref, layer, cr, start, n, c, q, k, v),
                                        OpRuns.attention(cuda, mine, layer, cm, start, n, c, q, k, v),
                                        n,
                                        c.qDim(),
                                        OP_TOL);
                                start += n;
                            }
                        }
                    }
                }
                assertEquals(
                        6,
                        cuda.counters().get("attention_gqa_calls")
                                + cuda.counters().get("attention_mma_calls")
                                - before,
                        "every call took a tiled kernel (the decode step attention_gqa with its keys in 3 splits)");
            }
        }
    }

    /** A 70-token prefill (window 5, three sliding-window layers' worth of ring wrap) in both layouts. */
    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {70})
    void wholeModelPrefillLogitsMatchTheReference(int T) {
        for (ModelWeights w : layouts.both()) {
            ModelConfig c = w.config();
            assertTrue(c.slidingWindow() < T);
            int[] toks = new SplittableRandom(17).ints(T, 0, c.vocabSize()).toArray();
            float[] want, got;
            try (LoadedWeights ref = reference.loadWeights(w);
                    Session s = new Session(reference, ref, T + 4)) {
                want = s.prefillAllLogits(toks);
            }
            try (LoadedWeights mine = cuda.loadWeights(w);
                    Session s = new Session(cuda, mine, T + 4)) {
                got = s.prefillAllLogits(toks);
            }
            BackendConformanceKit.assertClose(
                    w.layers().get(0).gate().format() + " prefill logits", want, got, T, c.vocabSize(), MODEL_TOL);
        }
    }
}
