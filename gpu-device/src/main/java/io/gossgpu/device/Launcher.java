package io.gossgpu.device;

/**
 * How the device layer launches kernels, the same on every API: a kernel looked up by name, then a
 * {@link KernelLaunch} of its buffers, group memory, params struct and {@link Grid}. Each API's driver implements it
 * (CUDA through its launch queue, which may record a step for a CUDA graph; OpenCL with clEnqueueNDRangeKernel;
 * Metal into the pending command buffer's compute encoder); launches run in the order they are made.
 *
 * @param <B> the handle a kernel's buffer argument takes on this API
 */
public interface Launcher<B> {
    /** The kernel {@code name} of the device's program; a {@link io.gossgpu.GossException} naming it when there is none. */
    DeviceKernel kernel(String name);

    /** Starts a launch of {@code kernel} (a kernel of this launcher's {@link #kernel}). */
    KernelLaunch<B> launch(DeviceKernel kernel);
}
