package io.gossgpu.conformance;

import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.QuantizedDense;
import io.gossgpu.model.ModelWeights;

/**
 * The conformance kit for the cpu backend's native integer kernels, whose MXFP4 and Q8_0 products multiply
 * activations quantized to int8 blocks of 32 ({@code backend-cpu/kernels/quantize_q8.c}), and which quantize float dense
 * weights to Q8_0 at load ({@code GOSS_CPU_DENSE=q8}, the default; the routers stay float). The reference runs the same
 * model with those weights replaced by their Q8_0 ({@link QuantizedDense}, the same bits as the tiles), so what is
 * compared is the arithmetic on the quantized weights. The kernels are exact for the quantized activations
 * (NativeKernelsTest checks them to 1e-5); these tolerances budget the activations' rounding:
 *
 * <ul>
 *   <li>{@link #moeTolerance()} and {@link #denseTolerance()} 5e-2 of the row's largest value: each activation moves
 *       by at most 1/254 of its block's largest magnitude, so a product moves by a few tenths of a percent of its row
 *       scale (measured worst on the kit's shapes: 0.8 %, an MoE row of the {@code odd} shape). A formula error is
 *       O(1).</li>
 *   <li>{@link #modelTolerance()} 1e-1 of the row's largest logit: the per-op errors of three layers add up, and
 *       with random weights the router can pick a different expert where two logits nearly tie. Measured worst:
 *       0.7 % with the dense weights in float ({@code GOSS_CPU_DENSE=float}, {@link CpuFloatDenseConformanceTest},
 *       which keeps 5e-2), 5.2 % with their activations rounded too (the {@code tiny} shape at position 21; rows
 *       of 96 values, so the rounding does not average out). Greedy decoding is checked token by token against the
 *       reference's logits, not for equal tokens ({@link #greedyExact()}).</li>
 *   <li>{@link #modelRmsBudget()} 5e-2 and {@link #modelTop1Budget()} 0.84: the bound on one logit allows the worst row,
 *       so the whole model is also held to about twice what was measured over all its logits (the {@code tiny} shape,
 *       26 positions): RMS error 2.7 % of the reference logits' RMS and argmax agreement 24 of 26 with the dense
 *       weights in Q8_0, 2.2 % and 26 of 26 in float. A planted 4.5 % scale error on every logit passes the 1e-1 bound
 *       (largest difference 8.2 %) and fails the RMS budget (5.3 %).</li>
 * </ul>
 * For comparison, the official reference computes with bf16 activations (8 mantissa bits per value).
 */
abstract class CpuNativeConformanceKit extends BackendConformanceKit {
    @Override
    protected double moeTolerance() {
        return 5e-2;
    }

    @Override
    protected double denseTolerance() {
        return 5e-2;
    }

    @Override
    protected double modelTolerance() {
        return 1e-1;
    }

    @Override
    protected double modelRmsBudget() {
        return 5e-2;
    }

    @Override
    protected double modelTop1Budget() {
        return 0.84;
    }

    /** Int8 activations move logits by percents: a near tie of two tokens may flip (checked against the reference's logits). */
    @Override
    protected boolean greedyExact() {
        return false;
    }

    /** The weights with those the backend quantizes (by its {@code GOSS_CPU_DENSE}; the rule is every native set's) in Q8_0. */
    @Override
    protected ModelWeights referenceWeights(ModelWeights w) {
        boolean q8 = CpuBackendProvider.DENSE.value(options()) == 0;
        return QuantizedDense.of(w, KernelSet.of(null, CpuKernels.best()).quantizingDense(q8));
    }
}
