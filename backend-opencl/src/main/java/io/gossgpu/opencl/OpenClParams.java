package io.gossgpu.opencl;

import io.gossgpu.device.KernelParams;

/**
 * The params structs of {@code kernels/opencl}, each mirroring the typedef of its name field for field (a kernel's
 * last argument, set by {@link OpenClLauncher}); the MoE kernels' one is {@link io.gossgpu.device.MoeParams}, the attention
 * kernels' {@link io.gossgpu.device.AttentionParams} and the small ops' {@link io.gossgpu.device.OpParams}, shared by every API.
 * OpenClKernelParamsTest checks them against the sources.
 */
final class OpenClParams {
    private OpenClParams() {}

    /** rope.cl. */
    record RopeParams(int cols, int hd, int start, int row0) implements KernelParams {}

    /** sample.cl: {@code sample_max}. */
    record SampleMaxParams(int row, int V, int C) implements KernelParams {}

    /** sample.cl: {@code sample_sums} (a double field: the sampling kernels exist only with cl_khr_fp64). */
    record SampleSumsParams(int row, int V, int C, double T) implements KernelParams {}

    /** sample.cl: {@code sample_pick}. */
    record SamplePickParams(int row, int V, int C, int G, double T, double u) implements KernelParams {}
}
