package io.gossgpu.cpu;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.gguf.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the conformance kit (OpenAI layout, BF16 dense) does not reach: GGUF layouts, long prefills, scalar kernels, knobs. */
class CpuBackendTest {
    @TempDir
    Path dir;

    private static int[] tokens(int n, int vocab, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = r.nextInt(vocab);
        return t;
    }

    /** Whole-model logits of a 70-token prefill (token blocks > 32, every expert busy) and decode steps after it. */
    private static void compareWholeModel(Checkpoint ck, Backend cpu) {
        ModelWeights w = ModelWeights.of(ck);
        ModelConfig c = w.config();
        Backend ref = new ReferenceBackend();
        LoadedWeights lr = ref.loadWeights(w), lc = cpu.loadWeights(w);
        int v = c.vocabSize();
        int[] toks = tokens(75, v, 9);
        float[] want, got;
        try (Session s = new Session(ref, lr, 80)) {
            want = s.prefillAllLogits(toks);
        }
        try (Session s = new Session(cpu, lc, 80)) {
            float[] first = s.prefillAllLogits(Arrays.copyOf(toks, 70));
            BackendConformanceKit.assertClose("prefill logits", Arrays.copyOf(want, 70 * v), first, 70, v, 1e-3);
            for (int i = 70; i < toks.length; i++)
                BackendConformanceKit.assertClose("decode logits at " + i, Arrays.copyOfRange(want, i * v, (i + 1) * v), s.decode(toks[i]), 1, v, 1e-3);
        }
    }

    @ParameterizedTest
    @EnumSource(GgufWriter.DenseType.class)
    void ggufLayoutsMatchTheReference(GgufWriter.DenseType dense) {
        Path f = dir.resolve("m-" + dense + ".gguf");
        GgufWriter.write(new TestModelGenerator(TestModelPresets.tiny(), 31), f, GgufWriter.Options.defaults().withDense(dense));
        try (Checkpoint ck = Checkpoint.open(f, LoadOptions.defaults()); Backend cpu = new CpuBackendProvider().create()) {
            ModelWeights w = ModelWeights.of(ck);
            assertEquals(WeightFormat.MXFP4_GGML, w.layers().get(0).gate().format());
            compareWholeModel(ck, cpu);
        }
    }

    @Test
    void openAiLayoutLongPrefillWithScalarKernelsAndThreeThreads() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 32).inMemory();
             Backend cpu = new CpuBackend(3, new ScalarKernels("test"))) {
            compareWholeModel(ck, cpu);
        }
    }

    @Test
    void openAiLayoutLongPrefillOneThreadMoeInChunks() {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 33).inMemory();
             CpuBackend cpu = new CpuBackend(1, CpuKernels.best())) {
            cpu.moeChunkTokens = 7; // the MoE of a long batch in several passes
            compareWholeModel(ck, cpu);
        }
    }

    @Test
    void vectorKernelsAreUsedWhenTheModuleIsPresent() {
        assertTrue(CpuKernels.vectorApiPresent(), "tests run with --add-modules jdk.incubator.vector");
        try (CpuBackend b = (CpuBackend) new CpuBackendProvider().create()) {
            assertTrue(b.deviceDescription().contains("Vector API"), b.deviceDescription());
        }
    }

    @Test
    void threadKnobIsValidated() {
        assertEquals(4, CpuBackendProvider.parse("goss.cpu.threads", " 4 "));
        for (String bad : new String[]{"0", "-2", "two", "1025"}) {
            GossException e = assertThrows(GossException.class, () -> CpuBackendProvider.parse("goss.cpu.threads", bad));
            assertTrue(e.getMessage().contains("goss.cpu.threads") && e.getMessage().contains(bad) && e.getMessage().contains("1 to 1024"), e.getMessage());
        }
        String old = System.getProperty(CpuBackendProvider.THREADS_PROPERTY);
        try {
            System.setProperty(CpuBackendProvider.THREADS_PROPERTY, "3");
            assertEquals(3, CpuBackendProvider.threads());
            System.setProperty(CpuBackendProvider.THREADS_PROPERTY, "x");
            assertThrows(GossException.class, CpuBackendProvider::threads);
        } finally {
            if (old == null) System.clearProperty(CpuBackendProvider.THREADS_PROPERTY);
            else System.setProperty(CpuBackendProvider.THREADS_PROPERTY, old);
        }
    }

    @Test
    void swigluKernelMatchesTheReferenceIncludingClamps() {
        int n = 37;
        float[] a = new float[n], b = new float[n], ab = new float[n], bb = new float[n], out = new float[n];
        SplittableRandom r = new SplittableRandom(4);
        for (int i = 0; i < n; i++) {
            a[i] = (float) (r.nextGaussian() * 20);
            b[i] = (float) (r.nextGaussian() * 20);
            ab[i] = (float) r.nextGaussian();
            bb[i] = (float) r.nextGaussian();
        }
        for (CpuKernels k : new CpuKernels[]{CpuKernels.best(), new ScalarKernels("test")}) {
            k.swiglu(a, 0, ab, 0, b, 0, bb, 0, 7f, out, 0, n);
            for (int i = 0; i < n; i++) {
                float want = ReferenceBackend.swiglu(a[i] + ab[i], b[i] + bb[i], 7f);
                assertEquals(want, out[i], 1e-5 * Math.max(1, Math.abs(want)), k.describe() + " at " + i);
            }
        }
    }

    @Test
    void permutationIsABijectionWithinBlocks() {
        boolean[] seen = new boolean[64];
        for (int i = 0; i < 64; i++) {
            int p = CpuKernels.permutedIndex(i);
            assertEquals(i / 32, p / 32);
            seen[p] = true;
        }
        for (boolean s : seen) assertTrue(s);
    }
}
