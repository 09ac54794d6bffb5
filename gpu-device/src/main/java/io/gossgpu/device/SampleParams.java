package io.gossgpu.device;

/**
 * The params struct of the sampling kernels ({@code struct SampleParams} in backend-cuda/kernels/sample.cu and
 * backend-opencl/kernels/sample.cl, the same fields in this order), run by {@link SamplePipeline}.
 *
 * @param row    the row of the logits buffer sampled
 * @param vocab  ids per row
 * @param chunk  ids per chunk: {@code ⌈vocab / chunks⌉}
 * @param chunks chunks, one group each in sample_max and sample_sums
 * @param draw   which pair of the draws buffer holds this row's temperature and draw (unread by sample_max)
 */
public record SampleParams(int row, int vocab, int chunk, int chunks, int draw) implements KernelParams {}
