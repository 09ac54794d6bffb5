package io.gossgpu.metal;

import io.gossgpu.device.KernelParams;

/**
 * The params structs of {@code kernels/metal}, mirrored field for field (a kernel's {@code PARAMS(Struct, p, i)}
 * argument, passed with setBytes); the MoE kernels' one is {@link io.gossgpu.device.MoeParams} and the attention kernels'
 * {@link io.gossgpu.device.AttentionParams}, shared by every API.
 * MetalParamsTest checks them against the sources.
 */
final class MetalParams {
    private MetalParams() {}

    record EmbedParams(int H, int fmt) implements KernelParams {}

    record NormParams(int n, float eps) implements KernelParams {}

    /** {@code xStride}/{@code outStride}: floats between a token's rows of x and of out. */
    record LinearParams(int rows, int cols, int T, int fmt, int hasBias, int xStride, int outStride) implements KernelParams {}

    record RopeParams(int T, int heads, int hd, int start, int cols) implements KernelParams {}

    record TopkParams(int T, int E, int k) implements KernelParams {}


    record AddParams(int n) implements KernelParams {}

    record ArgmaxParams(int n) implements KernelParams {}
}
