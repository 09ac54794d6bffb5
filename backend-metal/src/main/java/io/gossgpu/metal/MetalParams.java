package io.gossgpu.metal;

import io.gossgpu.device.KernelParams;

/**
 * The params structs of {@code kernels/metal}, mirrored field for field (a kernel's {@code PARAMS(Struct, p, i)}
 * argument, passed with setBytes); the MoE kernels' one is {@link io.gossgpu.device.MoeParams}, shared by every API, and the small ops' ones are {@link io.gossgpu.device.OpParams}.
 * MetalParamsTest checks them against the sources.
 */
final class MetalParams {
    private MetalParams() {}

    record RopeParams(int T, int heads, int hd, int start, int cols) implements KernelParams {}

    record AttnParams(int T, int start, int heads, int hd, int group, int slots, int window, int qDim, int kvDim,
                      float scale) implements KernelParams {}

    record StoreParams(int T, int start, int slots, int kvDim, int first) implements KernelParams {}

}
