package io.gossgpu.device;

import java.util.List;

/**
 * The params structs of the ops that every GPU API has beside the MoE and attention (embed, rmsnorm, dense, rope, add,
 * argmax, the router's topk_softmax), one record each, shared by all three: {@code struct NormParams} etc. are declared with these fields
 * in this order in backend-cuda/kernels, backend-opencl/kernels and backend-metal/kernels (KernelVocabularyTest compares the three folders,
 * each backend's params test its own against these records). A kernel may leave a field unread (said at its struct).
 */
public final class OpParams {
    private OpParams() {}

    /**
     * embed: {@code out[t, :]} = row {@code tokens[t]} of the table as F32.
     *
     * @param fmt the table's element format in the API's own numbering; unread on CUDA, whose embed_* entry points are
     *            one per format
     */
    public record EmbedParams(int tokens, int cols, int fmt) implements KernelParams {}

    /** rmsnorm: one group per row of {@code cols} values. */
    public record NormParams(int cols, float eps) implements KernelParams {}

    /**
     * RoPE: rows {@code row0 .. row0 + tokens − 1} of the query rows ({@code qHeads · headDim} values each) and of the
     * key rows ({@code kHeads · headDim}), the first at the position the kernel reads from its {@code pos} buffer
     * ({@link RopeOp}).
     */
    public record RopeParams(int tokens, int qHeads, int kHeads, int headDim, int row0) implements KernelParams {}

    /** add: {@code out = a + b} over {@code n} values. */
    public record AddParams(long n) implements KernelParams {}

    /** argmax: one group per row of {@code vocab} logits ({@code rows} read only where a group takes several rows). */
    public record ArgmaxParams(int rows, int vocab) implements KernelParams {}

    /** topk_softmax: the router's {@code k} largest of {@code experts} logits per token, softmax over them. */
    public record TopKParams(int tokens, int experts, int k) implements KernelParams {}

    /**
     * Every dense kernel (CUDA's dense_matvec_* and dense_gemm_*, OpenCL's dense, Metal's dense and dense_tiled):
     * {@code out[t, r] = Σ_c W[r, c] · x[xRow0 + t, c] (+ bias[r])}.
     *
     * @param fmt      the weights' format in the API's own numbering; unread on CUDA (entry points per format)
     * @param n0       CUDA: rows of the output going to out0, the next {@code n1} to out1, the rest to out2 (a fused
     *                 QKV); unread elsewhere
     * @param split    CUDA's matvec: warps per row; unread elsewhere
     * @param vec      OpenCL: 1 reads four columns per work item; unread elsewhere
     * @param rowBytes OpenCL: bytes per weight row; unread elsewhere
     */
    public record DenseParams(
            int fmt,
            int hasBias,
            int tokens,
            int cols,
            int rows,
            int xRow0,
            int n0,
            int n1,
            int split,
            int vec,
            long rowBytes)
            implements KernelParams {}

    /** Every record here: each API's kernels declare all of them. */
    public static final List<Class<? extends KernelParams>> ALL = List.of(
            EmbedParams.class,
            NormParams.class,
            RopeParams.class,
            AddParams.class,
            ArgmaxParams.class,
            TopKParams.class,
            DenseParams.class);
}
