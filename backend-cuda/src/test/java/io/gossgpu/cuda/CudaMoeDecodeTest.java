package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
class CudaMoeDecodeTest extends CudaAgainstReference {
    static final double TOL = 1e-4;
    /** One layer; hidden 3136 = 98 blocks, intermediate 3104 = 97 blocks; 5 experts, top 3; small attention and vocabulary. */
    static final ModelConfig SHAPE =
            new ModelConfig(1, 5, 3, 67, 3136, 3104, 7.0f, 64, 2, 1, 4, 4096, 150000f, 32f, 1f, 32f, 1e-5f);

    private final List<CudaBackend> backends = new ArrayList<>();
    private Mxfp4Layouts layouts;

    @BeforeAll
    void setUp(@TempDir Path dir) {
        if (!available()) {
            return;
        }
        for (int block : new int[] {128, 96, 64}) {
            backends.add(openCuda(BackendOptions.defaults().with(CudaKnobs.MOE, block)));
        }
        layouts = closeAfterAll(new Mxfp4Layouts(SHAPE, 61, 62, dir));
    }

    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {1, 2, 3})
    void decodeMoeMatchesTheReference(int T) {
        for (ModelWeights w : layouts.both()) {
            int k = SHAPE.expertsPerToken(), h = SHAPE.hiddenSize();
            float[] x = OpRuns.gaussian(new SplittableRandom(900 + T), T * h);
            try (LoadedWeights wr = reference.loadWeights(w)) {
                Routing routing = OpRuns.routing(reference, wr, 0, x, T, h, k);
                float[] want = OpRuns.moe(reference, wr, 0, x, T, h, routing);
                for (CudaBackend b : backends) {
                    long tiled = b.counters().get("moe_tiled_calls");
                    float[] got;
                    try (LoadedWeights wm = b.loadWeights(w)) {
                        got = OpRuns.moe(b, wm, 0, x, T, h, routing);
                    }
                    assertEquals(tiled, b.counters().get("moe_tiled_calls"), "T=" + T + " takes the decode kernels");
                    BackendConformanceKit.assertClose(
                            w.layers().get(0).gate().format() + " decode MoE, GOSS_CUDA_MOE_BLOCK="
                                    + b.knobs().get("GOSS_CUDA_MOE_BLOCK") + ", T=" + T,
                            want,
                            got,
                            T,
                            h,
                            TOL);
                }
            }
        }
    }
}
