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
 * @param slotsPerPass moe_down on CUDA: slots whose activations its shared memory holds at once; 0 where unused
 */
public record MoeParams(int ggml, int tokens, int k, int hidden, int inter, int experts, float limit, int slotsPerPass)
        implements KernelParams {

    /** T·K (token, slot) pairs. */
    public int slots() {
        return tokens * k;
    }
}
