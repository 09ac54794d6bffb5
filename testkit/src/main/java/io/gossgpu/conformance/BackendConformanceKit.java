package io.gossgpu.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.GossException;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeclinedOps;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Routing;
import io.gossgpu.forward.Executor;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.SamplerConfig;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testkit.DemoModels;
import io.gossgpu.testkit.HeldOut;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The conformance kit every backend passes: each op against the {@code reference} backend on random
 * inputs at awkward shapes and several batch sizes, then whole-model logits and a greedy continuation on
 * {@link TestModelPresets#tiny()}. A backend module adds one class:
 *
 * <pre>{@code
 * class CudaConformanceTest extends BackendConformanceKit {
 *     protected BackendProvider provider() { return new CudaBackendProvider(); }
 * }
 * }</pre>
 *
 * and depends on engine-core's test-jar ({@code <type>test-jar</type>}, scope test). When the provider
 * reports itself unavailable, every test is <em>skipped</em> with its reason (JUnit assumption), never
 * passed; or fails, where the run requires the backend ({@code GOSS_REQUIRE_<NAME>=1}, {@link RequiredBackends}).
 *
 * <p>Comparisons are relative to each output row's scale: {@code |x − ref| ≤ tol · max_c |ref[row, c]|}
 * (see {@link #opTolerance()} and {@link #modelTolerance()} for the numbers and why).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class BackendConformanceKit {
    /** The backend under test. */
    protected abstract BackendProvider provider();

    /**
     * The knobs the backend under test is created with (default: none set, every knob at its default). Kits that
     * rerun a backend down other kernel paths override this.
     */
    protected BackendOptions options() {
        return BackendOptions.defaults();
    }

    /** Every knob {@link #options()} sets is in effect: {@code inEffect}, the backend's knobs by name, holds it. */
    protected void assertOptionsInEffect(Map<String, Integer> inEffect) {
        options().asMap().forEach((name, value) -> assertEquals(Integer.parseInt(value), inEffect.get(name), name));
    }

    /**
     * Per-op tolerance, relative to the row's largest |value|. Default 1e-4: float32 has a unit roundoff
     * of 6e-8; a dot product of n terms summed in float in any order is off by at most about n·6e-8 of
     * the sum of |terms| (n ≤ 288 in these shapes → 2e-5), and fast exp/rsqrt/sin/cos intrinsics add a few
     * ulps. 1e-4 leaves a 10× margin while any formula error (wrong pairing, mask, head mapping, clamp)
     * is O(1) of the scale. A backend storing activations in bf16/f16 must override this (bf16: ~1e-2).
     */
    protected double opTolerance() {
        return 1e-4;
    }

    /** True where the backend must run ADD_RMS_NORM itself rather than decline it: every GPU backend's kit says so. */
    protected boolean requiresFusedAddRmsNorm() {
        return false;
    }

    /**
     * Whole-model tolerance for logits, relative to the row's largest |logit|. Default 1e-3: per-op
     * differences of 1e-5..1e-4 compound through 3 layers of ~10 ops and the routing softmax; measured
     * drift of the float32 reference against a double-precision oracle is 6e-7 (ReferenceBackendTest), and an
     * error in any formula moves logits by O(1).
     */
    protected double modelTolerance() {
        return 1e-3;
    }

    /**
     * For a backend whose logits are not exact to float rounding (the cpu backend's int8 kernels), where
     * {@link #modelTolerance()} must allow the worst row: the bound on the whole model's RMS logit error relative to
     * the reference logits' RMS, or 0 (default) to check only {@link #modelTolerance()}.
     */
    protected double modelRmsBudget() {
        return 0;
    }

    /** With {@link #modelRmsBudget()}: the least share of positions whose argmax is the reference's. */
    protected double modelTop1Budget() {
        return 1;
    }

    /**
     * Per-op tolerance of {@link Backend#moe} (the kit's models keep only the experts quantized, MXFP4; dense
     * weights are BF16): {@link #opTolerance()} unless a backend quantizes the inputs of quantized matrices (the cpu
     * backend's int8 kernels), which then affects this op alone.
     */
    protected double moeTolerance() {
        return opTolerance();
    }

    /**
     * Per-op tolerance of the ops that multiply by a layer's dense matrices ({@link Backend#dense}, {@link Backend#qkvRope},
     * {@link Backend#logits}): {@link #opTolerance()} unless a backend quantizes their inputs too (the cpu backend's
     * int8 kernels with dense weights quantized at load).
     */
    protected double denseTolerance() {
        return opTolerance();
    }

    /**
     * The weights the reference backend runs for a model whose weights are {@code w} on the backend under test (default:
     * the same). A backend that quantizes weights at load gives the reference their quantized values, so that the
     * comparison budgets what it computes with them and not the choice of quantizing.
     */
    protected ModelWeights referenceWeights(ModelWeights w) {
        return w;
    }

    /** Batch sizes every op is tried at: decode (1), a small prefill (3) and one longer than every shape's window (17). */
    static Stream<Integer> batchSizes() {
        return Stream.of(1, 3, 17);
    }

    /**
     * Shapes: {@code tiny} (hidden 96, 16 heads over 2 KV heads of 16, 6 experts top-4, window 5) and
     * {@code odd} (hidden 64, 6 heads over 3 KV heads of dim 10, 5 experts top-3, intermediate 96,
     * vocab 77, window 3): nothing a power of two that need not be; and {@code wide} (head_dim 64 as in
     * the real model, 8 heads over 2 KV heads, hidden 288, intermediate 224, 4 experts top-2, window 7)
     * for kernels specialised to the real head size.
     */
    public static ModelConfig odd() {
        return new ModelConfig(2, 5, 3, 77, 64, 96, 7.0f, 10, 6, 3, 3, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    public static ModelConfig wide() {
        return new ModelConfig(2, 4, 2, 300, 288, 224, 7.0f, 64, 8, 2, 7, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    static Stream<Arguments> shapesAndBatches() {
        return Stream.of("tiny", "odd", "wide").flatMap(s -> batchSizes().map(t -> Arguments.of(s, t)));
    }

    protected Backend backend;
    protected Backend reference;
    private final List<Checkpoint> checkpoints = new ArrayList<>();
    private Model tiny, odd, wide;

    /** One test model loaded on both backends. */
    protected record Model(ModelConfig config, ModelWeights weights, LoadedWeights mine, LoadedWeights ref) {}

    /**
     * Skips (never passes) everything when the provider says its device is absent, or fails where the run requires
     * the backend ({@link RequiredBackends}).
     */
    public static void requireAvailable(BackendProvider p) {
        RequiredBackends.requireAvailable(p);
    }

    private Availability availability;

    @BeforeAll
    void setUpBackends() {
        availability = Backends.safeAvailability(provider());
        if (!availability.available()) return; // every test is then skipped by skipWhenUnavailable
        backend = provider().create(options());
        reference = new ReferenceBackend();
        tiny = load(TestModelPresets.tiny(), 21);
        odd = load(odd(), 22);
        wide = load(wide(), 23);
    }

    private Model load(ModelConfig c, long seed) {
        Checkpoint ck = new TestModelGenerator(c, seed).inMemory();
        checkpoints.add(ck);
        ModelWeights w = ModelWeights.of(ck);
        return new Model(c, w, backend.loadWeights(w), reference.loadWeights(referenceWeights(w)));
    }

    /**
     * Per test rather than per class so that surefire lists every test as skipped with the reason (an
     * aborted {@code @BeforeAll} shows up as "Tests run: 0", which reads like a pass).
     */
    @BeforeEach
    void skipWhenUnavailable() {
        RequiredBackends.requireAvailable(provider().name(), availability);
    }

    @AfterAll
    void tearDown() {
        for (Model m : new Model[] {tiny, odd, wide})
            if (m != null) {
                m.mine().close();
                m.ref().close();
            }
        if (backend != null) backend.close();
        if (reference != null) reference.close();
        checkpoints.forEach(Checkpoint::close);
    }

    protected Model model(String shape) {
        return switch (shape) {
            case "tiny" -> tiny;
            case "odd" -> odd;
            case "wide" -> wide;
            default -> throw new IllegalArgumentException(shape);
        };
    }

    // ---- helpers --------------------------------------------------------------------------------

    static float[] random(SplittableRandom r, int n, double std) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) f[i] = (float) (r.nextGaussian() * std);
        return f;
    }

    /** A tensor on each backend with the same contents. */
    protected record Pair(DeviceTensor mine, DeviceTensor ref) implements AutoCloseable {
        @Override
        public void close() {
            mine.close();
            ref.close();
        }
    }

    protected Pair pair(int rows, int cols, float[] values) {
        DeviceTensor a = backend.allocate(rows, cols), b = reference.allocate(rows, cols);
        if (values != null) {
            backend.write(a, values);
            reference.write(b, values);
        }
        return new Pair(a, b);
    }

    /**
     * {RMS of (got − ref) / RMS of ref, share of the rows whose argmax agrees (ties to the lower index), largest
     * |got − ref| / max|ref row|}.
     */
    public static double[] rmsErrorAndTop1(float[] ref, float[] got, int rows, int cols) {
        double se = 0, sr = 0, worst = 0;
        int agree = 0;
        for (int i = 0; i < rows; i++) {
            int a = i * cols, b = i * cols;
            double scale = 1e-30, diff = 0;
            for (int x = i * cols; x < (i + 1) * cols; x++) {
                scale = Math.max(scale, Math.abs(ref[x]));
                diff = Math.max(diff, Math.abs((double) ref[x] - got[x]));
            }
            worst = Math.max(worst, diff / scale);
            for (int x = i * cols; x < (i + 1) * cols; x++) {
                double d = (double) ref[x] - got[x];
                se += d * d;
                sr += (double) ref[x] * ref[x];
                if (ref[x] > ref[a]) a = x;
                if (got[x] > got[b]) b = x;
            }
            if (a == b) agree++;
        }
        return new double[] {Math.sqrt(se / Math.max(sr, 1e-300)), (double) agree / rows, worst};
    }

    /** {@link #modelTolerance()} for every logit, and, where set, {@link #modelRmsBudget()} and {@link #modelTop1Budget()}. */
    private void assertWholeModel(String what, float[] ref, float[] got, int rows, int cols) {
        assertClose(what, ref, got, rows, cols, modelTolerance());
        if (modelRmsBudget() <= 0) return;
        double[] m = rmsErrorAndTop1(ref, got, rows, cols);
        assertTrue(
                m[0] <= modelRmsBudget(),
                what + ": RMS logit error " + m[0] + " of the reference logits' RMS > budget " + modelRmsBudget());
        assertTrue(m[1] >= modelTop1Budget(), what + ": top-1 agreement " + m[1] + " < budget " + modelTop1Budget());
    }

    /** Asserts {@code got} ≈ {@code ref} row by row: |got − ref| ≤ tol · max|ref row| (floor 1e-30). */
    public static void assertClose(String what, float[] ref, float[] got, int rows, int cols, double tol) {
        assertEquals(ref.length, got.length, what + ": length");
        for (int i = 0; i < rows; i++) {
            double scale = 1e-30;
            for (int c = 0; c < cols; c++) scale = Math.max(scale, Math.abs(ref[i * cols + c]));
            for (int c = 0; c < cols; c++) {
                float e = ref[i * cols + c], g = got[i * cols + c];
                if (!(Math.abs(e - g) <= tol * scale))
                    fail(what + ": row " + i + " col " + c + ": reference " + e + ", backend " + g + " (|diff| "
                            + Math.abs(e - g) + " > " + tol + " × row scale " + scale + ")");
            }
        }
    }

    private void compare(String what, Pair p, double tol) {
        assertClose(
                what,
                reference.read(p.ref()),
                backend.read(p.mine()),
                p.ref().rows(),
                p.ref().cols(),
                tol);
    }

    // ---- per-op tests -------------------------------------------------------------------------

    @Test
    void reportsItsName() {
        assertEquals(provider().name(), backend.name());
    }

    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void embed(String shape, int T) {
        Model m = model(shape);
        SplittableRandom r = new SplittableRandom(T);
        int[] toks = new int[T];
        for (int i = 0; i < T; i++)
            toks[i] = i == 0 ? m.config().vocabSize() - 1 : r.nextInt(m.config().vocabSize());
        try (Pair out = pair(T, m.config().hiddenSize(), null)) {
            backend.embed(m.mine(), toks, out.mine());
            reference.embed(m.ref(), toks, out.ref());
            compare("embed", out, 0); // a lookup: exact
        }
    }

    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void rmsNorm(String shape, int T) {
        Model m = model(shape);
        int h = m.config().hiddenSize();
        float[] x = random(new SplittableRandom(100 + T), T * h, 3.0);
        for (NormKind kind : NormKind.values())
            for (int layer = 0; layer < (kind == NormKind.FINAL ? 1 : m.config().numHiddenLayers()); layer++)
                try (Pair in = pair(T, h, x);
                        Pair out = pair(T, h, null)) {
                    backend.rmsNorm(m.mine(), layer, kind, in.mine(), out.mine());
                    reference.rmsNorm(m.ref(), layer, kind, in.ref(), out.ref());
                    compare("rmsNorm " + kind + " layer " + layer, out, opTolerance());
                }
    }

    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void dense(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        for (DenseKind kind : DenseKind.values()) {
            float[] x = random(new SplittableRandom(200 + T + kind.ordinal()), T * kind.cols(c), 1.0);
            for (int layer = 0; layer < c.numHiddenLayers(); layer++)
                try (Pair in = pair(T, kind.cols(c), x);
                        Pair out = pair(T, kind.rows(c), null)) {
                    backend.dense(m.mine(), layer, kind, in.mine(), out.mine());
                    reference.dense(m.ref(), layer, kind, in.ref(), out.ref());
                    compare("dense " + kind + " layer " + layer, out, denseTolerance());
                }
        }
    }

    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void qkvRope(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        float[] x = random(new SplittableRandom(300 + T), T * c.hiddenSize(), 1.0);
        // 3001: large angles. Compute p·invFreq in double (or upload cos/sin tables from io.gossgpu.backend.Rope):
        // a float32 angle is off by ~p·6e-8 rad = 2e-4 here, over this tolerance, and worse at long contexts.
        try (KvCache mine = backend.createKvCache(new KvCacheSpec(c, 3001 + T));
                KvCache ref = reference.createKvCache(new KvCacheSpec(c, 3001 + T))) {
            for (int start : new int[] {0, 5, 3001})
                try (Pair in = pair(T, c.hiddenSize(), x);
                        Pair q = pair(T, c.qDim(), null);
                        Pair k = pair(T, c.kvDim(), null);
                        Pair v = pair(T, c.kvDim(), null)) {
                    backend.qkvRope(m.mine(), 0, in.mine(), Batch.of(mine, start, T), q.mine(), k.mine(), v.mine());
                    reference.qkvRope(m.ref(), 0, in.ref(), Batch.of(ref, start, T), q.ref(), k.ref(), v.ref());
                    compare("qkvRope q at " + start, q, denseTolerance());
                    compare("qkvRope k at " + start, k, denseTolerance());
                    compare("qkvRope v at " + start, v, denseTolerance());
                }
        }
    }

    /** One batch of three sequences at positions 3001.., 0.. and 5: each row rotated by its own position. */
    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void qkvRopeOfSeveralSequences(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        int rows = T + 2 + 1;
        float[] x = random(new SplittableRandom(350 + T), rows * c.hiddenSize(), 1.0);
        KvCacheSpec spec = new KvCacheSpec(c, 3001 + T);
        try (Caches a = caches(spec);
                Caches b = caches(spec);
                Caches d = caches(spec);
                Pair in = pair(rows, c.hiddenSize(), x);
                Pair q = pair(rows, c.qDim(), null);
                Pair k = pair(rows, c.kvDim(), null);
                Pair v = pair(rows, c.kvDim(), null)) {
            backend.qkvRope(
                    m.mine(),
                    0,
                    in.mine(),
                    Batch.of(
                            new Batch.Sequence(a.mine(), 3001, T),
                            new Batch.Sequence(b.mine(), 0, 2),
                            new Batch.Sequence(d.mine(), 5, 1)),
                    q.mine(),
                    k.mine(),
                    v.mine());
            reference.qkvRope(
                    m.ref(),
                    0,
                    in.ref(),
                    Batch.of(
                            new Batch.Sequence(a.ref(), 3001, T),
                            new Batch.Sequence(b.ref(), 0, 2),
                            new Batch.Sequence(d.ref(), 5, 1)),
                    q.ref(),
                    k.ref(),
                    v.ref());
            compare("qkvRope q of three sequences", q, denseTolerance());
            compare("qkvRope k of three sequences", k, denseTolerance());
            compare("qkvRope v of three sequences", v, denseTolerance());
        }
    }

    /** One cache on each backend. */
    protected record Caches(KvCache mine, KvCache ref) implements AutoCloseable {
        @Override
        public void close() {
            mine.close();
            ref.close();
        }
    }

    protected Caches caches(KvCacheSpec spec) {
        KvCache a = backend.createKvCache(spec);
        try {
            return new Caches(a, reference.createKvCache(spec));
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
    }

    /**
     * Attention in three calls on one cache: a first batch of 7 positions, then T positions at 7.., then
     * one decode step: the later calls read what the earlier ones stored (ring buffer on sliding layers).
     */
    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void attention(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        SplittableRandom r = new SplittableRandom(400 + T);
        for (int layer = 0; layer < 2; layer++) { // 0 slides, 1 does not
            try (Caches one = caches(new KvCacheSpec(c, 7 + T + 1 + 3))) {
                int start = 0;
                for (int n : new int[] {7, T, 1}) {
                    attend(m, layer, r, new Caches[] {one}, new int[] {start}, new int[] {n});
                    start += n;
                }
            }
        }
    }

    /**
     * Attention of three sequences in one call, each over its own cache: one that already holds 9 positions (a window's
     * worth and more, so its ring has wrapped on the sliding layer) takes T more, one at position 4 takes one token, a
     * new one takes 3. Then a decode step of all three. Every sequence sees only its own cache and rows.
     */
    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void attentionOfSeveralSequences(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        SplittableRandom r = new SplittableRandom(450 + T);
        for (int layer = 0; layer < 2; layer++) {
            KvCacheSpec spec = new KvCacheSpec(c, 9 + T + 1 + 3);
            try (Caches a = caches(spec);
                    Caches b = caches(spec);
                    Caches d = caches(spec)) {
                attend(m, layer, r, new Caches[] {a, b}, new int[] {0, 0}, new int[] {9, 4}); // histories, as one batch
                attend(m, layer, r, new Caches[] {a, b, d}, new int[] {9, 4, 0}, new int[] {T, 1, 3});
                attend(m, layer, r, new Caches[] {d, a, b}, new int[] {3, 9 + T, 5}, new int[] {1, 1, 1});
            }
        }
    }

    /** The KV cache types besides F32, each tried at decode and at a batch longer than every window. */
    static Stream<Arguments> shapesBatchesAndKvTypes() {
        return Stream.of("tiny", "odd")
                .flatMap(s -> Stream.of(1, 17)
                        .flatMap(t ->
                                Stream.of(KvType.F16, KvType.BF16, KvType.Q8_0).map(k -> Arguments.of(s, t, k))));
    }

    /**
     * {@link #attention} over a cache of another type: both backends round the same inputs by the same formulas
     * ({@link KvType#round}), so the op is held to {@link #opTolerance()} as in F32; a backend that stores the wrong
     * type, forgets to round the batch's own rows or reads a block's scale from the wrong place is off by O(1e-3..1e-2).
     */
    @ParameterizedTest(name = "{0}, T={1}, {2}")
    @MethodSource("shapesBatchesAndKvTypes")
    void attentionWithKvType(String shape, int T, KvType type) {
        Model m = model(shape);
        ModelConfig c = m.config();
        SplittableRandom r = new SplittableRandom(470 + T + type.ordinal());
        for (int layer = 0; layer < 2; layer++) { // 0 slides, 1 does not
            try (Caches one = caches(new KvCacheSpec(c, 7 + T + 1 + 3, 0, type))) {
                int start = 0;
                for (int n : new int[] {7, T, 1}) {
                    attend(m, layer, r, new Caches[] {one}, new int[] {start}, new int[] {n});
                    start += n;
                }
            }
        }
    }

    /** {@link #attentionOfSeveralSequences} over caches of another type: each sequence's own cache, wrapped rings. */
    @ParameterizedTest(name = "{0}, T={1}, {2}")
    @MethodSource("shapesBatchesAndKvTypes")
    void attentionOfSeveralSequencesWithKvType(String shape, int T, KvType type) {
        Model m = model(shape);
        ModelConfig c = m.config();
        SplittableRandom r = new SplittableRandom(480 + T + type.ordinal());
        for (int layer = 0; layer < 2; layer++) {
            KvCacheSpec spec = new KvCacheSpec(c, 9 + T + 1 + 3, 0, type);
            try (Caches a = caches(spec);
                    Caches b = caches(spec);
                    Caches d = caches(spec)) {
                attend(m, layer, r, new Caches[] {a, b}, new int[] {0, 0}, new int[] {9, 4});
                attend(m, layer, r, new Caches[] {a, b, d}, new int[] {9, 4, 0}, new int[] {T, 1, 3});
                attend(m, layer, r, new Caches[] {d, a, b}, new int[] {3, 9 + T, 5}, new int[] {1, 1, 1});
            }
        }
    }

    /** One attention call of the sequences ({@code caches[i]}, {@code starts[i]}, {@code tokens[i]}) on both backends, compared. */
    private void attend(Model m, int layer, SplittableRandom r, Caches[] caches, int[] starts, int[] tokens) {
        ModelConfig c = m.config();
        int n = Arrays.stream(tokens).sum();
        Batch.Sequence[] mine = new Batch.Sequence[caches.length], ref = new Batch.Sequence[caches.length];
        for (int i = 0; i < caches.length; i++) {
            mine[i] = new Batch.Sequence(caches[i].mine(), starts[i], tokens[i]);
            ref[i] = new Batch.Sequence(caches[i].ref(), starts[i], tokens[i]);
        }
        try (Pair q = pair(n, c.qDim(), random(r, n * c.qDim(), 2.0));
                Pair k = pair(n, c.kvDim(), random(r, n * c.kvDim(), 2.0));
                Pair v = pair(n, c.kvDim(), random(r, n * c.kvDim(), 1.0));
                Pair out = pair(n, c.qDim(), null)) {
            backend.attention(m.mine(), layer, q.mine(), k.mine(), v.mine(), Batch.of(mine), out.mine());
            reference.attention(m.ref(), layer, q.ref(), k.ref(), v.ref(), Batch.of(ref), out.ref());
            compare("attention layer " + layer + " of " + Batch.of(ref), out, opTolerance());
        }
    }

    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void routerAndMoe(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        int k = c.expertsPerToken();
        float[] x = random(new SplittableRandom(500 + T), T * c.hiddenSize(), 1.0);
        for (int layer = 0; layer < c.numHiddenLayers(); layer++)
            try (Pair in = pair(T, c.hiddenSize(), x);
                    Pair out = pair(T, c.hiddenSize(), null);
                    DeviceRouting rm = backend.allocateRouting(T, k);
                    DeviceRouting rr = reference.allocateRouting(T, k)) {
                backend.router(m.mine(), layer, in.mine(), rm);
                reference.router(m.ref(), layer, in.ref(), rr);
                Routing want = reference.readRouting(rr), got = backend.readRouting(rm);
                // Expert choice is discrete: the test models' router logits are spread wide (std 4×), so a
                // float32 difference cannot swap two experts unless they tie within ~1e-5.
                assertArrayEquals(want.experts(), got.experts(), "router experts, layer " + layer);
                assertClose("router weights, layer " + layer, want.weights(), got.weights(), T, k, opTolerance());
                // MoE from identical routing on both sides
                backend.writeRouting(rm, want);
                backend.moe(m.mine(), layer, in.mine(), rm, out.mine());
                reference.moe(m.ref(), layer, in.ref(), rr, out.ref());
                compare("moe layer " + layer, out, moeTolerance());
            }
    }

    @Test
    void moeAppliesTheSwigluClampsOnLargeInputs() {
        // inputs 30× larger than normal push gate/up pre-activations past ±7 so both clamps engage
        // (measured on layer 0: 40% of gate values above 7, 80% of up values outside ±7)
        Model m = model("tiny");
        ModelConfig c = m.config();
        int T = 3, k = c.expertsPerToken(), h = c.hiddenSize();
        float[] x = random(new SplittableRandom(77), T * h, 30.0);
        Routing want = OpRuns.routing(reference, m.ref(), 0, x, T, h, k);
        assertClose(
                "moe with clamped activations",
                OpRuns.moe(reference, m.ref(), 0, x, T, h, want),
                OpRuns.moe(backend, m.mine(), 0, x, T, h, want),
                T,
                h,
                moeTolerance());
    }

    /**
     * E8M0 scale byte 255 is NaN for every value of its block, zero codes included ({@link io.gossgpu.quant.Mxfp4#value}):
     * a kernel that scales a block's sum by 2^128 turns a zero sum into 0 and the rest into ±inf, so the block here has
     * only zero codes. Row 0 of every expert's down projection gets it: output column 0 is NaN for every token, the
     * other columns match the reference.
     */
    @Test
    void mxfp4ScaleByte255IsNaNForItsWholeBlock() {
        ModelConfig c = TestModelPresets.tiny();
        try (Checkpoint ck = new TestModelGenerator(c, 24).inMemory()) {
            int h = c.hiddenSize(), blocksPerRow = c.intermediateSize() / 32;
            MemorySegment scales = ck.tensor("block.0.mlp.mlp2_weight.scales").bytes(),
                    codes = ck.tensor("block.0.mlp.mlp2_weight.blocks").bytes();
            for (long e = 0; e < c.numExperts(); e++) {
                scales.set(io.gossgpu.quant.LE.U8, e * h * blocksPerRow, (byte) 255);
                codes.asSlice(e * h * blocksPerRow * 16, 16).fill((byte) 0);
            }
            int T = 3;
            float[][] wantGot = layer0Moe(ModelWeights.of(ck), T, 78);
            float[] want = wantGot[0], got = wantGot[1];
            for (int t = 0; t < T; t++) {
                assertTrue(Float.isNaN(want[t * h]), "reference row " + t + " col 0: " + want[t * h]);
                assertTrue(Float.isNaN(got[t * h]), "row " + t + " col 0: " + got[t * h] + ", expected NaN");
                want[t * h] = got[t * h] = 0;
            }
            assertClose("moe beside the NaN block", want, got, T, h, moeTolerance());
        }
    }

    /**
     * NaN or +∞ at one weight of the unembedding: the final hidden state stays finite, only the logit of that row
     * is not. Every decode mode stops with the guard's line naming LOGITS, as on the reference, and emits no token:
     * also greedy decoding and plain temperature sampling, whose logits stay on the device (the argmax and sampling
     * kernels report {@link io.gossgpu.backend.TemperatureDraw#NOT_FINITE} beside the id; before they did, a token
     * was chosen from the NaN row).
     */
    @ParameterizedTest(name = "bf16 {0}")
    @org.junit.jupiter.params.provider.ValueSource(shorts = {0x7fc0, 0x7f80})
    void nonFiniteUnembeddingStopsEveryDecodeMode(short bf16) {
        ModelConfig c = TestModelPresets.tiny();
        int row = c.vocabSize() - 3, col = 5;
        try (Checkpoint ck = new TestModelGenerator(c, 21).inMemory()) {
            ck.tensor("unembedding.weight")
                    .bytes()
                    .set(io.gossgpu.quant.LE.I16, 2L * ((long) row * c.hiddenSize() + col), bf16);
            ModelWeights w = ModelWeights.of(ck);
            int[] prompt = {1, 2, 3, 4, 5};
            String expected = "first appears in the output of LOGITS at position 4 (value " + row + ")";
            for (SamplerConfig sampler : new SamplerConfig[] {
                SamplerConfig.greedy(), SamplerConfig.of(1f, 7), new SamplerConfig(1f, 5, 0.9f, 0f, 7)
            })
                for (Backend b : new Backend[] {reference, backend})
                    try (LoadedWeights lw = b == reference ? b.loadWeights(referenceWeights(w)) : b.loadWeights(w);
                            Session s = new Session(b, lw, 64)) {
                        GossException e = assertThrows(
                                GossException.class,
                                () -> s.generate(prompt, new GenerationOptions(4, java.util.Set.of(), sampler), t -> {
                                    throw new AssertionError(b.name() + " " + sampler + ": token " + t + " emitted");
                                }));
                        assertTrue(
                                e.getMessage().contains(expected)
                                        && e.getMessage().contains("--check-tensors"),
                                b.name() + " " + sampler + ": " + e.getMessage());
                    }
        }
    }

    /** Layer 0's MoE of T random rows (seed) on the reference and on the backend, the backend given the reference's routing: {want, got}. */
    private float[][] layer0Moe(ModelWeights w, int T, long seed) {
        int h = w.config().hiddenSize(), k = w.config().expertsPerToken();
        float[] x = random(new SplittableRandom(seed), T * h, 1.0);
        try (LoadedWeights mine = backend.loadWeights(w);
                LoadedWeights ref = reference.loadWeights(w)) {
            Routing routing = OpRuns.routing(reference, ref, 0, x, T, h, k);
            return new float[][] {
                OpRuns.moe(reference, ref, 0, x, T, h, routing), OpRuns.moe(backend, mine, 0, x, T, h, routing)
            };
        }
    }

    /**
     * A NaN that reaches SwiGLU stays NaN, as in the reference (torch's clamp keeps NaN): every scale of gate row 0
     * (row 1: up row 0) of every expert is E8M0 byte 255, so unit 0's activation is NaN and, through the down
     * projection, every output of every token. A clamp written with fmin/fmax turns the NaN into the limit and the
     * reply goes on from finite garbage, past the non-finite guard. T = 1 takes the decode kernels, T = 6 the batched ones.
     */
    @ParameterizedTest(name = "row {0}, T={1}")
    @org.junit.jupiter.params.provider.CsvSource({"0, 1", "1, 1", "0, 6", "1, 6"})
    void nanBeforeSwigluStaysNaN(int row, int T) {
        ModelConfig c = TestModelPresets.tiny();
        try (Checkpoint ck = new TestModelGenerator(c, 25).inMemory()) {
            int h = c.hiddenSize(), blocksPerRow = h / 32;
            MemorySegment scales = ck.tensor("block.0.mlp.mlp1_weight.scales").bytes();
            for (long e = 0; e < c.numExperts(); e++)
                scales.asSlice((e * 2 * c.intermediateSize() + row) * blocksPerRow, blocksPerRow)
                        .fill((byte) 255);
            float[][] wantGot = layer0Moe(ModelWeights.of(ck), T, 79);
            for (int i = 0; i < T * h; i++) {
                assertTrue(Float.isNaN(wantGot[0][i]), "reference output " + i + ": " + wantGot[0][i]);
                assertTrue(
                        Float.isNaN(wantGot[1][i]),
                        "output " + i + " (token " + i / h + ") is " + wantGot[1][i] + ", the reference's NaN");
            }
        }
    }

    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void add(String shape, int T) {
        int h = model(shape).config().hiddenSize();
        SplittableRandom r = new SplittableRandom(600 + T);
        try (Pair a = pair(T, h, random(r, T * h, 1));
                Pair b = pair(T, h, random(r, T * h, 1))) {
            backend.add(a.mine(), b.mine(), a.mine()); // in place, as the executor uses it
            reference.add(a.ref(), b.ref(), a.ref());
            compare("add", a, 0); // one float addition: exact
        }
    }

    /**
     * The residual add fused with the norm after it, through {@link DeclinedOps} as the executor calls it (the backend's
     * own op, or add then rmsNorm where it declines it), against the reference's separate ops: the sum exact, the norm
     * within {@link #opTolerance()}. Three placements the contract allows: in place as the executor uses it (sum into x,
     * norm into t), sum into y and the norm over it, both into tensors of their own (NaN before: a value left unwritten
     * fails). Every GPU backend (the device layer) runs the fused op itself.
     */
    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void addRmsNorm(String shape, int T) {
        if (requiresFusedAddRmsNorm())
            assertTrue(
                    backend.supports(io.gossgpu.backend.BackendOp.ADD_RMS_NORM),
                    backend.name() + " declines ADD_RMS_NORM");
        Model m = model(shape);
        int h = m.config().hiddenSize();
        SplittableRandom r = new SplittableRandom(650 + T);
        float[] x = random(r, T * h, 2), y = random(r, T * h, 2), nan = new float[T * h];
        java.util.Arrays.fill(nan, Float.NaN);
        for (String place : new String[] {"sum into x", "sum into y, norm over it", "own tensors"})
            for (NormKind kind : NormKind.values()) {
                int layer = kind == NormKind.FINAL ? -1 : m.config().numHiddenLayers() - 1;
                try (Pair a = pair(T, h, x);
                        Pair b = pair(T, h, y);
                        Pair s = pair(T, h, nan);
                        Pair t = pair(T, h, nan)) {
                    Pair sum = place.startsWith("sum into x") ? a : place.startsWith("sum into y") ? b : s,
                            out = sum == b ? b : t;
                    DeclinedOps.addRmsNorm(backend, m.mine(), layer, kind, a.mine(), b.mine(), sum.mine(), out.mine());
                    reference.add(a.ref(), b.ref(), sum.ref());
                    reference.rmsNorm(m.ref(), layer, kind, sum.ref(), out.ref());
                    if (out != sum) compare("addRmsNorm sum " + kind + ", " + place, sum, 0);
                    compare("addRmsNorm norm " + kind + ", " + place, out, opTolerance());
                }
            }
    }

    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void logitsAndArgmax(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        try (Pair x = pair(T, c.hiddenSize(), random(new SplittableRandom(700 + T), T * c.hiddenSize(), 1.0))) {
            for (int from : new int[] {0, T - 1}) {
                float[] want = reference.logits(m.ref(), x.ref(), from);
                float[] got = backend.logits(m.mine(), x.mine(), from);
                assertClose("logits from row " + from, want, got, T - from, c.vocabSize(), denseTolerance());
                int[] wantIds = reference.argmax(m.ref(), x.ref(), from);
                int[] gotIds = backend.argmax(m.mine(), x.mine(), from);
                assertEquals(wantIds.length, gotIds.length);
                for (int i = 0; i < wantIds.length; i++) {
                    float a = want[i * c.vocabSize() + wantIds[i]], b = want[i * c.vocabSize() + gotIds[i]];
                    // a different id is only acceptable for a tie within tolerance
                    if (wantIds[i] != gotIds[i] && Math.abs(a - b) > denseTolerance() * Math.abs(a))
                        fail("argmax row " + i + ": reference " + wantIds[i] + " (" + a + "), backend " + gotIds[i]
                                + " (" + b + ")");
                }
            }
        }
    }

    /**
     * {@link Backend#sample} of the last row equals {@link io.gossgpu.backend.TemperatureDraw#draw} on the
     * same backend's logits, up to the rounding {@link SamplingCheck} bounds, for draws near 0, near 1, random
     * and exactly on cumulative boundaries.
     */
    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void sampleMatchesHostSamplingOfItsLogits(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        SplittableRandom r = new SplittableRandom(900 + T);
        try (Pair x = pair(T, c.hiddenSize(), random(r, T * c.hiddenSize(), 1.0))) {
            float[] logits = backend.logits(m.mine(), x.mine(), T - 1);
            for (double temperature : new double[] {0.3, 1, 2})
                for (double u : SamplingCheck.draws(logits, 0, logits.length, temperature, r, 8))
                    SamplingCheck.assertSameDraw(
                            shape + " T=" + T,
                            logits,
                            0,
                            logits.length,
                            temperature,
                            u,
                            backend.sample(m.mine(), x.mine(), T - 1, new double[] {temperature}, new double[] {u})[0]);
        }
    }

    /**
     * {@link Backend#sample} of every row at once, rows taking turns between argmax (temperature 0) and draws at
     * different temperatures: each row's id is its own argmax or its own draw, as if it were sampled alone.
     */
    @ParameterizedTest(name = "{0}, T={1}")
    @MethodSource("shapesAndBatches")
    void sampleOfSeveralRowsPicksEachRowAlone(String shape, int T) {
        Model m = model(shape);
        ModelConfig c = m.config();
        int vocab = c.vocabSize();
        SplittableRandom r = new SplittableRandom(950 + T);
        try (Pair x = pair(T, c.hiddenSize(), random(r, T * c.hiddenSize(), 1.0))) {
            float[] logits = backend.logits(m.mine(), x.mine(), 0);
            int[] argmax = backend.argmax(m.mine(), x.mine(), 0);
            double[] temperatures = new double[T], draws = new double[T];
            for (int i = 0; i < T; i++) {
                temperatures[i] = i % 3 == 0 ? 0 : i % 3 == 1 ? 0.7 : 1.5;
                draws[i] = r.nextDouble();
            }
            int[] got = backend.sample(m.mine(), x.mine(), 0, temperatures, draws);
            for (int i = 0; i < T; i++)
                if (temperatures[i] == 0) assertEquals(argmax[i], got[i], "row " + i + ": the argmax");
                else
                    SamplingCheck.assertSameDraw(
                            shape + " T=" + T + " row " + i,
                            logits,
                            i * vocab,
                            vocab,
                            temperatures[i],
                            draws[i],
                            got[i]);
        }
    }

    @Test
    void oversizedKvCacheIsAGossExceptionNotACrash() {
        // 2^30 positions of the full-attention layer: 256 GiB, more than any device here
        KvCacheSpec spec = new KvCacheSpec(model("tiny").config(), 1 << 30);
        assertThrows(GossException.class, () -> backend.createKvCache(spec).close());
    }

    /**
     * Closing the engine while a reply is generating, in the middle of a step (its KV cache and weights in
     * use), ends the reply cancelled, waits for that step, and only then frees the backend's memory; the reply's
     * thread and the closing thread both return normally, and the closed engine and completion say so in a
     * {@link GossException}. Before the fix close freed the memory under the running step: a SIGSEGV in the cpu
     * backend's native kernels, "Already closed" on the reference backend, a failing clCreateBuffer on OpenCL.
     */
    @Test
    void closingTheEngineMidStepEndsTheReplyCancelledAfterTheStep(@TempDir Path dir) throws Exception {
        Path folder = SafetensorsWriter.writeTinyOriginal(dir, 21);
        int maxTokens = 64, heldStep = 3; // prefill, two decode steps, then the held one: the reply is under way
        StepHoldingBackend holding = new StepHoldingBackend(provider().create(options()), heldStep);
        Engine engine = Engine.open(EngineOptions.of(folder), () -> holding);
        Completion completion = engine.newCompletion(ChatOptions.defaults()
                .withContextLength(128)
                .withMaxTokens(maxTokens)
                .withSampling(Sampling.greedy()));
        CompletableFuture<Reply> reply = new CompletableFuture<>();
        Thread replying = new Thread(
                () -> {
                    try {
                        reply.complete(completion.complete("a b c", null));
                    } catch (Throwable t) {
                        reply.completeExceptionally(t);
                    }
                },
                "replying");
        replying.start();
        assertTrue(holding.reached.await(5, TimeUnit.MINUTES), "the reply reached step " + heldStep);

        AtomicReference<Throwable> closeFailed = new AtomicReference<>();
        Thread closing = new Thread(
                () -> {
                    try {
                        engine.close();
                    } catch (Throwable t) {
                        closeFailed.set(t);
                    }
                },
                "closing");
        holding.closer = closing;
        closing.start();
        closing.join(TimeUnit.MINUTES.toMillis(5));
        assertFalse(closing.isAlive(), "close returned");
        assertNull(closeFailed.get(), "close threw");

        Reply r = reply.get(5, TimeUnit.MINUTES);
        assertEquals(io.gossgpu.api.StopReason.CANCELLED, r.stopReason());
        assertTrue(
                r.tokens().length >= heldStep && r.tokens().length < maxTokens,
                r.tokens().length + " tokens: the reply was cut mid-way");
        assertTrue(holding.closed, "close closed the backend");
        assertFalse(holding.closedDuringStep, "the backend was closed while the held step was under way");

        GossException again = assertThrows(GossException.class, () -> completion.complete("a", null));
        assertTrue(again.getMessage().contains("closed"), again.getMessage());
        GossException fresh = assertThrows(GossException.class, () -> engine.newCompletion(ChatOptions.defaults()));
        assertTrue(fresh.getMessage().contains("closed"), fresh.getMessage());
        // what the engine describes of itself still reads, without touching freed memory
        assertTrue(engine.backendDescription().startsWith(provider().name()), engine.backendDescription());
        assertTrue(engine.stepStats().steps() >= heldStep, engine.stepStats().toString());
        engine.backendCounters();
        engine.close(); // twice is fine
    }

    // ---- whole model ------------------------------------------------------------------------------

    static int[] sequence(int n, int vocab, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = r.nextInt(vocab);
        return t;
    }

    /** Logits of all 26 positions of one prefill (crossing the tiny model's window of 5 five times). */
    @Test
    void wholeModelPrefillLogits() {
        Model m = model("tiny");
        int[] toks = sequence(26, m.config().vocabSize(), 5);
        float[] want, got;
        try (Session s = new Session(reference, m.ref(), 32)) {
            want = s.prefillAllLogits(toks);
        }
        try (Session s = new Session(backend, m.mine(), 32)) {
            got = s.prefillAllLogits(toks);
        }
        assertWholeModel("prefill logits", want, got, toks.length, m.config().vocabSize());
    }

    /** The same 26 positions as a prefill of 9 then 17 single decode steps (KV cache, ring buffer). */
    @Test
    void wholeModelDecodeLogits() {
        Model m = model("tiny");
        int v = m.config().vocabSize();
        int[] toks = sequence(26, v, 5);
        float[] want;
        try (Session s = new Session(reference, m.ref(), 32)) {
            want = s.prefillAllLogits(toks);
        }
        try (Session s = new Session(backend, m.mine(), 32)) {
            float[] got = new float[toks.length * v];
            System.arraycopy(s.prefillAllLogits(Arrays.copyOf(toks, 9)), 0, got, 0, 9 * v);
            assertClose(
                    "logits of the prefill",
                    Arrays.copyOf(want, 9 * v),
                    Arrays.copyOf(got, 9 * v),
                    9,
                    v,
                    modelTolerance());
            for (int i = 9; i < toks.length; i++) {
                System.arraycopy(s.decode(toks[i]), 0, got, i * v, v);
                assertClose(
                        "logits at position " + i,
                        Arrays.copyOfRange(want, i * v, (i + 1) * v),
                        Arrays.copyOfRange(got, i * v, (i + 1) * v),
                        1,
                        v,
                        modelTolerance());
            }
            assertWholeModel("prefill and decode logits", want, got, toks.length, v);
        }
    }

    /**
     * Whole-model logits of 26 positions with a cache of another type, three ways on the backend under test: one
     * prefill, a prefill of 9 then 17 decode steps, and the reference's prefill over the same type. The first two
     * must agree as closely as F32's do ({@link #modelTolerance()}): a batch attends to its own rows rounded, as
     * later steps read them from the cache. Against the reference the budget is {@link #kvModelTolerance}: the two
     * backends' keys differ by float rounding before the cache rounds them, and now and then that lands on the other
     * side of a rounding step.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = KvType.class,
            names = {"F16", "BF16", "Q8_0"})
    void wholeModelLogitsWithKvType(KvType type) {
        Model m = model("tiny");
        int v = m.config().vocabSize();
        int[] toks = sequence(26, v, 5);
        KvCacheSpec spec = new KvCacheSpec(m.config(), 32, 0, type);
        float[] want, prefill;
        try (Session s = new Session(reference, m.ref(), spec, 0)) {
            want = s.prefillAllLogits(toks);
        }
        try (Session s = new Session(backend, m.mine(), spec, 0)) {
            assertEquals(type, s.cacheSpec().type());
            prefill = s.prefillAllLogits(toks);
        }
        try (Session s = new Session(backend, m.mine(), spec, 0)) {
            float[] got = new float[toks.length * v];
            System.arraycopy(s.prefillAllLogits(Arrays.copyOf(toks, 9)), 0, got, 0, 9 * v);
            for (int i = 9; i < toks.length; i++) System.arraycopy(s.decode(toks[i]), 0, got, i * v, v);
            assertClose(
                    type + ": decode steps against the same backend's prefill",
                    prefill,
                    got,
                    toks.length,
                    v,
                    modelTolerance());
        }
        assertClose(
                type + ": prefill logits against the reference", want, prefill, toks.length, v, kvModelTolerance(type));
    }

    /**
     * The whole-model logit budget of {@link #wholeModelLogitsWithKvType}, relative to the row's largest |logit|: the
     * F32 budget plus what one rounding step of the type that falls the other way can move (measured on the cpu
     * backend and held at about twice that).
     */
    protected double kvModelTolerance(KvType type) {
        return switch (type) {
            case F32 -> modelTolerance();
            case F16 -> modelTolerance() + 2e-3;
            case BF16 -> modelTolerance() + 1e-2;
            case Q8_0 -> modelTolerance() + 1e-2;
        };
    }

    /**
     * A session with rollback slack 3 (sliding rings of window 5 + 3 = 8 slots, wrapped twice by 20 positions)
     * steps back 4 positions, the most it may ({@link KvCacheSpec#canResume}), and goes on with other tokens as a
     * batch and then as decode steps: the logits of a fresh reference session that ran only the kept tokens.
     */
    @Test
    void wholeModelLogitsAfterARollback() {
        Model m = model("tiny");
        int v = m.config().vocabSize(), keep = 16;
        int[] first = sequence(20, v, 7), next = sequence(9, v, 8);
        int[] kept = Arrays.copyOf(first, keep + next.length);
        System.arraycopy(next, 0, kept, keep, next.length);
        float[] want;
        try (Session s = new Session(reference, m.ref(), 32)) {
            want = Arrays.copyOfRange(s.prefillAllLogits(kept), keep * v, kept.length * v);
        }
        try (Session s = new Session(backend, m.mine(), 32, 3, 0)) {
            assertEquals(8, s.cacheSpec().slots(0));
            s.prefill(first);
            assertTrue(s.rollbackTo(keep));
            float[] batch = s.prefillAllLogits(Arrays.copyOf(next, 5));
            assertClose(
                    "logits of the batch after the rollback",
                    Arrays.copyOf(want, 5 * v),
                    batch,
                    5,
                    v,
                    modelTolerance());
            for (int i = 5; i < next.length; i++)
                assertClose(
                        "logits at position " + (keep + i),
                        Arrays.copyOfRange(want, i * v, (i + 1) * v),
                        s.decode(next[i]),
                        1,
                        v,
                        modelTolerance());
        }
    }

    // ---- continuous batching: several sequences in one step ------------------------------------------

    /** Prompts of three sequences (11, 4 and 7 tokens), the steps at which they join, and the decode steps each runs. */
    private static final int[] JOIN = {0, 1, 2};

    private static final int DECODES = 12, CHUNK = 4;

    private int[][] prompts(int vocab) {
        return new int[][] {sequence(11, vocab, 31), sequence(4, vocab, 32), sequence(7, vocab, 33)};
    }

    /**
     * What one sequence got: the logits of every result row (its prompt's last, then each decode step's; empty when
     * they stayed on the device) and the tokens it chose.
     */
    private record Run(float[][] logits, int[] tokens) {}

    /**
     * Runs the three sequences of {@link #prompts} on {@link #backend}, alone one after another ({@code together} false:
     * each prompt as one batch, then its decode steps) or together: each joins at its step of {@link #JOIN}, its prompt
     * goes in chunks of {@link #CHUNK} beside the others' decode tokens, then all decode side by side. Each sequence
     * decodes {@link #DECODES} tokens chosen by {@code output} (logits: their argmax on the host; argmax; or a seeded
     * temperature draw on the device, alternating with argmax between the sequences).
     */
    private Run[] runSequences(Model m, boolean together, Executor.Output output) {
        ModelConfig c = m.config();
        int[][] prompts = prompts(c.vocabSize());
        int n = prompts.length;
        Run[] runs = new Run[n];
        KvCache[] caches = new KvCache[n];
        int[] pos = new int[n], outputs = new int[n];
        int[][] tokens = new int[n][DECODES + 1];
        float[][][] logits = new float[n][DECODES + 1][];
        try (Executor ex = new Executor(backend, m.mine())) {
            for (int i = 0; i < n; i++) caches[i] = backend.createKvCache(new KvCacheSpec(c, 40));
            for (int step = 0; ; step++) {
                List<Executor.Request> requests = new ArrayList<>();
                List<Integer> who = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    boolean started = together
                            ? step >= JOIN[i]
                            : Arrays.stream(outputs, 0, i).allMatch(o -> o == DECODES + 1);
                    if (!started || outputs[i] == DECODES + 1 || !together && !who.isEmpty()) continue;
                    int[] next;
                    boolean last = true;
                    if (pos[i] < prompts[i].length) {
                        int take = together ? Math.min(CHUNK, prompts[i].length - pos[i]) : prompts[i].length;
                        next = Arrays.copyOfRange(prompts[i], pos[i], pos[i] + take);
                        last = pos[i] + take == prompts[i].length;
                    } else {
                        next = new int[] {tokens[i][outputs[i] - 1]};
                    }
                    Executor.Output out = !last
                            ? Executor.Output.NONE
                            : output == Executor.Output.LAST_SAMPLE && i % 2 == 0
                                    ? Executor.Output.LAST_ARGMAX
                                    : output;
                    Executor.Sampling sampling = out == Executor.Output.LAST_SAMPLE
                            ? new Executor.Sampling(0.8, new SplittableRandom(1000L * i + outputs[i]).nextDouble())
                            : null;
                    requests.add(new Executor.Request(next, caches[i], pos[i], out, sampling));
                    who.add(i);
                }
                if (requests.isEmpty()) break;
                Executor.Result[] results = ex.step(requests);
                for (int j = 0; j < who.size(); j++) {
                    int i = who.get(j);
                    Executor.Request q = requests.get(j);
                    pos[i] += q.tokens().length;
                    if (q.output() == Executor.Output.NONE) continue;
                    Executor.Result r = results[j];
                    int token;
                    if (r.logits() != null) {
                        logits[i][outputs[i]] = r.logits();
                        token = io.gossgpu.backend.TemperatureDraw.argmax(r.logits(), 0, r.logits().length);
                    } else {
                        token = q.output() == Executor.Output.LAST_SAMPLE ? r.sampled() : r.argmax()[0];
                    }
                    tokens[i][outputs[i]++] = token;
                }
            }
        } finally {
            for (KvCache k : caches) if (k != null) k.close();
        }
        for (int i = 0; i < n; i++) runs[i] = new Run(logits[i], tokens[i]);
        return runs;
    }

    /**
     * Three sequences of different lengths and positions batched together (prompts in chunks beside decode tokens, then
     * decode steps of all three) give each one the greedy tokens it gets alone, token for token, and its logits within
     * {@link #modelTolerance()}.
     */
    @Test
    void sequencesBatchedTogetherMatchEachRunAlone() {
        assumeEmulatedGenerationsRunHere();
        Model m = model("tiny");
        int v = m.config().vocabSize();
        Run[] alone = runSequences(m, false, Executor.Output.LAST_LOGITS),
                together = runSequences(m, true, Executor.Output.LAST_LOGITS);
        for (int i = 0; i < alone.length; i++) {
            assertArrayEquals(alone[i].tokens(), together[i].tokens(), "greedy tokens of sequence " + i);
            for (int o = 0; o <= DECODES; o++)
                assertClose(
                        "logits of sequence " + i + ", result " + o,
                        alone[i].logits()[o],
                        together[i].logits()[o],
                        1,
                        v,
                        modelTolerance());
        }
        assertTrue(
                Arrays.stream(alone[0].tokens()).distinct().count() > 1,
                "a continuation of one repeated token proves little");
    }

    /** The same with the ids picked on the device: greedy (argmax of several rows at once), and draws beside argmax rows. */
    @Test
    void sequencesBatchedTogetherPickTheIdsTheyPickAlone() {
        assumeEmulatedGenerationsRunHere();
        Model m = model("tiny");
        for (Executor.Output out : new Executor.Output[] {Executor.Output.LAST_ARGMAX, Executor.Output.LAST_SAMPLE}) {
            Run[] alone = runSequences(m, false, out), together = runSequences(m, true, out);
            for (int i = 0; i < alone.length; i++)
                assertArrayEquals(alone[i].tokens(), together[i].tokens(), out + ": tokens of sequence " + i);
        }
    }

    /**
     * A 32-token greedy continuation of a 7-token prompt, equal token for token; or, for a backend whose arithmetic is
     * not exact to float rounding ({@link #greedyExact()} false), a continuation in which every token the backend
     * picked is, by the reference's logits after the same tokens, the reference's best or tied with it within
     * {@link #modelTolerance()} of the row's largest logit (one near tie would otherwise make the rest of the two
     * continuations unrelated).
     */
    @Test
    void greedyContinuationMatchesTokenForToken() {
        Model m = model("tiny");
        int v = m.config().vocabSize();
        int[] prompt = sequence(7, v, 6);
        int[] want, got;
        try (Session s = new Session(reference, m.ref(), 40)) {
            want = s.generate(prompt, GenerationOptions.greedy(32), null).tokens();
        }
        try (Session s = new Session(backend, m.mine(), 40)) {
            got = s.generate(prompt, GenerationOptions.greedy(32), null).tokens();
        }
        assertEquals(32, want.length);
        if (greedyExact()) {
            assertArrayEquals(want, got, "greedy continuation");
            return;
        }
        assertEquals(32, got.length);
        try (Session s = new Session(reference, m.ref(), 40)) {
            float[] logits = s.prefill(prompt);
            for (int i = 0; i < got.length; i++) {
                int best = 0;
                double scale = 0;
                for (int x = 0; x < v; x++) {
                    if (logits[x] > logits[best]) best = x;
                    scale = Math.max(scale, Math.abs(logits[x]));
                }
                if (logits[best] - logits[got[i]] > modelTolerance() * scale)
                    fail("greedy token " + i + ": the backend picked " + got[i] + " (reference logit " + logits[got[i]]
                            + "), the reference " + best + " (" + logits[best] + ")");
                if (i < got.length - 1) logits = s.decode(got[i]);
            }
        }
    }

    /**
     * Whether greedy decoding must pick the reference's tokens exactly (default): true for arithmetic exact to float
     * rounding, where a flip needs a tie within a few ulps.
     */
    protected boolean greedyExact() {
        return true;
    }

    /**
     * A seeded 40-token temperature generation (the backend samples: one int per step) equals, token for token,
     * the same backend's logits sampled on the host by {@link io.gossgpu.generate.Sampler} with the same seed.
     */
    @Test
    void sampledGenerationMatchesHostSamplingOfTheSameLogits() {
        assumeEmulatedGenerationsRunHere();
        Model m = model("tiny");
        int[] prompt = sequence(7, m.config().vocabSize(), 8);
        for (float temperature : new float[] {0.7f, 1f}) {
            SamplerConfig sc = SamplerConfig.of(temperature, 1234);
            int[] got, want = new int[40];
            try (Session s = new Session(backend, m.mine(), 64)) {
                got = s.generate(prompt, new GenerationOptions(40, java.util.Set.of(), sc), null)
                        .tokens();
            }
            io.gossgpu.generate.Sampler host = new io.gossgpu.generate.Sampler(sc);
            try (Session s = new Session(backend, m.mine(), 64)) {
                float[] logits = s.prefill(prompt);
                for (int i = 0; i < 40; i++) {
                    want[i] = host.sample(logits);
                    if (i < 39) logits = s.decode(want[i]);
                }
            }
            assertArrayEquals(want, got, "sampled continuation at temperature " + temperature);
            assertTrue(
                    Arrays.stream(got).distinct().count() > 1,
                    "a sampled continuation of one repeated token proves little");
        }
    }

    /**
     * The shipped demo model (trained, the real vocabulary, head_dim 64, window 64, YaRN) answers held-out
     * questions with the same tokens as the reference backend, tool calls and the answers after tool results included:
     * the first N of each task family ({@code -Dgoss.demo.perFamily=N}, default 1). Prints how many of them this backend answered
     * correctly per family; with 10 or more per family ({@code -Dgoss.demo.perFamily=20}: every held-out item) it also
     * asserts the share that DemoModelAccuracyTest asserts on the cpu backend ({@link HeldOut#GOAL}).
     * On an emulated device ({@link #onEmulatedDevice()}) it compares a prefix only, see {@link #EMULATED_DEMO_TOKENS}.
     */
    @Test
    void demoModelAnswersHeldOutQuestionsAsTheReferenceDoes() {
        Assumptions.assumeFalse(
                provider().name().equals("reference"), "the reference backend is what the others are compared with");
        Integer asked = Integer.getInteger("goss.demo.perFamily");
        boolean prefixOnly = onEmulatedDevice() && asked == null;
        Assumptions.assumeTrue(
                !prefixOnly || runsEmulatedDemo(),
                "on an emulated device the demo model's prefix runs once per device, "
                        + "in the kit with the default knobs: each decoded token takes seconds there (-Dgoss.demo.perFamily=N runs it here too)");
        int perFamily = asked == null ? 1 : asked,
                maxTokens = prefixOnly ? EMULATED_DEMO_TOKENS : DemoModels.MAX_TOKENS;
        List<HeldOut.Item> items = prefixOnly
                ? HeldOut.firstOfEachFamily(1).stream()
                        .filter(it -> it.family().equals("add"))
                        .toList()
                : HeldOut.firstOfEachFamily(perFamily);
        List<HeldOut.Outcome> outcomes = new ArrayList<>();
        try (Engine mine = Engine.open(
                        EngineOptions.of(DemoModels.folder()), () -> provider().create(options()));
                Chat chat = mine.newChat(ChatOptions.defaults())) {
            for (HeldOut.Item it : items) {
                HeldOut.Outcome want = DemoModels.onReference(it, maxTokens);
                HeldOut.Outcome got = HeldOut.answer(chat, it, maxTokens);
                assertArrayEquals(
                        want.tokens(),
                        got.tokens(),
                        () -> it.family() + ": reference wrote " + want.transcript() + "\n"
                                + provider().name() + " wrote " + got.transcript());
                outcomes.add(got);
            }
        }
        if (prefixOnly) {
            System.out.println(
                    "demo model, " + provider().name() + " backend on an emulated device: the first " + maxTokens
                            + " tokens of the first held-out add item are the reference's (-Dgoss.demo.perFamily=N runs whole replies)");
            return;
        }
        String table = HeldOut.table(outcomes);
        System.out.print("demo model, " + provider().name() + " backend, held-out items answered correctly (the first "
                + perFamily + " of each family, the same tokens as the reference):\n" + table);
        if (perFamily >= 10) {
            HeldOut.byFamily(outcomes.stream().map(HeldOut.Outcome::item).toList())
                    .forEach((family, inFamily) -> {
                        long right = outcomes.stream()
                                .filter(o -> o.item().family().equals(family) && o.correct())
                                .count();
                        assertTrue(
                                HeldOut.meets(right, inFamily.size(), HeldOut.GOAL),
                                family + ": " + right + "/" + inFamily.size() + " right on "
                                        + provider().name() + "\n" + table);
                    });
        }
    }

    /**
     * Tokens of the demo model's reply compared on an emulated device. There every decoded token runs the 201088-row
     * unembedding on the CPU emulator: whole replies took 100 s per item on emulated Metal and over 10 minutes on
     * emulated CUDA with shuffled threads, most of CI's time. A prefix still runs the trained weights and their real
     * routing through prefill (the whole prompt) and decode; the conversation logic after it is the same code on
     * every backend and is checked whole on the cpu and OpenCL kits.
     */
    protected static final int EMULATED_DEMO_TOKENS = 8;

    /** False in the knob-variant kits of an emulated device, where the demo model's prefix would only repeat the default kit's at minutes' cost. */
    protected boolean runsEmulatedDemo() {
        return true;
    }

    /**
     * False in the split suite's placements but one ({@link SplitConformanceSuite}): on an emulated device the batching
     * and sampling generations (the sequencesBatchedTogether and sampledGeneration tests) run in one placement only.
     * What they check, batching sequences and sampling on the device, is the GPU backend's, which the plain kit runs on
     * the same device, and a split model's batched steps have their own test; in all four placements they took about
     * 2 of the 10 minutes of CI's emulated CUDA stage.
     */
    protected boolean runsEmulatedGenerations() {
        return true;
    }

    private void assumeEmulatedGenerationsRunHere() {
        Assumptions.assumeTrue(
                !onEmulatedDevice() || runsEmulatedGenerations(),
                "on an emulated device the split suite runs "
                        + "the batching and sampling generations in one placement (EveryOtherLayerOnCpu); the plain kit runs them too");
    }

    /** True where this kit's device is a CPU emulation of a GPU (emulated Metal, CUDA behind the fake driver). */
    protected boolean onEmulatedDevice() {
        return false;
    }
}
