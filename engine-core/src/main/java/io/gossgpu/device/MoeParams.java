package io.gossgpu.device;

/**
 * The one params struct of every MoE kernel ({@link MoePipeline}: moe_gate_up, moe_down, moe_sort, moe_gate_up_tiled,
 * moe_down_tiled, moe_combine), declared as {@code struct MoeParams} in kernels/cuda/moe.cu, kernels/opencl/moe.cl and
 * kernels/metal/moe.metal with these fields in this order (MoeKernelContractTest checks all three).
 *
 * @param ggml         1: the MXFP4 weights are in ggml's 17-byte block layout (0: OpenAI's codes + scales)
 * @param tokens       T, the batch's tokens
 * @param k            experts per token (slots per token)
 * @param hidden       H
 * @param inter        I, the experts' intermediate size
 * @param experts      E, experts per layer
 * @param limit        the SwiGLU clamp
 * @param slotsPerPass read by no kernel now (CUDA's moe_down held this many slots' activations in shared memory
 *                     before it kept them in registers); the cuda backend passes K, the others 0
 */
public record MoeParams(int ggml, int tokens, int k, int hidden, int inter, int experts, float limit, int slotsPerPass)
        implements KernelParams {

    /** T·K (token, slot) pairs. */
    public int slots() {
        return tokens * k;
    }
}
