package io.gossgpu.opencl;

import io.gossgpu.device.KernelParams;

/**
 * The params structs of {@code kernels/opencl}, each mirroring the typedef of its name field for field (a kernel's
 * last argument, set by {@link OpenClLauncher}); the MoE kernels' one is {@link io.gossgpu.device.MoeParams}, shared
 * by every API, and the small ops' ones are {@link io.gossgpu.device.OpParams}. OpenClKernelParamsTest checks them against the sources.
 */
final class OpenClParams {
    private OpenClParams() {}

    /** rope.cl. */
    record RopeParams(int cols, int hd, int start, int row0) implements KernelParams {}

    /** attention.cl: {@code attention}. */
    record AttnParams(int start, int row0, int heads, int group, int hd, int kvDim, int slots, int window, float scale)
            implements KernelParams {}

    /** attention.cl: {@code attention_split} and {@code attention_gqa} (the same scalars). */
    record SplitAttnParams(int start, int row0, int heads, int group, int hd, int kvDim, int slots, int window, float scale,
                           int nsplit, int splitLen) implements KernelParams {}

    /** attention.cl: {@code attention_combine}. */
    record CombineParams(int heads, int hd, int nsplit, int row0) implements KernelParams {}

    /** attention.cl: {@code kv_store}. */
    record StoreParams(int start, int row0, int slots, int kvDim, int first) implements KernelParams {}

    /** sample.cl: {@code sample_max}. */
    record SampleMaxParams(int row, int V, int C) implements KernelParams {}

    /** sample.cl: {@code sample_sums} (a double field: the sampling kernels exist only with cl_khr_fp64). */
    record SampleSumsParams(int row, int V, int C, double T) implements KernelParams {}

    /** sample.cl: {@code sample_pick}. */
    record SamplePickParams(int row, int V, int C, int G, double T, double u) implements KernelParams {}
}
