package io.gossgpu.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOp;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.cpu.CpuBackend;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Declining an op ({@link Backend#supports}, {@link io.gossgpu.backend.DeclinedOps}) with the fused residual add +
 * RMSNorm ({@link Backend#addRmsNorm}) that only reference and cpu implement: their op equals the separate ops, a
 * backend that declines it gets add then rmsNorm from the executor, one that runs it gets it instead of them, and
 * both give the same logits.
 */
class DeclinedOpTest {
    private static final int[] TOKENS = {5, 17, 3, 250, 9};

    /** The reference or cpu backend counting the calls that matter here; {@code fused}: whether it runs ADD_RMS_NORM. */
    static final class Counting extends ForwardingBackend {
        final boolean fused;
        int add, rmsNorm, addRmsNorm, logits, sample;

        Counting(Backend delegate, boolean fused) {
            super(delegate);
            this.fused = fused;
        }

        @Override
        public boolean supports(BackendOp op) {
            return op == BackendOp.ADD_RMS_NORM ? fused : super.supports(op);
        }

        @Override
        public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
            add++;
            super.add(a, b, out);
        }

        @Override
        public void rmsNorm(LoadedWeights w, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
            rmsNorm++;
            super.rmsNorm(w, layer, which, x, out);
        }

        @Override
        public void addRmsNorm(
                LoadedWeights w,
                int layer,
                NormKind which,
                DeviceTensor x,
                DeviceTensor y,
                DeviceTensor sum,
                DeviceTensor out) {
            addRmsNorm++;
            delegate.addRmsNorm(w, layer, which, x, y, sum, out);
        }

        @Override
        public float[] logits(LoadedWeights w, DeviceTensor x, int from) {
            logits++;
            return super.logits(w, x, from);
        }

        @Override
        public int[] sample(LoadedWeights w, DeviceTensor x, int from, double[] t, double[] u) {
            sample++;
            return super.sample(w, x, from, t, u);
        }
    }

    static CpuBackend cpu() {
        return new CpuBackend(2, KernelSet.of(null, CpuKernels.best()));
    }

    private static float[] logits(Counting b, Checkpoint ck) {
        try (b;
                LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                var cache = b.createKvCache(new io.gossgpu.backend.KvCacheSpec(w.config(), 16));
                Executor ex = new Executor(b, w)) {
            return ex.forward(TOKENS, 0, cache, Executor.Output.ALL_LOGITS).logits();
        }
    }

    @Test
    void aBackendThatDeclinesTheFusedOpGetsAddThenRmsNorm() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            int layers = ModelWeights.of(ck).config().numHiddenLayers();
            Counting declining = new Counting(new ReferenceBackend(), false),
                    fusing = new Counting(new ReferenceBackend(), true);
            float[] split = logits(declining, ck), fused = logits(fusing, ck);
            // two residuals per layer, each with the norm after it; the first attention norm stands alone
            assertEquals(0, declining.addRmsNorm);
            assertEquals(2 * layers, declining.add);
            assertEquals(2 * layers + 1, declining.rmsNorm);
            assertEquals(2 * layers, fusing.addRmsNorm);
            assertEquals(0, fusing.add, "the fused op replaces every residual add");
            assertEquals(1, fusing.rmsNorm);
            assertArrayEquals(split, fused, "the reference's fused op is its add then its rmsNorm, bit for bit");
        }
    }

    @Test
    void cpuFusedOpMatchesItsSeparateOps() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            float[] split = logits(new Counting(cpu(), false), ck), fused = logits(new Counting(cpu(), true), ck);
            // the same kernels row by row (add, sum of squares, scale), only in one pass: the same floats
            // (the whole model against the reference is the cpu conformance kit's job, at its quantized-input
            // tolerance)
            assertArrayEquals(split, fused, "cpu addRmsNorm = cpu add then rmsNorm");
        }
    }

    /** The op alone, on rows of random values, reference and cpu: sum exact, norm bit-identical (reference) or 1e-6 (cpu). */
    @Test
    void theOpAloneEqualsTheSeparateOps() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            ModelWeights mw = ModelWeights.of(ck);
            for (Supplier<Backend> make :
                    java.util.List.<Supplier<Backend>>of(ReferenceBackend::new, DeclinedOpTest::cpu))
                try (Backend b = make.get();
                        Backend ref = new ReferenceBackend();
                        LoadedWeights w = b.loadWeights(mw);
                        LoadedWeights rw = ref.loadWeights(mw)) {
                    assertTrue(b.supports(BackendOp.ADD_RMS_NORM), b.name() + " runs the fused op itself");
                    int T = 7, h = w.config().hiddenSize();
                    SplittableRandom r = new SplittableRandom(1);
                    float[] x = new float[T * h], y = new float[T * h];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) (r.nextGaussian() * 3);
                        y[i] = (float) r.nextGaussian();
                    }
                    DeviceTensor a = b.allocate(T, h),
                            c = b.allocate(T, h),
                            sum = b.allocate(T, h),
                            out = b.allocate(T, h);
                    DeviceTensor ra = ref.allocate(T, h), rc = ref.allocate(T, h), rout = ref.allocate(T, h);
                    b.write(a, x);
                    b.write(c, y);
                    ref.write(ra, x);
                    ref.write(rc, y);
                    b.addRmsNorm(
                            w,
                            1,
                            NormKind.MLP,
                            a,
                            c,
                            sum,
                            out); // sum apart from the inputs (the executor's in-place use: the kit)
                    ref.add(ra, rc, ra);
                    ref.rmsNorm(rw, 1, NormKind.MLP, ra, rout);
                    assertArrayEquals(ref.read(ra), b.read(sum), b.name() + " sum");
                    assertArrayEquals(x, b.read(a), b.name() + " leaves its input alone");
                    float[] want = ref.read(rout), got = b.read(out);
                    double tol = b instanceof ReferenceBackend ? 0 : 1e-6;
                    for (int i = 0; i < want.length; i++)
                        assertEquals(want[i], got[i], tol * Math.max(1, Math.abs(want[i])), b.name() + " norm " + i);
                }
        }
    }

    @Test
    void declinedSamplingRunsOnTheHostAndAnOpWithoutFallbackCannotBeDeclined() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 3).inMemory()) {
            Counting b = new Counting(new ReferenceBackend(), false);
            assertFalse(b.supports(BackendOp.SAMPLE), "a ForwardingBackend declines sampling");
            try (b;
                    LoadedWeights w = b.loadWeights(ModelWeights.of(ck));
                    var cache = b.createKvCache(new io.gossgpu.backend.KvCacheSpec(w.config(), 16));
                    Executor ex = new Executor(b, w)) {
                int id = ex.forward(TOKENS, 0, cache, new Executor.Sampling(0.8, 0.3))
                        .sampled();
                assertEquals(0, b.sample, "the executor does not call a declined op");
                assertEquals(1, b.logits, "its host path reads the logits");
                assertTrue(id >= 0 && id < w.config().vocabSize());
            }
            Backend noEmbed = new ForwardingBackend(new ReferenceBackend()) {
                @Override
                public boolean supports(BackendOp op) {
                    return op != BackendOp.EMBED && super.supports(op);
                }
            };
            try (noEmbed;
                    LoadedWeights w = noEmbed.loadWeights(ModelWeights.of(ck))) {
                GossException e = assertThrows(GossException.class, () -> new Executor(noEmbed, w));
                assertEquals("backend reference declines EMBED, which every backend must run", e.getMessage());
            }
        }
    }
}
