package io.gossgpu.device;

/**
 * The one params struct of every MoE kernel ({@link MoePipeline}: moe_gate_up, moe_down, moe_sort, moe_gate_up_tiled,
 * moe_down_tiled, moe_combine), declared as {@code struct MoeParams} in backend-cuda/kernels/moe.cu, backend-opencl/kernels/moe.cl and
 * backend-metal/kernels/moe.metal with these fields in this order (MoeKernelContractTest checks all three). The experts'
 * MXFP4 weights are in OpenAI's layout, codes and scales apart, on every API ({@link Mxfp4Repack} repacks GGUF's).
 *
 * @param tokens  T, the batch's tokens
 * @param k       experts per token (slots per token)
 * @param hidden  H
 * @param inter   I, the experts' intermediate size
 * @param experts E, experts per layer
 * @param limit   the SwiGLU clamp
 */
public record MoeParams(int tokens, int k, int hidden, int inter, int experts, float limit) implements KernelParams {

    /** T·K (token, slot) pairs. */
    public int slots() {
        return tokens * k;
    }
}
