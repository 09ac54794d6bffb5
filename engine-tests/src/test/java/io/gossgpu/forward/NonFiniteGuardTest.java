package io.gossgpu.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.SamplerConfig;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.TensorCheck;
import io.gossgpu.quant.LE;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * NaN and infinity in the weights stop generation with one line naming the op, layer and position where the first
 * non-finite value appeared, instead of printing tokens chosen from NaN; {@code --check-tensors} names the tensor at
 * load.
 */
class NonFiniteGuardTest {
    private static final int[] PROMPT = {1, 2, 3, 4, 5};
    private static final short BF16_NAN = 0x7fc0, BF16_INF = 0x7f80;

    record Damage(String tensor, Consumer<MemorySegment> edit, String expected) {}

    private static final Damage[] DAMAGES = {
        new Damage(
                "embedding.weight",
                b -> b.set(LE.I16, 2L * (3L * TestModelPresets.tiny().hiddenSize() + 5), BF16_NAN),
                "NaN first appears in the output of EMBED at position 2 (value 5)"),
        new Damage(
                "block.1.attn.norm.scale",
                b -> b.set(LE.I16, 2L * 7, BF16_NAN),
                "first appears in the output of ATTN_NORM[layer 1] at position 0"),
        new Damage(
                "block.0.attn.sinks",
                b -> b.set(LE.I16, 0, BF16_NAN),
                "first appears in the output of ATTENTION[layer 0] at position 0"),
        new Damage(
                "norm.scale",
                b -> b.set(LE.I16, 2L * 4, BF16_INF),
                "first appears in the output of FINAL_NORM at position 0 (value 4)"),
        // E8M0 scale byte 255 is NaN: every MXFP4 scale of layer 0's first expert matrix.
        new Damage(
                "block.0.mlp.mlp1_weight.scales",
                b -> b.fill((byte) 255),
                "first appears in the output of MOE[layer 0] at position 0"),
        // dense (BF16) weights, which the cpu backend's default path quantizes to Q8_0 at load
        new Damage(
                "block.0.attn.qkv.weight",
                b -> b.set(LE.I16, 2L * (10L * TestModelPresets.tiny().hiddenSize() + 3), BF16_NAN),
                "NaN first appears in the output of QKV_ROPE[layer 0] at position 0"),
        new Damage(
                "block.1.attn.out.weight",
                b -> b.set(LE.I16, 2L * 40, BF16_INF),
                "first appears in the output of ATTN_OUT[layer 1] at position 0"),
        new Damage(
                "block.2.attn.out.weight",
                b -> b.set(LE.I16, 2L * (5L * TestModelPresets.tiny().qDim() + 33), BF16_NAN),
                "NaN first appears in the output of ATTN_OUT[layer 2] at position 0 (value 5)"),
    };

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4})
    void referenceNamesTheOpAndTheTensorCheckNamesTheTensor(int which) {
        run(DAMAGES[which], ReferenceBackend::new);
    }

    @ParameterizedTest
    @ValueSource(ints = {5, 6, 7})
    void referenceNamesTheOpOfADenseWeight(int which) {
        run(DAMAGES[which], ReferenceBackend::new);
    }

    /**
     * The cpu backend's MXFP4 kernels are checked for scale 255 by the conformance kit; the other damages here, on its
     * default path (native kernels where the CPU has them, dense weights quantized to Q8_0 at load) and, for the dense
     * weights, with them read in float.
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 5, 6, 7})
    void cpuNamesTheOp(int which) {
        run(DAMAGES[which], () -> new CpuBackendProvider().create(io.gossgpu.backend.BackendOptions.defaults()));
    }

    @ParameterizedTest
    @ValueSource(ints = {5, 6, 7})
    void cpuWithFloatDenseNamesTheOp(int which) {
        run(
                DAMAGES[which],
                () -> new CpuBackendProvider()
                        .create(io.gossgpu.backend.BackendOptions.defaults()
                                .with(CpuBackendProvider.DENSE.envName(), "float")));
    }

    /** A NaN in a dense weight stops the default cpu path with the very line the reference prints. */
    @ParameterizedTest
    @ValueSource(ints = {5, 7})
    void cpuStopsWithTheReferenceLine(int which) {
        assertEquals(
                message(DAMAGES[which], ReferenceBackend::new),
                message(
                        DAMAGES[which],
                        () -> new CpuBackendProvider().create(io.gossgpu.backend.BackendOptions.defaults())));
    }

    private static String message(Damage d, Supplier<Backend> backendFactory) {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 21).inMemory();
                Backend backend = backendFactory.get()) {
            d.edit().accept(ck.tensor(d.tensor()).bytes());
            try (LoadedWeights w = backend.loadWeights(ModelWeights.of(ck));
                    Session s = new Session(backend, w, 64)) {
                return assertThrows(
                                GossException.class,
                                () -> s.generate(
                                        PROMPT, new GenerationOptions(4, Set.of(), SamplerConfig.greedy()), t -> {}))
                        .getMessage();
            }
        }
    }

    private static void run(Damage d, Supplier<Backend> backendFactory) {
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 21).inMemory();
                Backend backend = backendFactory.get()) {
            d.edit().accept(ck.tensor(d.tensor()).bytes());
            ModelFormatException check =
                    assertThrows(ModelFormatException.class, () -> TensorCheck.run(ck, LoadOptions.Progress.NONE));
            assertTrue(check.getMessage().contains("'" + d.tensor() + "'"), check.getMessage());
            try (LoadedWeights w = backend.loadWeights(ModelWeights.of(ck))) {
                for (SamplerConfig sampler : new SamplerConfig[] {
                    SamplerConfig.greedy(), SamplerConfig.of(1f, 7), new SamplerConfig(1f, 5, 0.9f, 0f, 7)
                })
                    try (Session s = new Session(backend, w, 64)) {
                        GossException e = assertThrows(
                                GossException.class,
                                () -> s.generate(PROMPT, new GenerationOptions(4, Set.of(), sampler), t -> {
                                    throw new AssertionError("token " + t + " printed");
                                }));
                        assertTrue(
                                e.getMessage().contains(d.expected()),
                                backend.name() + " " + sampler + ": " + e.getMessage());
                        assertTrue(e.getMessage().contains("--check-tensors"), e.getMessage());
                    }
            }
        }
    }
}
