package io.gossgpu.debug;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;
import io.gossgpu.forward.OpKind;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testkit.DemoModels;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@code verify --backend cpu} on the demo model with the defaults: the int8 path is compared with the
 * reference on the same Q8_0 dense weights within its stated tolerance, and still names an op that is wrong by more.
 */
class VerifyPlanTest {
    private static final int[] TOKENS =
            new SplittableRandom(1).ints(24, 0, 201088).toArray(); // verify's default tokens

    @Test
    void theCpuDefaultPathAgreesWithinItsStatedToleranceAndAPlantedErrorIsNamed() {
        assumeTrue(
                NativeCpu.best() != KernelSet.Isa.JAVA,
                "this machine runs no native cpu kernel set: the cpu backend here is the float path");
        try (Checkpoint ck = Checkpoint.open(DemoModels.folder(), LoadOptions.defaults());
                Backend cpu = new CpuBackendProvider().create(BackendOptions.defaults());
                Backend ref = new ReferenceBackend()) {
            ModelWeights w = ModelWeights.of(ck);
            VerifyPlan plan = VerifyPlan.of(cpu, w, null);
            assertTrue(plan.path().contains("same Q8_0 dense weights"), plan.path());
            assertEquals(VerifyPlan.INT8_TOLERANCE, plan.tolerance());

            // the old check (float tolerance, the file's weights) fails on correct code: ATTN_OUT[layer 0], |diff|
            // 1.8e-5
            Verifier.Result old = Verifier.compare(w, w, cpu, ref, TOKENS, VerifyPlan.FLOAT_TOLERANCE, false);
            assertTrue(old.divergence().isPresent(), "the float tolerance was expected to fail on the int8 path");

            Verifier.Result r = Verifier.compare(
                    w, plan.referenceWeights(), cpu, ref, TOKENS, plan.tolerance(), plan.tiesMayFlip());
            assertTrue(r.divergence().isEmpty(), "" + r.divergence());
            assertTrue(
                    r.worst() > 1e-3, "largest difference " + r.worst() + ": the int8 rounding was expected to show");

            // planted: one ATTN_OUT value of layer 2 off by a fifth of its row's largest value
            Backend broken = new ForwardingBackend(cpu) {
                @Override
                public void dense(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
                    super.dense(lw, layer, which, x, out);
                    if (layer != 2 || which != DenseKind.ATTN_OUT) return;
                    float[] v = read(out);
                    for (int i = 0; i < out.rows(); i++) {
                        float max = 0;
                        for (int c = 0; c < out.cols(); c++) max = Math.max(max, Math.abs(v[i * out.cols() + c]));
                        v[i * out.cols() + 3] += 0.2f * max;
                    }
                    write(out, v);
                }
            };
            Verifier.Result bad = Verifier.compare(
                    w, plan.referenceWeights(), broken, ref, TOKENS, plan.tolerance(), plan.tiesMayFlip());
            assertTrue(bad.divergence().isPresent(), "a 20 % error in ATTN_OUT[layer 2] passed");
            assertEquals(OpKind.ATTN_OUT, bad.divergence().get().op().kind());
            assertEquals(2, bad.divergence().get().op().layer());
        }
    }

    /**
     * A split model whose CPU experts run on the native int8 kernels ({@code verify --n-cpu-moe N}): the int8 tolerance,
     * ties allowed to flip, and the demo model agrees within it; with the experts on the Java float kernels, the float one.
     */
    @Test
    void aSplitWithNativeCpuExpertsIsComparedAtTheInt8Tolerance() {
        assumeTrue(
                NativeCpu.best() != KernelSet.Isa.JAVA,
                "this machine runs no native cpu kernel set: the cpu backend here is the float path");
        try (Checkpoint ck = Checkpoint.open(DemoModels.folder(), LoadOptions.defaults());
                Backend ref = new ReferenceBackend();
                // the cpu backend's float kernels in the GPU's place (the reference loads no split model: it reads
                // ModelWeights itself)
                Backend split = new io.gossgpu.device.SplitBackend(
                        CpuBackendProvider.withKernels(KernelSet.Isa.JAVA).create(BackendOptions.defaults()),
                        new CpuBackendProvider().create(BackendOptions.defaults()),
                        n -> io.gossgpu.device.ExpertPlan.firstOnCpu(n, n / 2));
                Backend floatSplit = new io.gossgpu.device.SplitBackend(
                        CpuBackendProvider.withKernels(KernelSet.Isa.JAVA).create(BackendOptions.defaults()),
                        CpuBackendProvider.withKernels(KernelSet.Isa.JAVA).create(BackendOptions.defaults()),
                        io.gossgpu.device.ExpertPlan::allOnCpu)) {
            ModelWeights w = ModelWeights.of(ck);
            VerifyPlan plan = VerifyPlan.of(split, w, null);
            assertEquals(VerifyPlan.INT8_TOLERANCE, plan.tolerance());
            assertTrue(plan.tiesMayFlip());
            assertTrue(plan.path().contains("the CPU's experts on"), plan.path());
            Verifier.Result r = Verifier.compare(
                    w, plan.referenceWeights(), split, ref, TOKENS, plan.tolerance(), plan.tiesMayFlip());
            assertTrue(r.divergence().isEmpty(), "" + r.divergence());
            assertEquals(
                    VerifyPlan.FLOAT_TOLERANCE,
                    VerifyPlan.of(floatSplit, w, null).tolerance());
        }
    }
}
