package io.gossgpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The cpu backend's KV cache in every {@link KvType}, on every kernel set this CPU runs (the others skip, saying why).
 *
 * <ul>
 *   <li>Storage: every stored number reads back as exactly {@link KvType#round} gives it (equal bits), keys through
 *       their 16-slot transposed blocks and values through their rows, whole rows and per head; storing the rounded
 *       numbers again gives the same bits in the arrays (encoding is exact for rounded numbers).
 *   <li>Attention against the reference backend (the oracle: it rounds the batch's rows and attends in float) on the
 *       shapes of the conformance kit ({@code tiny}: KV heads of 16 channels, so one Q8_0 block spans two heads;
 *       {@code odd}: heads of 10, 30 numbers a row; {@code wide}: heads of 64 as gpt-oss; {@code split}: heads of 10, 60 numbers a row, so Q8_0 blocks begin inside
 *       heads and inside vectors), a sliding and a full layer,
 *       a first batch of 7 positions, a batch of T, decode steps, then three sequences in one call (one with rollback
 *       slots, one new): at the kit's float tolerance, 1e-4 of the row's largest value. Both sides attend to the same
 *       rounded numbers, so only the order of float sums differs, as for an F32 cache.
 *   <li>Bit for bit: each kernel set with a typed cache gives exactly the outputs of the same set with an F32 cache fed
 *       the rounded keys and values (its kernels decode a stored number to the rounded float and sum it in F32's order).
 *   <li>Long context: a prefill of 1100 positions, decode at depth 1100 .. 2200, where the native kernels split the keys
 *       into chunks of 1024 and merge them, against the reference at 1e-4.
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CpuKvTypeTest {
    private final Map<KernelSet.Isa, Backend> backends = new EnumMap<>(KernelSet.Isa.class);
    private final Map<String, Model> models = new HashMap<>();
    private final Backend reference = new ReferenceBackend();

    private record Model(ModelConfig config, Checkpoint checkpoint, Map<Backend, LoadedWeights> loaded) {}

    @AfterAll
    void close() {
        for (Model m : models.values()) {
            m.loaded.values().forEach(LoadedWeights::close);
            m.checkpoint.close();
        }
        backends.values().forEach(Backend::close);
        reference.close();
    }

    private Backend backend(KernelSet.Isa isa) {
        Assumptions.assumeTrue(
                NativeCpu.supports(isa), () -> isa + " kernels cannot run here: " + NativeCpu.unavailableReason());
        return backends.computeIfAbsent(
                isa, i -> CpuBackendProvider.withKernels(i).create(BackendOptions.defaults()));
    }

    private static ModelConfig shape(String name) {
        return switch (name) {
            case "tiny" -> TestModelPresets.tiny();
            case "odd" -> BackendConformanceKit.odd();
            case "wide" -> BackendConformanceKit.wide();
            // heads of 10 over 6 KV heads (60 numbers a row): Q8_0 blocks start inside heads and inside 8-lane vectors
            case "split" ->
                new ModelConfig(2, 5, 3, 77, 64, 96, 7.0f, 10, 12, 6, 3, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
            default -> throw new IllegalArgumentException(name);
        };
    }

    private Model model(String name) {
        return models.computeIfAbsent(name, n -> {
            ModelConfig c = shape(n);
            return new Model(c, new TestModelGenerator(c, 61).inMemory(), new HashMap<>());
        });
    }

    private LoadedWeights weights(Model m, Backend b) {
        return m.loaded.computeIfAbsent(b, x -> x.loadWeights(ModelWeights.of(m.checkpoint)));
    }

    static Stream<Arguments> typesAndShapes() {
        return Stream.of(KvType.values())
                .flatMap(t -> Stream.of("tiny", "odd", "wide", "split").map(s -> Arguments.of(t, s)));
    }

    // ---- storage ----------------------------------------------------------------------------------------------

    /** Rows of every kind the formulas treat apart: ordinary, tiny (F16 subnormals), huge, with outliers, zero. */
    private static float[] rows(SplittableRandom r, int rows, int kvDim) {
        float[] x = new float[rows * kvDim];
        for (int i = 0; i < rows; i++) {
            double scale = switch (i % 6) {
                case 0 -> 1;
                case 1 -> 1e-6; // below F16's normal range
                case 2 -> 3e3; // F16 keeps 11 bits of it
                case 3 -> 0; // a zero row: Q8_0's d = 0
                default -> Math.exp(r.nextDouble(-8, 8));
            };
            for (int c = 0; c < kvDim; c++) {
                double g = r.nextGaussian() * scale;
                if (i % 6 == 4 && c % 11 == 5) g *= 200; // one outlier per block or so
                x[i * kvDim + c] = (float) g;
            }
        }
        return x;
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("typesAndShapes")
    void storedNumbersReadBackAsRound(KvType type, String shape) {
        ModelConfig c = shape(shape);
        int kvDim = c.kvDim(), hd = c.headDim();
        KvCacheSpec spec = new KvCacheSpec(c, 37, 0, type);
        CpuKvCache cache = new CpuKvCache(spec), again = new CpuKvCache(spec);
        SplittableRandom r = new SplittableRandom(7);
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            int slots = spec.slots(l), blocks = (slots + 15) >> 4;
            float[] k = rows(r, slots, kvDim), v = rows(r, slots, kvDim);
            for (int s = 0; s < slots; s++) cache.store(l, s, k, s * kvDim, v, s * kvDim);
            float[] kr = k.clone(), vr = v.clone();
            type.round(kr, 0, slots, kvDim);
            type.round(vr, 0, slots, kvDim);
            // whole rows
            float[] keys = new float[blocks * 16 * kvDim], values = new float[slots * kvDim];
            cache.decodeKeys(l, 0, blocks, 0, kvDim, keys);
            cache.decodeValues(l, 0, slots, 0, kvDim, values);
            for (int s = 0; s < slots; s++)
                for (int ch = 0; ch < kvDim; ch++) {
                    String at = type + " layer " + l + " slot " + s + " channel " + ch;
                    assertBits(kr[s * kvDim + ch], keys[((s >> 4) * kvDim + ch) * 16 + (s & 15)], "key " + at);
                    assertBits(vr[s * kvDim + ch], values[s * kvDim + ch], "value " + at);
                }
            // per head, from a block and a slot that are not the first
            for (int g = 0; g < c.numKeyValueHeads(); g++) {
                int b0 = Math.min(1, blocks - 1), s0 = Math.min(3, slots - 1);
                float[] hk = new float[(blocks - b0) * 16 * hd], hv = new float[(slots - s0) * hd];
                cache.decodeKeys(l, b0, blocks, g * hd, hd, hk);
                cache.decodeValues(l, s0, slots - s0, g * hd, hd, hv);
                for (int s = b0 * 16; s < slots; s++)
                    for (int d = 0; d < hd; d++)
                        assertBits(
                                kr[s * kvDim + g * hd + d],
                                hk[(((s >> 4) - b0) * hd + d) * 16 + (s & 15)],
                                "key, head " + g);
                for (int s = s0; s < slots; s++)
                    for (int d = 0; d < hd; d++)
                        assertBits(vr[s * kvDim + g * hd + d], hv[(s - s0) * hd + d], "value, head " + g);
            }
            // the rounded rows encode to the same bits (Q8_0: the same scales, and the same quants where the scale is
            // not 0; a block whose d rounds to 0 in F16 reads back as zeros, whatever the quants rint(x / d) it keeps)
            for (int s = 0; s < slots; s++) again.store(l, s, kr, s * kvDim, vr, s * kvDim);
            if (type == KvType.Q8_0)
                for (int s = 0; s < slots; s++)
                    for (int ch = 0; ch < kvDim; ch++) {
                        int kq = ((s >> 4) * kvDim + ch) * 16 + (s & 15), vq = s * kvDim + ch;
                        int b = ch / KvType.Q8_BLOCK, ks = ((s >> 4) * cache.blocks + b) * 16 + (s & 15);
                        if ((cache.keyScales[l][ks] & 0x7fff) == 0) cache.quantKeys[l][kq] = 0;
                        if ((cache.valueScales[l][s * cache.blocks + b] & 0x7fff) == 0) cache.quantValues[l][vq] = 0;
                    }
            switch (type) {
                case F32 -> {
                    assertArrayEquals(cache.keys[l], again.keys[l]);
                    assertArrayEquals(cache.values[l], again.values[l]);
                }
                case F16, BF16 -> {
                    assertArrayEquals(cache.halfKeys[l], again.halfKeys[l]);
                    assertArrayEquals(cache.halfValues[l], again.halfValues[l]);
                }
                case Q8_0 -> {
                    assertArrayEquals(cache.quantKeys[l], again.quantKeys[l]);
                    assertArrayEquals(cache.quantValues[l], again.quantValues[l]);
                    assertArrayEquals(cache.keyScales[l], again.keyScales[l]);
                    assertArrayEquals(cache.valueScales[l], again.valueScales[l]);
                }
            }
        }
    }

    private static void assertBits(float want, float got, String what) {
        if (Float.floatToIntBits(want) != Float.floatToIntBits(got))
            assertEquals(want, got, 0, what + ": " + Float.floatToIntBits(want) + " vs " + Float.floatToIntBits(got));
    }

    /** The backend's cache holds its type: per layer, the bytes {@link KvType#bytes} gives for its slots (keys padded to 16). */
    @ParameterizedTest
    @EnumSource(KvType.class)
    void theBackendHoldsItsType(KvType type) {
        Model m = model("odd");
        int kvDim = m.config.kvDim();
        try (KvCache kv = backend(KernelSet.Isa.JAVA).createKvCache(new KvCacheSpec(m.config, 50, 2, type))) {
            CpuKvCache cache = (CpuKvCache) kv;
            assertEquals(type, cache.type);
            for (int l = 0; l < m.config.numHiddenLayers(); l++) {
                long slots = cache.spec.slots(l), padded = (slots + 15) & ~15;
                long held = cache.keySegment(l).byteSize()
                        + cache.valueSegment(l).byteSize()
                        + cache.keyScaleSegment(l).byteSize()
                        + cache.valueScaleSegment(l).byteSize();
                assertEquals(type.bytes(padded, kvDim) + type.bytes(slots, kvDim), held, "layer " + l);
            }
        }
    }

    /** The native kernels take the type as KvType's ordinal (goss_cpu.h GOSS_CPU_KV_*). */
    @Test
    void theKernelsNumberTheTypesAsKvTypeDoes() {
        assertEquals(KvType.F32.ordinal(), goss_cpu_h.GOSS_CPU_KV_F32);
        assertEquals(KvType.F16.ordinal(), goss_cpu_h.GOSS_CPU_KV_F16);
        assertEquals(KvType.BF16.ordinal(), goss_cpu_h.GOSS_CPU_KV_BF16);
        assertEquals(KvType.Q8_0.ordinal(), goss_cpu_h.GOSS_CPU_KV_Q8_0);
    }

    // ---- attention --------------------------------------------------------------------------------------------

    static Stream<Arguments> kernelsTypesAndShapes() {
        return Stream.of(KernelSet.Isa.values())
                .flatMap(i -> typesAndShapes().map(a -> Arguments.of(i, a.get()[0], a.get()[1])));
    }

    /** One call: sequences (cache index, start, tokens). */
    private record Call(int[][] seqs) {
        int rows() {
            return Arrays.stream(seqs).mapToInt(s -> s[2]).sum();
        }
    }

    /**
     * The calls of {@link #attentionMatchesTheReference}: sequence 0 takes 7 positions, T more, two decode steps; then
     * sequences 0, 1 (a cache with rollback slots) and 2 (a new one) in one call, and a decode step of all three.
     */
    private static List<Call> calls(int T) {
        List<Call> c = new ArrayList<>();
        c.add(new Call(new int[][] {{0, 0, 7}}));
        c.add(new Call(new int[][] {{0, 7, T}}));
        c.add(new Call(new int[][] {{0, 7 + T, 1}}));
        c.add(new Call(new int[][] {{0, 8 + T, 1}, {1, 0, 9}}));
        c.add(new Call(new int[][] {{1, 9, T}, {0, 9 + T, 3}, {2, 0, 4}}));
        c.add(new Call(new int[][] {{2, 4, 1}, {0, 12 + T, 1}, {1, 9 + T, 1}}));
        return c;
    }

    @ParameterizedTest(name = "{0}, {1}, {2}")
    @MethodSource("kernelsTypesAndShapes")
    void attentionMatchesTheReference(KernelSet.Isa isa, KvType type, String shape) {
        Backend cpu = backend(isa);
        Model m = model(shape);
        ModelConfig c = m.config;
        LoadedWeights lc = weights(m, cpu), lr = weights(m, reference);
        for (int T : new int[] {5, 17})
            for (int layer = 0; layer < 2; layer++) { // 0 slides, 1 does not
                SplittableRandom r = new SplittableRandom(900 + 31L * T + layer);
                int ctx = 13 + T + 2 * T;
                KvCacheSpec[] specs = {
                    new KvCacheSpec(c, ctx, 0, type), new KvCacheSpec(c, ctx, 4, type), new KvCacheSpec(c, ctx, 0, type)
                };
                KvCacheSpec[] f32 =
                        Arrays.stream(specs).map(s -> s.withType(KvType.F32)).toArray(KvCacheSpec[]::new);
                KvCache[] mine = new KvCache[3], ref = new KvCache[3], exact = new KvCache[3];
                try {
                    for (int i = 0; i < 3; i++) {
                        mine[i] = cpu.createKvCache(specs[i]);
                        ref[i] = reference.createKvCache(specs[i]);
                        exact[i] = cpu.createKvCache(f32[i]);
                    }
                    for (Call call : calls(T)) {
                        int n = call.rows();
                        float[] q = scaled(OpRuns.gaussian(r, n * c.qDim()), 2),
                                k = scaled(OpRuns.gaussian(r, n * c.kvDim()), 2),
                                v = OpRuns.gaussian(r, n * c.kvDim());
                        String what = isa + " " + type + " " + shape + " layer " + layer + " T=" + T + " call "
                                + Arrays.deepToString(call.seqs);
                        float[] want = attention(reference, lr, layer, ref, call, c, q, k, v);
                        float[] got = attention(cpu, lc, layer, mine, call, c, q, k, v);
                        BackendConformanceKit.assertClose(what, want, got, n, c.qDim(), 1e-4);
                        float[] kr = k.clone(), vr = v.clone();
                        type.round(kr, 0, n, c.kvDim());
                        type.round(vr, 0, n, c.kvDim());
                        float[] same = attention(cpu, lc, layer, exact, call, c, q, kr, vr);
                        for (int i = 0; i < got.length; i++)
                            if (Float.floatToIntBits(got[i]) != Float.floatToIntBits(same[i]))
                                assertEquals(same[i], got[i], 0, what + ": not bit for bit the F32 cache's, at " + i);
                    }
                } finally {
                    for (KvCache[] a : new KvCache[][] {mine, ref, exact}) for (KvCache x : a) if (x != null) x.close();
                }
            }
    }

    private static float[] scaled(float[] x, float f) {
        for (int i = 0; i < x.length; i++) x[i] *= f;
        return x;
    }

    private static float[] attention(
            Backend b,
            LoadedWeights w,
            int layer,
            KvCache[] caches,
            Call call,
            ModelConfig c,
            float[] q,
            float[] k,
            float[] v) {
        int n = call.rows();
        Batch.Sequence[] seqs = new Batch.Sequence[call.seqs.length];
        for (int i = 0; i < seqs.length; i++) {
            int[] s = call.seqs[i];
            seqs[i] = new Batch.Sequence(caches[s[0]], s[1], s[2]);
        }
        try (DeviceTensor qb = b.allocate(n, c.qDim());
                DeviceTensor kb = b.allocate(n, c.kvDim());
                DeviceTensor vb = b.allocate(n, c.kvDim());
                DeviceTensor out = b.allocate(n, c.qDim())) {
            b.write(qb, q);
            b.write(kb, k);
            b.write(vb, v);
            b.attention(w, layer, qb, kb, vb, Batch.of(seqs), out);
            return b.read(out);
        }
    }

    static Stream<Arguments> kernelsAndTypes() {
        return Stream.of(KernelSet.Isa.values())
                .flatMap(i -> Stream.of(KvType.F16, KvType.BF16, KvType.Q8_0).map(t -> Arguments.of(i, t)));
    }

    /**
     * A prefill of 1100 positions in two batches, then decode steps at depth 1100 .. 2200 (chunks of 1024 keys, split
     * and merged on the native sets), on the {@code wide} shape (heads of 64), against the reference at 1e-4.
     */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("kernelsAndTypes")
    void longContextMatchesTheReference(KernelSet.Isa isa, KvType type) {
        Backend cpu = backend(isa);
        Model m = model("wide");
        ModelConfig c = m.config;
        LoadedWeights lc = weights(m, cpu), lr = weights(m, reference);
        KvCacheSpec spec = new KvCacheSpec(c, 2300, 0, type);
        SplittableRandom r = new SplittableRandom(12);
        int[][] steps = {{0, 700}, {700, 400}, {1100, 1}, {1101, 3}, {1104, 1000}, {2104, 1}, {2105, 2}};
        for (int layer = 0; layer < 2; layer++)
            try (KvCache kc = cpu.createKvCache(spec);
                    KvCache kr = reference.createKvCache(spec)) {
                for (int[] step : steps) {
                    int start = step[0], T = step[1];
                    float[] q = OpRuns.gaussian(r, T * c.qDim()),
                            k = OpRuns.gaussian(r, T * c.kvDim()),
                            v = OpRuns.gaussian(r, T * c.kvDim());
                    float[] got = OpRuns.attention(cpu, lc, layer, kc, start, T, c, q, k, v);
                    float[] want = OpRuns.attention(reference, lr, layer, kr, start, T, c, q, k, v);
                    BackendConformanceKit.assertClose(
                            isa + " " + type + " attention layer " + layer + " positions " + start + ".."
                                    + (start + T - 1),
                            want,
                            got,
                            T,
                            c.qDim(),
                            1e-4);
                }
            }
    }
}
