package io.gossgpu.cuda;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * moe.cu's decode kernels (moe_gate_up, moe_down: rows in 16-byte loads, a lane's activations of a 3072-column chunk
 * in registers) against the reference backend, on a shape whose rows are longer than one chunk: hidden 3136 (98
 * blocks: a 96-block chunk and a 2-block tail chunk) and intermediate 3104 (97 blocks: a 1-block tail), 5 experts,
 * 3 per token, for T = 1, 2, 3 (all below GOSS_CUDA_MOE_PREFILL_MIN_T), from an OpenAI-layout checkpoint and from a
 * GGUF one (block_mxfp4, repacked to OpenAI's planes at upload), with decode blocks of 4 warps (the default), 3
 * warps (24 units a block: 3104 = 129 x 24 + 8, so the last block's warps 1 and 2 have no units) and 2 warps
 * (moe_down's warps then take the 3 slots in turns).
 * <p>Tolerance: {@link #TOL} of each output row's largest value, the kit's op tolerance: float32 sums of 3104 or
 * 3136 products in another order differ by about 1e-6 of that.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CudaMoeDecodeTest {
    static final double TOL = 1e-4;
    /** One layer; hidden 3136 = 98 blocks, intermediate 3104 = 97 blocks; 5 experts, top 3; small attention and vocabulary. */
    static final ModelConfig SHAPE = new ModelConfig(1, 5, 3, 67, 3136, 3104, 7.0f, 64, 2, 1, 4, 4096,
            150000f, 32f, 1f, 32f, 1e-5f);

    private final BackendProvider provider = new CudaConformanceTest().provider();
    private final List<CudaBackend> backends = new ArrayList<>();
    private ReferenceBackend reference;
    private final List<Checkpoint> checkpoints = new ArrayList<>();
    private ModelWeights openai, ggml;

    @BeforeAll
    void setUp(@TempDir Path dir) {
        if (!io.gossgpu.backend.Backends.safeAvailability(provider).available()) {
            return;
        }
        for (int block : new int[]{128, 96, 64}) {
            backends.add((CudaBackend) provider.create(BackendOptions.defaults().with(CudaKnobs.MOE, block)));
        }
        reference = new ReferenceBackend();
        Checkpoint a = new TestModelGenerator(SHAPE, 61).inMemory();
        checkpoints.add(a);
        openai = ModelWeights.of(a);
        Path file = dir.resolve("decode.gguf");
        GgufWriter.write(new TestModelGenerator(SHAPE, 62), file, GgufWriter.Options.defaults());
        Checkpoint g = Checkpoint.open(file, LoadOptions.defaults());
        checkpoints.add(g);
        ggml = ModelWeights.of(g);
        assertEquals(WeightFormat.MXFP4_GGML, ggml.layers().get(0).gate().format());
        assertEquals(WeightFormat.MXFP4_OPENAI, openai.layers().get(0).gate().format());
    }

    @BeforeEach
    void skipWhenUnavailable() {
        BackendConformanceKit.requireAvailable(provider);
    }

    @AfterAll
    void tearDown() {
        backends.forEach(CudaBackend::close);
        if (reference != null) {
            reference.close();
        }
        checkpoints.forEach(Checkpoint::close);
    }

    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {1, 2, 3})
    void decodeMoeMatchesTheReference(int T) {
        for (ModelWeights w : new ModelWeights[]{openai, ggml}) {
            int k = SHAPE.expertsPerToken(), h = SHAPE.hiddenSize();
            SplittableRandom r = new SplittableRandom(900 + T);
            float[] x = new float[T * h];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) r.nextGaussian();
            }
            try (LoadedWeights wr = reference.loadWeights(w); DeviceTensor xr = reference.allocate(T, h); DeviceTensor or = reference.allocate(T, h);
                 DeviceRouting rr = reference.allocateRouting(T, k)) {
                reference.write(xr, x);
                reference.router(wr, 0, xr, rr);
                Routing routing = reference.readRouting(rr);
                reference.moe(wr, 0, xr, rr, or);
                float[] want = reference.read(or);
                for (CudaBackend b : backends) {
                    long tiled = b.counters().get("moe_tiled_calls");
                    float[] got;
                    try (LoadedWeights wm = b.loadWeights(w); DeviceTensor xm = b.allocate(T, h); DeviceTensor om = b.allocate(T, h);
                         DeviceRouting rm = b.allocateRouting(T, k)) {
                        b.write(xm, x);
                        b.writeRouting(rm, routing);
                        b.moe(wm, 0, xm, rm, om);
                        got = b.read(om);
                    }
                    assertEquals(tiled, b.counters().get("moe_tiled_calls"), "T=" + T + " takes the decode kernels");
                    BackendConformanceKit.assertClose(w.layers().get(0).gate().format() + " decode MoE, GOSS_CUDA_MOE_BLOCK="
                            + b.knobs().get("GOSS_CUDA_MOE_BLOCK") + ", T=" + T, want, got, T, h, TOL);
                }
            }
        }
    }
}
