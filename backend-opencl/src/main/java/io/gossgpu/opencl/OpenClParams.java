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
}
