package io.gossgpu.debug;

import io.gossgpu.backend.Backend;
import io.gossgpu.cpu.CpuBackend;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.QuantizedDense;
import io.gossgpu.device.SplitBackend;
import io.gossgpu.model.ModelWeights;

/**
 * What {@code goss-gpu verify} compares a backend with, and how closely: the reference on the weights the backend
 * really multiplies, and the tolerance the backend's arithmetic is stated to hold per op (relative to each reference
 * row's largest value).
 *
 * <p>Float backends (reference, the cpu backend's Java kernels, OpenCL, CUDA, Metal) compute in float32 on the file's
 * weights: 1e-4. The cpu backend's native kernels multiply int8-quantized activations, and quantize float dense
 * weights to Q8_0 at load unless {@code GOSS_CPU_DENSE=float}: the reference then runs those same Q8_0 weights
 * ({@link QuantizedDense}), so what is compared is the rounding of the activations, which the kernels' conformance kit
 * budgets ({@code CpuNativeConformanceKit}: 5e-2 per op, 1e-1 over a whole model). Verify watches every op of a whole
 * forward pass, so a later layer's op carries the earlier layers' rounding too; {@link #INT8_TOLERANCE} is about twice
 * the largest difference measured over every op of the demo model's 24 verify positions (4.0e-2 with Q8_0 dense
 * weights, 5.9e-2 with {@code GOSS_CPU_DENSE=float}, both at layer 1's attention, whose softmax sharpens the
 * rounding). The rounding may also flip the router's choice between two experts whose scores nearly tie
 * ({@link #tiesMayFlip}); verify then stops there and says so.
 */
public record VerifyPlan(String path, ModelWeights referenceWeights, double tolerance, boolean tiesMayFlip) {
    public static final double FLOAT_TOLERANCE = 1e-4;
    public static final double INT8_TOLERANCE = 1e-1;

    /** The plan for {@code backend} on {@code weights}; {@code tolerance} overrides the stated one when not null. */
    public static VerifyPlan of(Backend backend, ModelWeights weights, Double tolerance) {
        if (backend instanceof CpuBackend cpu && cpu.kernels().isa() != KernelSet.Isa.JAVA) {
            KernelSet k = cpu.kernels();
            String path = k.describe()
                    + (k.quantizesDense() ? "; compared with the reference on the same Q8_0 dense weights" : "");
            return new VerifyPlan(
                    path,
                    k.quantizesDense() ? QuantizedDense.of(weights, k) : weights,
                    tolerance != null ? tolerance : INT8_TOLERANCE,
                    true);
        }
        if (backend instanceof SplitBackend split
                && split.cpuBackend() instanceof CpuBackend cpu
                && cpu.kernels().isa() != KernelSet.Isa.JAVA)
            // the GPU's ops in float32 on the file's weights, the CPU layers' experts on int8-quantized activations
            return new VerifyPlan(
                    backend.deviceDescription() + " (float32; the CPU's experts on "
                            + cpu.kernels().describe() + ")",
                    weights,
                    tolerance != null ? tolerance : INT8_TOLERANCE,
                    true);
        return new VerifyPlan(
                backend.deviceDescription() + " (float32)",
                weights,
                tolerance != null ? tolerance : FLOAT_TOLERANCE,
                false);
    }
}
