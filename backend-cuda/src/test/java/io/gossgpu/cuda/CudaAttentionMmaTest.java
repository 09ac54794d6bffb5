package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.device.AttentionParams;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * attention.cu's prefill attention on tensor cores (attention_mma: q, k, v and the probabilities as two BF16 terms,
 * three products, FP32 sums, online softmax from the sink) against the reference backend (double), on one cache in
 * two calls: {@code start} positions first (the cache then holds them), then {@code T} rows at positions
 * {@code start ..}. Shapes: gpt-oss-20b's attention (64 query heads over 8 KV heads: group 8, head_dim 64, window 128
 * on even layers, sinks), tiny (group 8, head_dim 16, window 5) and wide (group 4, head_dim 64, window 7); both a
 * sliding and a full layer; T not a multiple of the 8- or 16-row query tiles nor of the 32-key tiles; the second call
 * past the 20b window with the ring of its sliding layer wrapped. The output buffer holds NaN before each call (a row
 * or head left unwritten fails). Run shuffled and poisoned as CI runs the kit (GOSS_EMU_ORDER=shuffle:1
 * GOSS_EMU_POISON=1: the kernel's shared memory is dynamic, so every block starts on NaNs).
 * <p>Tolerance: {@link #TOL} of each output row's largest value, the kit's (a GPU rounds inside its 16-term sums its own way). The split keeps about 16
 * mantissa bits of each operand (relative error about 2^-16 per product); measured here up to about 1e-5 (scores of
 * q at twice a unit Gaussian), the FP32 attention_gqa about 1e-6. With the sink left out of the sum, the window
 * ignored, or the causal mask one key too far, this test fails (each planted in the kernel). Skipped like
 * {@link CudaConformanceTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CudaAttentionMmaTest {
    /** Of each output row's largest magnitude: attention_mma against the reference. */
    static final double TOL = 1e-4;

    /** gpt-oss-20b's attention (heads, KV heads, head_dim, window) on a small model (2 layers, hidden 64, 4 experts). */
    static ModelConfig gptOss20bAttention() {
        return new ModelConfig(2, 4, 2, 300, 64, 64, 7.0f, 64, 64, 8, 128, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    private final BackendProvider provider = new CudaConformanceTest().provider();
    private CudaBackend mma, fp32;
    private Backend reference;

    @BeforeAll
    void setUp() {
        if (!io.gossgpu.backend.Backends.safeAvailability(provider).available()) {
            return;
        }
        mma = (CudaBackend) provider.create(BackendOptions.defaults());
        fp32 = (CudaBackend) provider.create(BackendOptions.defaults().with(CudaKnobs.ATTENTION_MMA, 0));
        reference = new ReferenceBackend();
    }

    @BeforeEach
    void skipWhenUnavailable() {
        BackendConformanceKit.requireAvailable(provider);
    }

    @AfterAll
    void tearDown() {
        for (Backend b : new Backend[] {mma, fp32, reference}) {
            if (b != null) {
                b.close();
            }
        }
    }

    /** On a real device below compute capability 8.0 there is no attention_mma to compare (turingKeepsTheFp32Kernel covers it). */
    private void requireTensorCores() {
        assumeTrue(mma.attention.mma, "the device is below compute capability 8.0: no tensor-core attention");
    }

    @Test
    void theDeviceTakesTheMmaKernelUnlessSwitchedOff() {
        requireTensorCores();
        assertEquals(1, mma.knobs().get("GOSS_CUDA_ATTENTION_MMA"));
        assertEquals(0, fp32.knobs().get("GOSS_CUDA_ATTENTION_MMA"));
    }

    /**
     * Which shapes attention_mma takes (head_dim a multiple of 16 up to 64, at most 64 query heads per KV head), and its
     * shared memory: within the 48 KiB every kernel keeps to, a multiple of 32 bytes (its wmma tiles' alignment).
     */
    @Test
    void itTakesTheShapesItFits() {
        assertTrue(CudaAttention.mmaFits(AttentionParams.of(gptOss20bAttention(), 0, 128, 512, 0)));
        assertTrue(CudaAttention.mmaFits(AttentionParams.of(TestModelPresets.tiny(), 1, 64, 3, 0)));
        assertFalse(CudaAttention.mmaFits(AttentionParams.of(BackendConformanceKit.odd(), 1, 64, 9, 0)), "head_dim 10");
        assertFalse(
                CudaAttention.mmaFits(new AttentionParams(9, 0, 8, 8, 128, 128, 64, 0, 0.1f, 1, 1, 0, 0)),
                "head_dim 128");
        assertFalse(
                CudaAttention.mmaFits(new AttentionParams(9, 0, 128, 128, 64, 64, 64, 0, 0.1f, 1, 1, 0, 0)),
                "group 128");
        assertEquals(46080, CudaAttention.mmaSharedBytes(64));
        for (int hd = 16; hd <= CudaAttention.MMA_HD_MAX; hd += 16) {
            long bytes = CudaAttention.mmaSharedBytes(hd);
            assertTrue(bytes <= 48 * 1024 && bytes % 32 == 0, "head_dim " + hd + ": " + bytes + " bytes");
        }
    }

    /** gpt-oss-20b's attention shape: {@code start} positions in the cache, then T rows. */
    @ParameterizedTest(name = "start={0}, T={1}")
    @CsvSource({"0, 77", "0, 160", "150, 45", "5, 2"})
    void gptOss20bShapeMatchesTheReference(int start, int T) {
        requireTensorCores();
        double worst = attentionMatchesTheReference(mma, gptOss20bAttention(), start, T, TOL);
        System.out.printf(
                "attention_mma, 20b shape, start %d, T %d: largest error %.2e of the row scale%n", start, T, worst);
    }

    /** tiny (group 8, head_dim 16, window 5) and wide (group 4, head_dim 64, window 7): windows well inside a key tile. */
    @ParameterizedTest(name = "start={0}, T={1}")
    @CsvSource({"0, 19", "7, 70", "40, 33"})
    void smallShapesMatchTheReference(int start, int T) {
        requireTensorCores();
        for (ModelConfig c : new ModelConfig[] {TestModelPresets.tiny(), BackendConformanceKit.wide()}) {
            attentionMatchesTheReference(mma, c, start, T, TOL);
        }
    }

    /** The FP32 kernel it replaces, on the same calls: the measure of what the split costs. */
    @Test
    void theFp32KernelOnTheSameCalls() {
        double worst = attentionMatchesTheReference(fp32, gptOss20bAttention(), 150, 45, TOL);
        System.out.printf(
                "attention_gqa (GOSS_CUDA_ATTENTION_MMA=0), 20b shape, start 150, T 45: largest error %.2e of the row scale%n",
                worst);
    }

    /** Below compute capability 8.0 (sm_75 PTX, where attention_mma is a stub) attention_gqa runs, whatever the knob. */
    @Test
    void turingKeepsTheFp32Kernel() {
        assumeTrue(FakeCudaDriver.present(), FakeCudaDriver.NEEDED);
        FakeCudaDriver.configure(13000, 75);
        try (CudaBackend turing = (CudaBackend) provider.create(BackendOptions.defaults())) {
            assertEquals(0, turing.knobs().get("GOSS_CUDA_ATTENTION_MMA"));
            assertTrue(turing.deviceDescription().contains("sm_75"), turing.deviceDescription());
            attentionMatchesTheReference(turing, TestModelPresets.tiny(), 3, 9, 1e-4);
            assertEquals(0, turing.counters().get("attention_mma_calls"));
        } finally {
            FakeCudaDriver.configure(13000, 90);
        }
    }

    /**
     * Layers 0 (sliding) and 1 (full) of a model of shape {@code c}: a call of {@code start} rows, then one of T rows,
     * each compared with the reference; the largest error of the second call, relative to its row's scale.
     */
    private double attentionMatchesTheReference(CudaBackend cuda, ModelConfig c, int start, int T, double tol) {
        double worst = 0;
        SplittableRandom r = new SplittableRandom(31L * start + T);
        try (Checkpoint ck = new TestModelGenerator(c, 47).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            try (LoadedWeights mine = cuda.loadWeights(w);
                    LoadedWeights ref = reference.loadWeights(w)) {
                for (int layer = 0; layer < 2; layer++) {
                    KvCacheSpec spec = new KvCacheSpec(c, start + T + 5);
                    try (KvCache cm = cuda.createKvCache(spec);
                            KvCache cr = reference.createKvCache(spec)) {
                        int at = 0;
                        for (int n : start > 0 ? new int[] {start, T} : new int[] {T}) {
                            long before = cuda.counters().get("attention_mma_calls");
                            float[] q = gaussian(r, n * c.qDim(), 2),
                                    k = gaussian(r, n * c.kvDim(), 1),
                                    v = gaussian(r, n * c.kvDim(), 1);
                            float[] want = attend(reference, ref, cr, layer, c, at, n, q, k, v);
                            float[] got = attend(cuda, mine, cm, layer, c, at, n, q, k, v);
                            String what =
                                    "GOSS_CUDA_ATTENTION_MMA=" + cuda.knobs().get("GOSS_CUDA_ATTENTION_MMA")
                                            + ": attention, hd " + c.headDim() + " group " + c.queriesPerKvHead()
                                            + " layer " + layer + " positions " + at + ".." + (at + n - 1);
                            BackendConformanceKit.assertClose(what, want, got, n, c.qDim(), tol);
                            if (at == start) {
                                worst = Math.max(worst, error(want, got, n, c.qDim()));
                            }
                            long mmaCalls = cuda.counters().get("attention_mma_calls") - before;
                            assertEquals(
                                    cuda.attention.mma && n > 1 ? 1 : 0, mmaCalls, what + ": calls of attention_mma");
                            at += n;
                        }
                    }
                }
            }
        }
        return worst;
    }

    /**
     * Attention of n rows at positions {@code at ..} on backend b, its output buffer NaN before the call (also
     * CudaKvCacheTypesTest's).
     */
    static float[] attend(
            Backend b,
            LoadedWeights w,
            KvCache cache,
            int layer,
            ModelConfig c,
            int at,
            int n,
            float[] q,
            float[] k,
            float[] v) {
        try (DeviceTensor qb = b.allocate(n, c.qDim());
                DeviceTensor kb = b.allocate(n, c.kvDim());
                DeviceTensor vb = b.allocate(n, c.kvDim());
                DeviceTensor ob = b.allocate(n, c.qDim())) {
            b.write(qb, q);
            b.write(kb, k);
            b.write(vb, v);
            float[] nan = new float[n * c.qDim()];
            Arrays.fill(nan, Float.NaN);
            b.write(ob, nan);
            b.attention(w, layer, qb, kb, vb, Batch.of(cache, at, n), ob);
            return b.read(ob);
        }
    }

    static float[] gaussian(SplittableRandom r, int n, double std) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = (float) (r.nextGaussian() * std);
        }
        return f;
    }

    /** The largest |got − want| of a row over that row's largest |want|. */
    static double error(float[] want, float[] got, int rows, int cols) {
        double worst = 0;
        for (int i = 0; i < rows; i++) {
            double scale = 1e-30, diff = 0;
            for (int c = 0; c < cols; c++) {
                scale = Math.max(scale, Math.abs(want[i * cols + c]));
                diff = Math.max(diff, Math.abs(want[i * cols + c] - got[i * cols + c]));
            }
            worst = Math.max(worst, diff / scale);
        }
        return worst;
    }
}
