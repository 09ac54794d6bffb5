package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Routing;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.OpRuns;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * moe.cu's tensor-core expert GEMMs (moe_gate_up_mma, moe_down_mma: MXFP4 weights as BF16 tiles, activations as two
 * BF16 terms, FP32 sums) against the FP32 kernels they replace (moe_gate_up_tiled, moe_down_tiled, chosen with
 * {@code GOSS_CUDA_MOE_MMA=0}), on one device: the whole MoE of every layer of tiny (hidden 96 and intermediate 160,
 * so a 64-column step and a 32-column tail; 6 experts, 4 per token) for T = 1 .. 130 tokens (work tiles of 1 to 32
 * slots, both 16-slot halves), in both MXFP4 layouts, with activations over a wide range of magnitudes (2^-8 .. 2^8
 * times a Gaussian), where a single BF16 term would be off by up to 2^-9 of each value.
 * <p>Tolerance: {@link #TOL} of each output row's largest value, half the kit's 1e-4. The split keeps about 16
 * mantissa bits of each activation (relative error at most 2^-16 ≈ 1.5e-5 per product, more relative to a row's
 * largest output where the terms cancel: with cut instead of rounded high terms, 2^-15, this test measured 2.4e-5);
 * with the low BF16 term left out, or a tile's k offset wrong, it fails (both planted in the kernel). The reference comparison of the default (mma) path is CudaPrefillTest's and the
 * conformance kit's; this test isolates the kernels' difference. Skipped like {@link CudaConformanceTest}.
 */
class CudaMoeMmaTest extends CudaAgainstReference {
    /** Of each output row's largest magnitude: the mma MoE against the FP32 one. */
    static final double TOL = 5e-5;

    private CudaBackend mma, exact;
    private Mxfp4Layouts layouts;

    @BeforeAll
    void setUp(@TempDir Path dir) {
        if (!available()) {
            return;
        }
        BackendOptions batched = BackendOptions.defaults().with(CudaKnobs.MOE_PREFILL_MIN_T, 1);
        mma = openCuda(batched);
        exact = openCuda(batched.with(CudaKnobs.MOE_MMA, 0));
        layouts = closeAfterAll(new Mxfp4Layouts(TestModelPresets.tiny(), 51, 52, dir));
    }

    /** On a real device below compute capability 8.0 there is nothing to compare (turingKeepsTheFp32Kernels covers it). */
    private void requireTensorCores() {
        assumeTrue(mma.moe.pipeline.mma(), "the device is below compute capability 8.0: no tensor-core MoE kernels");
    }

    @Test
    void theDeviceTakesTheMmaKernelsUnlessSwitchedOff() {
        requireTensorCores();
        assertEquals(1, mma.knobs().get("GOSS_CUDA_MOE_MMA"));
        assertEquals(0, exact.knobs().get("GOSS_CUDA_MOE_MMA"));
    }

    @ParameterizedTest(name = "T={0}")
    @ValueSource(ints = {1, 9, 33, 70, 130})
    void mmaMoeMatchesTheFp32Kernels(int T) {
        requireTensorCores();
        for (ModelWeights w : layouts.both()) {
            ModelConfig c = w.config();
            int k = c.expertsPerToken(), h = c.hiddenSize();
            SplittableRandom r = new SplittableRandom(700 + T);
            float[] x = new float[T * h];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) (r.nextGaussian() * Math.scalb(1.0, r.nextInt(-8, 9)));
            }
            long mmaBefore = mma.counters().get("moe_mma_calls"),
                    exactBefore = exact.counters().get("moe_tiled_calls");
            try (LoadedWeights wm = mma.loadWeights(w);
                    LoadedWeights we = exact.loadWeights(w);
                    LoadedWeights wr = reference.loadWeights(w)) {
                for (int layer = 0; layer < c.numHiddenLayers(); layer++) {
                    Routing routing = OpRuns.routing(reference, wr, layer, x, T, h, k);
                    float[] want = OpRuns.moe(exact, we, layer, x, T, h, routing);
                    float[] got = OpRuns.moe(mma, wm, layer, x, T, h, routing);
                    String what = w.layers().get(0).gate().format() + " mma vs FP32 MoE, layer " + layer + ", T=" + T;
                    BackendConformanceKit.assertClose(what, want, got, T, h, TOL);
                }
            }
            assertEquals(
                    c.numHiddenLayers(),
                    mma.counters().get("moe_mma_calls") - mmaBefore,
                    "the mma kernels ran in every layer");
            assertEquals(
                    c.numHiddenLayers(),
                    exact.counters().get("moe_tiled_calls") - exactBefore,
                    "the FP32 tiled kernels ran");
            assertEquals(0, exact.counters().get("moe_mma_calls"), "GOSS_CUDA_MOE_MMA=0 never takes the mma kernels");
        }
    }

    /** Below compute capability 8.0 (sm_75 PTX, where the mma kernels are stubs) the FP32 tiled kernels run, whatever the knob. */
    @Test
    void turingKeepsTheFp32Kernels() {
        assumeTrue(FakeCudaDriver.present(), FakeCudaDriver.NEEDED);
        FakeCudaDriver.configure(13000, 75);
        try (CudaBackend turing =
                (CudaBackend) provider.create(BackendOptions.defaults().with(CudaKnobs.MOE_PREFILL_MIN_T, 1))) {
            assertEquals(0, turing.knobs().get("GOSS_CUDA_MOE_MMA"));
            assertTrue(turing.deviceDescription().contains("sm_75"), turing.deviceDescription());
            ModelWeights openai = layouts.openai;
            ModelConfig c = openai.config();
            int T = 9;
            float[] x = OpRuns.gaussian(new SplittableRandom(5), T * c.hiddenSize());
            try (LoadedWeights wt = turing.loadWeights(openai);
                    LoadedWeights we = exact.loadWeights(openai);
                    LoadedWeights wr = reference.loadWeights(openai)) {
                Routing routing = OpRuns.routing(reference, wr, 0, x, T, c.hiddenSize(), c.expertsPerToken());
                float[] got = OpRuns.moe(turing, wt, 0, x, T, c.hiddenSize(), routing);
                float[] want = OpRuns.moe(exact, we, 0, x, T, c.hiddenSize(), routing);
                assertEquals(1, turing.counters().get("moe_tiled_calls"));
                assertEquals(0, turing.counters().get("moe_mma_calls"));
                BackendConformanceKit.assertClose("sm_75 MoE", want, got, T, c.hiddenSize(), 0.0);
            }
        } finally {
            FakeCudaDriver.configure(13000, 90);
        }
    }
}
