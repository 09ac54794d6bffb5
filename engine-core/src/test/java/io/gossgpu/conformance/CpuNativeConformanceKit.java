package io.gossgpu.conformance;

/**
 * The conformance kit for the cpu backend's native integer kernels, whose MXFP4 and Q8_0 products multiply
 * activations quantized to int8 blocks of 32 ({@code kernels/cpu/quantize_q8.c}). Their kernels are exact for
 * the quantized activations (NativeKernelsTest checks them to 1e-5); these tolerances budget the quantization:
 *
 * <ul>
 *   <li>{@link #opTolerance()} 2e-2 of the row's largest value: each activation moves by at most 1/254 of its
 *       block's largest magnitude, so a product moves by a few tenths of a percent of its row scale (measured
 *       worst on the kit's shapes: 0.8 %, an MoE row of the {@code odd} shape). A formula error is O(1).</li>
 *   <li>{@link #modelTolerance()} 5e-2 of the row's largest logit: the per-op errors of three layers add up
 *       (measured worst 0.7 %), and with random weights the router can pick a different expert where two
 *       logits nearly tie.</li>
 * </ul>
 * For comparison, the official reference computes with bf16 activations (8 mantissa bits per value).
 */
abstract class CpuNativeConformanceKit extends BackendConformanceKit {
    @Override
    protected double moeTolerance() {
        return 5e-2;
    }

    @Override
    protected double modelTolerance() {
        return 5e-2;
    }
}
