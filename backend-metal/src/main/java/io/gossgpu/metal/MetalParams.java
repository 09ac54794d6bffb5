package io.gossgpu.metal;

import io.gossgpu.device.KernelParams;

/**
 * The params structs of {@code kernels/metal}, mirrored field for field (a kernel's {@code PARAMS(Struct, p, i)}
 * argument, passed with setBytes); the MoE kernels' one is {@link io.gossgpu.device.MoeParams}, the attention kernels'
 * {@link io.gossgpu.device.AttentionParams} and the small ops' {@link io.gossgpu.device.OpParams}, shared by every API.
 * MetalParamsTest checks them against the sources.
 */
final class MetalParams {
    private MetalParams() {}

    record RopeParams(int T, int heads, int hd, int start, int cols) implements KernelParams {}
}
