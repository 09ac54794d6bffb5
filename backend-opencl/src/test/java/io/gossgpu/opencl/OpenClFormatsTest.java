package io.gossgpu.opencl;

import static io.gossgpu.conformance.BackendConformanceKit.assertClose;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.F16;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Mxfp4;
import io.gossgpu.quant.Q8_0;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the kit's generated checkpoints do not contain (they are BF16 + OpenAI MXFP4): the same model with
 * its weights re-encoded as F32, F16, Q8_0, strided (colStride 2) F32 and ggml {@code block_mxfp4} experts,
 * including a 2880-wide model whose ggml rows are 1530 bytes (not a multiple of 4). Each variant runs every
 * weight-reading op and a whole-model prefill against the reference backend on the very same weights.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenClFormatsTest {
    private Backend cl, ref;
    private final List<Checkpoint> checkpoints = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @BeforeAll
    void setUp() {
        if (!OpenCl.availability().available()) return;
        cl = OpenClBackend.create(io.gossgpu.backend.BackendOptions.defaults());
        ref = new ReferenceBackend();
    }

    @BeforeEach
    void requireDevice() {
        BackendConformanceKit.requireAvailable(new OpenClBackendProvider());
    }

    @AfterAll
    void tearDown() {
        if (cl != null) cl.close();
        checkpoints.forEach(Checkpoint::close);
        arena.close();
    }

    private ModelWeights base(ModelConfig c, long seed) {
        Checkpoint ck = new TestModelGenerator(c, seed).inMemory();
        checkpoints.add(ck);
        return ModelWeights.of(ck);
    }

    // ---- re-encoders ------------------------------------------------------------------------------

    private WeightView f32(WeightView v) {
        float[] all = v.dequantizeAll();
        MemorySegment s = arena.allocate(4L * all.length, 64);
        for (int i = 0; i < all.length; i++) s.set(LE.F32, 4L * i, all[i]);
        long rb = 4L * v.cols();
        return new WeightView(
                v.name() + "/f32",
                WeightFormat.F32,
                v.experts(),
                v.rows(),
                v.cols(),
                s,
                0,
                rb * v.rows(),
                rb,
                1,
                null,
                0,
                0,
                0);
    }

    /** F32 values every other element (colStride 2), the other elements garbage. */
    private WeightView f32Strided(WeightView v) {
        float[] all = v.dequantizeAll();
        MemorySegment s = arena.allocate(8L * all.length, 64);
        for (int i = 0; i < all.length; i++) {
            s.set(LE.F32, 8L * i, all[i]);
            s.set(LE.F32, 8L * i + 4, 1e30f);
        }
        long rb = 8L * v.cols();
        return new WeightView(
                v.name() + "/f32x2",
                WeightFormat.F32,
                v.experts(),
                v.rows(),
                v.cols(),
                s,
                0,
                rb * v.rows(),
                rb,
                2,
                null,
                0,
                0,
                0);
    }

    private WeightView f16(WeightView v) {
        float[] all = v.dequantizeAll();
        MemorySegment s = arena.allocate(2L * all.length, 64);
        for (int i = 0; i < all.length; i++) s.set(LE.I16, 2L * i, F16.fromFloat(all[i]));
        long rb = 2L * v.cols();
        return new WeightView(
                v.name() + "/f16",
                WeightFormat.F16,
                v.experts(),
                v.rows(),
                v.cols(),
                s,
                0,
                rb * v.rows(),
                rb,
                1,
                null,
                0,
                0,
                0);
    }

    /** Q8_0 where the width is whole blocks, F16 otherwise (the odd shape's 60-wide attention output). */
    private WeightView q8(WeightView v) {
        if (v.cols() % 32 != 0) return f16(v);
        float[] all = v.dequantizeAll();
        long rb = WeightFormat.Q8_0.rowBytes(v.cols());
        MemorySegment s = arena.allocate(rb * v.rows() * v.experts(), 64);
        for (int r = 0; r < v.rows() * v.experts(); r++)
            MemorySegment.copy(MemorySegment.ofArray(Q8_0.quantizeRow(all, r * v.cols(), v.cols())), 0, s, r * rb, rb);
        return new WeightView(
                v.name() + "/q8_0",
                WeightFormat.Q8_0,
                v.experts(),
                v.rows(),
                v.cols(),
                s,
                0,
                rb * v.rows(),
                rb,
                1,
                null,
                0,
                0,
                0);
    }

    /** OpenAI MXFP4 → ggml block_mxfp4 with the same codes and scales (the same numbers). */
    private WeightView ggml(WeightView v) {
        if (v.format() != WeightFormat.MXFP4_OPENAI)
            throw new IllegalArgumentException(v.format().toString());
        long rb = WeightFormat.MXFP4_GGML.rowBytes(v.cols());
        MemorySegment s = arena.allocate(rb * v.rows() * v.experts() + 3, 1).asSlice(3); // odd base offset on purpose
        byte[] codes = new byte[v.cols()];
        byte[] scales = new byte[v.cols() / 32];
        for (int e = 0; e < v.experts(); e++)
            for (int r = 0; r < v.rows(); r++) {
                long co = v.rowOffset(e, r), so = v.scaleRowOffset(e, r);
                for (int b = 0; b < v.cols() / 2; b++) {
                    int packed = v.data().get(LE.U8, co + b) & 0xff;
                    codes[2 * b] = (byte) (packed & 0xf);
                    codes[2 * b + 1] = (byte) (packed >>> 4);
                }
                for (int g = 0; g < scales.length; g++) scales[g] = v.scales().get(LE.U8, so + g);
                MemorySegment.copy(
                        MemorySegment.ofArray(Mxfp4.packGgml(codes, scales)), 0, s, ((long) e * v.rows() + r) * rb, rb);
            }
        return new WeightView(
                v.name() + "/ggml",
                WeightFormat.MXFP4_GGML,
                v.experts(),
                v.rows(),
                v.cols(),
                s,
                0,
                rb * v.rows(),
                rb,
                1,
                null,
                0,
                0,
                0);
    }

    private static ModelWeights map(
            ModelWeights m,
            UnaryOperator<WeightView> embed,
            UnaryOperator<WeightView> dense,
            UnaryOperator<WeightView> experts,
            UnaryOperator<WeightView> unembed) {
        List<LayerWeights> layers = new ArrayList<>();
        for (LayerWeights l : m.layers())
            layers.add(new LayerWeights(
                    l.attnNorm(),
                    dense.apply(l.q()),
                    l.qBias(),
                    dense.apply(l.k()),
                    l.kBias(),
                    dense.apply(l.v()),
                    l.vBias(),
                    l.sinks(),
                    dense.apply(l.out()),
                    l.outBias(),
                    l.mlpNorm(),
                    dense.apply(l.router()),
                    l.routerBias(),
                    experts.apply(l.gate()),
                    l.gateBias(),
                    experts.apply(l.up()),
                    l.upBias(),
                    experts.apply(l.down()),
                    l.downBias()));
        return new ModelWeights(
                m.config(), embed.apply(m.embedding()), layers, m.finalNorm(), unembed.apply(m.unembedding()));
    }

    // ---- the checks -------------------------------------------------------------------------------

    private void checkAllOps(ModelWeights w, boolean wholeModel) {
        ModelConfig c = w.config();
        LoadedWeights mine = cl.loadWeights(w), theirs = ref.loadWeights(w);
        try {
            for (int T : new int[] {1, 5}) {
                SplittableRandom r = new SplittableRandom(T);
                int[] toks = new int[T];
                for (int i = 0; i < T; i++) toks[i] = r.nextInt(c.vocabSize());
                compare(T, c.hiddenSize(), (b, lw, out) -> b.embed(lw, toks, out), mine, theirs, 0, "embed");
                for (DenseKind kind : DenseKind.values())
                    for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
                        float[] x = random(r, T * kind.cols(c));
                        int l = layer;
                        compare(
                                T,
                                kind.rows(c),
                                (b, lw, out) -> {
                                    DeviceTensor in = b.allocate(T, kind.cols(c));
                                    b.write(in, x);
                                    b.dense(lw, l, kind, in, out);
                                    in.close();
                                },
                                mine,
                                theirs,
                                1e-4,
                                "linear " + kind + " layer " + layer);
                    }
                float[] x = random(r, T * c.hiddenSize());
                for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
                    int k = c.expertsPerToken();
                    DeviceTensor ri = ref.allocate(T, c.hiddenSize()), ci = cl.allocate(T, c.hiddenSize());
                    ref.write(ri, x);
                    cl.write(ci, x);
                    DeviceRouting rr = ref.allocateRouting(T, k), cr = cl.allocateRouting(T, k);
                    ref.router(theirs, layer, ri, rr);
                    cl.router(mine, layer, ci, cr);
                    Routing want = ref.readRouting(rr), got = cl.readRouting(cr);
                    assertArrayEquals(want.experts(), got.experts(), "router experts");
                    assertClose("router weights", want.weights(), got.weights(), T, k, 1e-4);
                    DeviceTensor ro = ref.allocate(T, c.hiddenSize()), co = cl.allocate(T, c.hiddenSize());
                    ref.moe(theirs, layer, ri, rr, ro);
                    cl.moe(mine, layer, ci, cr, co);
                    assertClose("moe layer " + layer, ref.read(ro), cl.read(co), T, c.hiddenSize(), 1e-4);
                    for (AutoCloseable a : new AutoCloseable[] {ri, ci, rr, cr, ro, co}) close(a);
                }
                DeviceTensor ri = ref.allocate(T, c.hiddenSize()), ci = cl.allocate(T, c.hiddenSize());
                ref.write(ri, x);
                cl.write(ci, x);
                assertClose("logits", ref.logits(theirs, ri, 0), cl.logits(mine, ci, 0), T, c.vocabSize(), 1e-4);
                assertArrayEquals(ref.argmax(theirs, ri, 0), cl.argmax(mine, ci, 0), "argmax");
                ri.close();
                ci.close();
            }
            if (wholeModel) {
                int[] toks = new int[20];
                SplittableRandom r = new SplittableRandom(9);
                for (int i = 0; i < toks.length; i++) toks[i] = r.nextInt(c.vocabSize());
                float[] want, got;
                try (Session s = new Session(ref, theirs, 24)) {
                    want = s.prefillAllLogits(toks);
                }
                try (Session s = new Session(cl, mine, 24)) {
                    got = s.prefillAllLogits(toks);
                }
                assertClose("whole-model logits", want, got, toks.length, c.vocabSize(), 1e-3);
            }
        } finally {
            mine.close();
            theirs.close();
        }
    }

    private static void close(AutoCloseable a) {
        try {
            a.close();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    interface Op {
        void run(Backend b, LoadedWeights w, DeviceTensor out);
    }

    private void compare(int rows, int cols, Op op, LoadedWeights mine, LoadedWeights theirs, double tol, String what) {
        try (DeviceTensor a = ref.allocate(rows, cols);
                DeviceTensor b = cl.allocate(rows, cols)) {
            op.run(ref, theirs, a);
            op.run(cl, mine, b);
            assertClose(what, ref.read(a), cl.read(b), rows, cols, tol);
        }
    }

    private static float[] random(SplittableRandom r, int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) f[i] = (float) r.nextGaussian();
        return f;
    }

    @Test
    void f32DenseAndGgmlExperts() {
        ModelWeights m = base(TestModelPresets.tiny(), 31);
        checkAllOps(map(m, this::f32, this::f32, this::ggml, this::f32), true);
    }

    @Test
    void f16DenseAndQ8Unembedding() {
        ModelWeights m = base(TestModelPresets.tiny(), 32);
        checkAllOps(map(m, this::f16, this::f16, v -> v, this::q8), true);
    }

    @Test
    void q8DenseAndStridedF32() {
        ModelWeights m = base(BackendConformanceKit.odd(), 33);
        checkAllOps(map(m, this::q8, this::q8, this::ggml, this::f32Strided), true);
    }

    /**
     * Real GGUF files (llama.cpp's gpt-oss layout: Q/K/V split, gate/up de-interleaved, ggml block_mxfp4, F32
     * vectors), memory-mapped read-only, with BF16 and with Q8_0 dense matrices: every op, whole-model logits and
     * a greedy continuation equal to the reference's.
     */
    @Test
    void ggufFilesMemoryMapped(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        for (io.gossgpu.testmodel.GgufWriter.DenseType type : io.gossgpu.testmodel.GgufWriter.DenseType.values()) {
            java.nio.file.Path file = dir.resolve("tiny-" + type + ".gguf");
            io.gossgpu.testmodel.GgufWriter.write(
                    new TestModelGenerator(TestModelPresets.tiny(), 35),
                    file,
                    io.gossgpu.testmodel.GgufWriter.Options.defaults().withDense(type));
            Checkpoint ck = Checkpoint.open(file, io.gossgpu.model.LoadOptions.defaults());
            checkpoints.add(ck);
            ModelWeights w = ModelWeights.of(ck);
            assertEquals(WeightFormat.MXFP4_GGML, w.layers().get(0).gate().format());
            checkAllOps(w, true);
            LoadedWeights mine = cl.loadWeights(w), theirs = ref.loadWeights(w);
            try {
                int[] prompt = {3, 1, 4, 1, 5, 9, 2};
                int[] want, got;
                try (Session s = new Session(ref, theirs, 40)) {
                    want = s.generate(prompt, io.gossgpu.generate.GenerationOptions.greedy(32), null)
                            .tokens();
                }
                try (Session s = new Session(cl, mine, 40)) {
                    got = s.generate(prompt, io.gossgpu.generate.GenerationOptions.greedy(32), null)
                            .tokens();
                }
                assertArrayEquals(want, got, "greedy continuation, " + type + " GGUF");
            } finally {
                mine.close();
                theirs.close();
            }
        }
    }

    /** hidden 2880 as in gpt-oss: a ggml row is 90 blocks = 1530 bytes, intermediate 96 → 51-byte rows. */
    @Test
    void ggmlRowsWhoseByteLengthIsNotAMultipleOfFour() {
        ModelConfig c = new ModelConfig(1, 4, 2, 50, 2880, 96, 7.0f, 64, 4, 2, 8, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
        assertEquals(1530, WeightFormat.MXFP4_GGML.rowBytes(2880));
        assertTrue(WeightFormat.MXFP4_GGML.rowBytes(96) % 4 != 0);
        ModelWeights m = base(c, 34);
        checkAllOps(map(m, v -> v, v -> v, this::ggml, v -> v), true);
        checkAllOps(m, false); // and the OpenAI layout at the same width
    }
}
