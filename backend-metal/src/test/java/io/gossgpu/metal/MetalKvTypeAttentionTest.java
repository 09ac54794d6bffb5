package io.gossgpu.metal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Metal attention over a cache of every {@link KvType} against the reference backend on the same random inputs: per
 * type, shape ({@code tiny}: kv_dim 32, window 5; {@code odd}: kv_dim 30, one short Q8_0 block, window 3;
 * {@code wide}: head_dim 64, kv_dim 128, window 7) and layer (0 slides, its ring wraps; 1 full), a prefill of 7
 * positions, a second batch of 5 that reads the first from the cache, then 3 decode steps that read everything from
 * the cache. The first batch starts with a zero Q8_0 block (scale 0).
 *
 * <p>Tolerances: every output within {@value #TOL} of its row's largest |value|: both sides round the same keys and
 * values, so what remains is float32 summation order and exp (measured on the emulated device: at most 8e-7 for every
 * type and shape; a 64-term dot product in float is off by at most ~4e-6 of its terms' sum, a GPU's fast exp adds a
 * few ulps). The batch's k and v after
 * the call (kv_round rounded them in place) equal the reference's rounded rows exactly on the emulated device (the
 * same IEEE operations: half conversion, division, rint), within one Q8_0 step (1/127 of the row's largest |value|)
 * on a GPU, whose fast-math division may differ at a tie. And the test can tell a typed cache from an F32 one: over
 * each type's calls, some output differs from the reference's F32-cache output by more than 10 × {@value #TOL} of
 * its row scale (measured: F16 9e-4 to 1.3e-3, BF16 7e-3 to 1e-2, Q8_0 2.5e-2 to 2.9e-2), and F32 by at most
 * {@value #TOL}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetalKvTypeAttentionTest {
    static final double TOL = 2e-5;

    private final MetalBackendProvider provider = new MetalBackendProvider();
    private Backend metal, reference;
    private final List<Checkpoint> checkpoints = new ArrayList<>();
    private final List<LoadedWeights> loaded = new ArrayList<>();

    @BeforeAll
    void open() {
        RequiredBackends.requireAvailable(provider);
        metal = provider.create(BackendOptions.defaults());
        reference = new ReferenceBackend();
    }

    @AfterAll
    void close() {
        loaded.forEach(LoadedWeights::close);
        if (metal != null) metal.close();
        if (reference != null) reference.close();
        checkpoints.forEach(Checkpoint::close);
    }

    static Stream<Arguments> typesAndShapes() {
        return Stream.of(KvType.values())
                .flatMap(t -> Stream.of("tiny", "odd", "wide").map(s -> Arguments.of(t, s)));
    }

    private static ModelConfig config(String shape) {
        return switch (shape) {
            case "tiny" -> TestModelPresets.tiny();
            case "odd" -> BackendConformanceKit.odd();
            case "wide" -> BackendConformanceKit.wide();
            default -> throw new IllegalArgumentException(shape);
        };
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("typesAndShapes")
    void attentionOverATypedCacheMatchesTheReference(KvType type, String shape) {
        ModelConfig c = config(shape);
        Checkpoint ck = new TestModelGenerator(c, 31).inMemory();
        checkpoints.add(ck);
        ModelWeights w = ModelWeights.of(ck);
        LoadedWeights mine = metal.loadWeights(w), ref = reference.loadWeights(w);
        loaded.add(mine);
        loaded.add(ref);
        int[] batches = {7, 5, 1, 1, 1};
        int context = 7 + 5 + 3 + 1;
        double apart = 0; // largest difference from the F32 cache's output, relative to the row scale
        for (int layer = 0; layer < 2; layer++) {
            SplittableRandom r = new SplittableRandom(600 + layer);
            KvCacheSpec spec = new KvCacheSpec(c, context, 0, type);
            try (KvCache cm = metal.createKvCache(spec);
                    KvCache cr = reference.createKvCache(spec);
                    KvCache c32 = reference.createKvCache(spec.withType(KvType.F32))) {
                int start = 0;
                for (int n : batches) {
                    float[] q = random(r, n * c.qDim(), 2),
                            k = random(r, n * c.kvDim(), 2),
                            v = random(r, n * c.kvDim(), 1);
                    if (start == 0) for (int i = 0; i < Math.min(32, c.kvDim()); i++) k[i] = 0; // a zero Q8_0 block
                    String call = type + " " + shape + " layer " + layer + ", " + n + " at " + start;
                    float[][] got = attend(metal, mine, cm, layer, start, n, q, k, v, c);
                    float[][] want = attend(reference, ref, cr, layer, start, n, q, k, v, c);
                    float[][] f32 = attend(reference, ref, c32, layer, start, n, q, k, v, c);
                    BackendConformanceKit.assertClose(call + ": out", want[0], got[0], n, c.qDim(), TOL);
                    assertRounded(call + ": k rounded in place", want[1], got[1], n, c.kvDim());
                    assertRounded(call + ": v rounded in place", want[2], got[2], n, c.kvDim());
                    apart = Math.max(apart, BackendConformanceKit.rmsErrorAndTop1(f32[0], got[0], n, c.qDim())[2]);
                    start += n;
                }
            }
        }
        if (type == KvType.F32) assertTrue(apart <= TOL, "F32: " + apart + " from the reference");
        else assertTrue(apart > 10 * TOL, type + " " + shape + ": only " + apart + " from the F32 cache's output");
    }

    /** One attention call of a sequence at {@code start} on {@code b}: {out, k and v after the call}. */
    private static float[][] attend(
            Backend b,
            LoadedWeights w,
            KvCache cache,
            int layer,
            int start,
            int n,
            float[] q,
            float[] k,
            float[] v,
            ModelConfig c) {
        try (DeviceTensor tq = tensor(b, n, c.qDim(), q);
                DeviceTensor tk = tensor(b, n, c.kvDim(), k);
                DeviceTensor tv = tensor(b, n, c.kvDim(), v);
                DeviceTensor out = b.allocate(n, c.qDim())) {
            b.attention(w, layer, tq, tk, tv, Batch.of(new Batch.Sequence(cache, start, n)), out);
            return new float[][] {b.read(out), b.read(tk), b.read(tv)};
        }
    }

    private static DeviceTensor tensor(Backend b, int rows, int cols, float[] values) {
        DeviceTensor t = b.allocate(rows, cols);
        b.write(t, values);
        return t;
    }

    /** Exactly the reference's rounded rows on the emulated device; within one Q8_0 step of the row scale on a GPU. */
    private static void assertRounded(String what, float[] want, float[] got, int rows, int cols) {
        if (System.getenv("GOSS_METAL_EMULATOR") != null) assertArrayEquals(want, got, what);
        else BackendConformanceKit.assertClose(what, want, got, rows, cols, 1.0 / 127);
    }

    private static float[] random(SplittableRandom r, int n, double std) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) f[i] = (float) (r.nextGaussian() * std);
        return f;
    }
}
