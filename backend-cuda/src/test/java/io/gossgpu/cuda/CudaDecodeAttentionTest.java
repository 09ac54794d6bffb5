package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Decode attention with its keys split over GOSS_CUDA_ATTENTION_SPLITS blocks per KV head (attention_gqa) and merged
 * by attention_combine, against the reference at the kit's tolerance 1e-4: a prefill of n0 tokens fills the cache,
 * then two decode steps, on a sliding (window) and a full layer of tiny (hd 16, 32-thread combine) and wide (hd 64).
 * n0 = 7: one split with keys, the rest empty; 100: four splits of 32 keys (3 of 3 splits); 1100: keys in 35 of 40
 * splits, so the listed splits of attention_combine pass the warp's first 32. Skipped like {@link CudaConformanceTest}.
 */
class CudaDecodeAttentionTest extends CudaAgainstReference {
    static final double OP_TOL = 1e-4;

    @ParameterizedTest(name = "splits={0}")
    @ValueSource(ints = {3, 32, 40})
    void splitDecodeAttentionMatchesTheReference(int splits) {
        try (CudaBackend cuda =
                (CudaBackend) provider.create(BackendOptions.defaults().with(CudaKnobs.ATTENTION_SPLITS, splits))) {
            for (ModelConfig c : new ModelConfig[] {TestModelPresets.tiny(), BackendConformanceKit.wide()}) {
                for (int n0 : new int[] {7, 100, 1100}) {
                    decodeMatches(cuda, c, n0);
                }
            }
        }
    }

    private void decodeMatches(CudaBackend cuda, ModelConfig c, int n0) {
        try (Checkpoint ck = new TestModelGenerator(c, 44).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            SplittableRandom r = new SplittableRandom(500 + n0);
            try (LoadedWeights mine = cuda.loadWeights(w);
                    LoadedWeights ref = reference.loadWeights(w)) {
                for (int layer = 0; layer < 2; layer++) { // 0 slides, 1 does not
                    KvCacheSpec spec = new KvCacheSpec(c, n0 + 2);
                    try (KvCache cm = cuda.createKvCache(spec);
                            KvCache cr = reference.createKvCache(spec)) {
                        int start = 0;
                        for (int n : new int[] {n0, 1, 1}) {
                            float[] q = OpRuns.gaussian(r, n * c.qDim()),
                                    k = OpRuns.gaussian(r, n * c.kvDim()),
                                    v = OpRuns.gaussian(r, n * c.kvDim());
                            long before = cuda.counters().get("attention_gqa_calls");
                            float[] got = OpRuns.attention(cuda, mine, layer, cm, start, n, c, q, k, v);
                            float[] want = OpRuns.attention(reference, ref, layer, cr, start, n, c, q, k, v);
                            if (n == 1) {
                                assertEquals(
                                        1,
                                        cuda.counters().get("attention_gqa_calls") - before,
                                        "a decode step takes attention_gqa");
                                BackendConformanceKit.assertClose(
                                        "decode attention, splits " + cuda.attention.splits + ", hd " + c.headDim()
                                                + " layer " + layer + " position " + start,
                                        want,
                                        got,
                                        1,
                                        c.qDim(),
                                        OP_TOL);
                            }
                            start += n;
                        }
                    }
                }
            }
        }
    }
}
