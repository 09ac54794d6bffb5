package io.gossgpu.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Typed KV caches (F16, BF16, Q8_0; F32 alongside) on OpenCL against the reference backend, down each attention kernel
 * of attention.cl: attention_gqa (PoCL's default), attention (GQA off), attention_split + attention_combine, and
 * attention_gqa split-K, each with small work-groups so that a call takes several key chunks. Per model shape (tiny,
 * odd: kv_dim 30, one short Q8_0 block per row; wide: kv_dim 128) and layer (0 slides, 1 does not) one cache takes a
 * batch of 7, then 17 (longer than every window: the ring wraps), then decode steps; then two sequences in one call,
 * so that kv_round and kv_store work at a row0 past 0. Every later call reads what the earlier ones stored.
 *
 * <p>Tolerance 1e-4 of each output row's largest |value|, the kit's: both sides attend to the same rounded numbers
 * (KvType.round), so what remains is float32 against the reference's double sums. For Q8_0 that holds where the
 * device's float division is correctly rounded (PoCL's is): elsewhere a quotient x/d within ulps of a half-integer may
 * round to the other q, moving that number by one quant step (see q8_quant in attention.cl). The test also checks that
 * each type's reference differs from F32's by more than the tolerance somewhere, so a backend that ignored the type
 * would fail, and that kv_round left the batch's k and v rounded exactly as KvType.round (bit for bit).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenClKvTypesTest {
    private static final double TOL = 1e-4;

    /** The kernel paths, by the knobs that choose them (ATTENTION_WG small: many chunks of the online softmax). */
    private static final Map<String, BackendOptions> PATHS = Map.of(
            "attention_gqa",
            BackendOptions.defaults()
                    .with(OpenClKnobs.ATTENTION_GQA, 1)
                    .with(OpenClKnobs.ATTENTION_SPLITKEYS, 0)
                    .with(OpenClKnobs.ATTENTION_WG, 4),
            "attention",
            BackendOptions.defaults()
                    .with(OpenClKnobs.ATTENTION_GQA, 0)
                    .with(OpenClKnobs.ATTENTION_SPLITKEYS, 0)
                    .with(OpenClKnobs.ATTENTION_WG, 2),
            "attention_split",
            BackendOptions.defaults()
                    .with(OpenClKnobs.ATTENTION_GQA, 0)
                    .with(OpenClKnobs.ATTENTION_SPLITKEYS, 3)
                    .with(OpenClKnobs.ATTENTION_SPLITBELOW, 1000000000)
                    .with(OpenClKnobs.ATTENTION_WG, 2),
            "attention_gqa split",
            BackendOptions.defaults()
                    .with(OpenClKnobs.ATTENTION_GQA, 1)
                    .with(OpenClKnobs.ATTENTION_SPLITKEYS, 2)
                    .with(OpenClKnobs.ATTENTION_SPLITBELOW, 1000000000)
                    .with(OpenClKnobs.ATTENTION_WG, 4));

    private final Map<String, Backend> backends = new HashMap<>();
    private final List<Checkpoint> checkpoints = new ArrayList<>();
    private final List<ModelWeights> models = new ArrayList<>();
    private Backend reference;

    static Stream<Arguments> pathsAndTypes() {
        return PATHS.keySet().stream()
                .sorted()
                .flatMap(p -> Arrays.stream(KvType.values()).map(t -> Arguments.of(p, t)));
    }

    @BeforeAll
    void setUp() {
        if (!io.gossgpu.backend.Backends.safeAvailability(new OpenClBackendProvider())
                .available()) return; // each test skips (or fails, where required) with the reason
        reference = new ReferenceBackend();
        long seed = 31;
        for (ModelConfig c :
                List.of(TestModelPresets.tiny(), BackendConformanceKit.odd(), BackendConformanceKit.wide())) {
            Checkpoint ck = new TestModelGenerator(c, seed++).inMemory();
            checkpoints.add(ck);
            models.add(ModelWeights.of(ck));
        }
    }

    @AfterAll
    void tearDown() {
        backends.values().forEach(Backend::close);
        if (reference != null) reference.close();
        checkpoints.forEach(Checkpoint::close);
    }

    private Backend backend(String path) {
        return backends.computeIfAbsent(path, p -> new OpenClBackendProvider().create(PATHS.get(p)));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("pathsAndTypes")
    void attentionOverATypedCacheMatchesTheReference(String path, KvType type) {
        BackendConformanceKit.requireAvailable(new OpenClBackendProvider());
        Backend mine = backend(path);
        double widest = 0; // largest difference of this type's reference from F32's, relative to the row scale
        for (ModelWeights w : models) {
            ModelConfig c = w.config();
            try (LoadedWeights lm = mine.loadWeights(w);
                    LoadedWeights lr = reference.loadWeights(w)) {
                for (int layer = 0; layer < 2; layer++) { // 0 slides, 1 does not
                    SplittableRandom r = new SplittableRandom(700 + 10L * layer + type.ordinal());
                    KvCacheSpec spec = new KvCacheSpec(c, 7 + 17 + 3 + 3, 0, type),
                            exact = new KvCacheSpec(c, 7 + 17 + 3 + 3, 0, KvType.F32);
                    try (KvCache a = mine.createKvCache(spec);
                            KvCache ra = reference.createKvCache(spec);
                            KvCache fa = reference.createKvCache(exact);
                            KvCache b = mine.createKvCache(spec);
                            KvCache rb = reference.createKvCache(spec);
                            KvCache fb = reference.createKvCache(exact)) {
                        String what = path + " " + type + " " + describe(c) + " layer " + layer;
                        int start = 0;
                        for (int n : new int[] {7, 17, 1, 1, 1}) {
                            widest = Math.max(
                                    widest,
                                    attend(
                                            what + " at " + start + " +" + n,
                                            mine,
                                            lm,
                                            lr,
                                            c,
                                            layer,
                                            type,
                                            r,
                                            new KvCache[][] {{a, ra, fa}},
                                            new int[] {start},
                                            new int[] {n}));
                            start += n;
                        }
                        // two sequences in one call: the second's rows start at row0 = 3
                        widest = Math.max(
                                widest,
                                attend(
                                        what + ", two sequences",
                                        mine,
                                        lm,
                                        lr,
                                        c,
                                        layer,
                                        type,
                                        r,
                                        new KvCache[][] {{b, rb, fb}, {a, ra, fa}},
                                        new int[] {0, start},
                                        new int[] {3, 2}));
                        widest = Math.max(
                                widest,
                                attend(
                                        what + ", two sequences decoding",
                                        mine,
                                        lm,
                                        lr,
                                        c,
                                        layer,
                                        type,
                                        r,
                                        new KvCache[][] {{a, ra, fa}, {b, rb, fb}},
                                        new int[] {start + 2, 3},
                                        new int[] {1, 1}));
                    }
                }
            }
        }
        if (type == KvType.F32) assertEquals(0, widest, "F32 is the exact path: the same reference");
        else
            assertTrue(
                    widest > 10 * TOL,
                    type + " rounds the cache by at most " + widest + " of the row scale: too little to tell apart");
    }

    /**
     * One call of the sequences ({@code caches[i]} = mine, the reference's of the type, the reference's F32; start,
     * tokens) on the OpenCL backend and the reference, compared at {@link #TOL}; returns how far the reference's typed
     * output is from its F32 output (relative to the row scale).
     */
    private double attend(
            String what,
            Backend mine,
            LoadedWeights lm,
            LoadedWeights lr,
            ModelConfig c,
            int layer,
            KvType type,
            SplittableRandom r,
            KvCache[][] caches,
            int[] starts,
            int[] tokens) {
        int n = Arrays.stream(tokens).sum();
        float[] q = random(r, n * c.qDim(), 2.0), k = random(r, n * c.kvDim(), 2.0), v = random(r, n * c.kvDim(), 1.0);
        Arrays.fill(k, 0, Math.min(k.length, 32), 0f); // a zero Q8_0 block (d = 0) in the first row's keys
        Batch.Sequence[][] seqs = new Batch.Sequence[3][caches.length];
        for (int s = 0; s < caches.length; s++)
            for (int x = 0; x < 3; x++) seqs[x][s] = new Batch.Sequence(caches[s][x], starts[s], tokens[s]);
        float[] got = run(mine, lm, layer, c, n, q, k, v, Batch.of(seqs[0]), type, what);
        float[] want = run(reference, lr, layer, c, n, q, k, v, Batch.of(seqs[1]), null, what);
        float[] f32 = run(reference, lr, layer, c, n, q, k, v, Batch.of(seqs[2]), null, what);
        BackendConformanceKit.assertClose(what, want, got, n, c.qDim(), TOL);
        return BackendConformanceKit.rmsErrorAndTop1(f32, want, n, c.qDim())[2];
    }

    /**
     * Attention of q, k, v over {@code batch} on {@code b}; the output. With {@code type} (the backend under test), also
     * checks that its k and v now hold KvType.round of the inputs.
     */
    private static float[] run(
            Backend b,
            LoadedWeights w,
            int layer,
            ModelConfig c,
            int n,
            float[] q,
            float[] k,
            float[] v,
            Batch batch,
            KvType type,
            String what) {
        try (DeviceTensor dq = b.allocate(n, c.qDim());
                DeviceTensor dk = b.allocate(n, c.kvDim());
                DeviceTensor dv = b.allocate(n, c.kvDim());
                DeviceTensor out = b.allocate(n, c.qDim())) {
            b.write(dq, q);
            b.write(dk, k);
            b.write(dv, v);
            b.attention(w, layer, dq, dk, dv, batch, out);
            if (type != null) {
                assertRounded(what + ": k after kv_round", type, k, b.read(dk), n, c.kvDim());
                assertRounded(what + ": v after kv_round", type, v, b.read(dv), n, c.kvDim());
            }
            return b.read(out);
        }
    }

    /**
     * {@code got} is KvType.round of {@code in}, bit for bit (F32: unchanged). Q8_0 only: a number may be one quant step
     * off, in at most one number of a thousand (plus one), where the device's division is not correctly rounded (a tie
     * of q8_quant); PoCL's is, and there none is.
     */
    private static void assertRounded(String what, KvType type, float[] in, float[] got, int rows, int kvDim) {
        float[] want = in.clone();
        type.round(want, 0, rows, kvDim);
        int ties = 0;
        for (int i = 0; i < want.length; i++) {
            if (Float.floatToRawIntBits(want[i]) == Float.floatToRawIntBits(got[i])) continue;
            int b = i / kvDim * kvDim + (i % kvDim) / KvType.Q8_BLOCK * KvType.Q8_BLOCK;
            float step = 0;
            for (int j = b; j < Math.min(b + KvType.Q8_BLOCK, i / kvDim * kvDim + kvDim); j++)
                step = Math.max(step, Math.abs(want[j]) / 127);
            if (type == KvType.Q8_0 && Math.abs(got[i] - want[i]) <= step * 1.001 && ++ties <= 1 + want.length / 1000)
                continue;
            fail(what + ": number " + i + " (row " + i / kvDim + ") is " + got[i] + ", KvType." + type + ".round gives "
                    + want[i] + " (from " + in[i] + ")");
        }
        if (ties > 0) System.out.println(what + ": " + ties + " Q8_0 ties off by one step");
    }

    private static String describe(ModelConfig c) {
        return "kv_dim " + c.kvDim() + " (hd " + c.headDim() + ", window " + c.slidingWindow() + ")";
    }

    private static float[] random(SplittableRandom r, int n, double std) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) f[i] = (float) (r.nextGaussian() * std);
        return f;
    }
}
