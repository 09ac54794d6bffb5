package io.gossgpu.device;

/**
 * A kernel of a device's program, looked up by its name ({@link Launcher#kernel}): the same name in backend-cuda/kernels,
 * backend-opencl/kernels and backend-metal/kernels (backend-cuda/kernels/README.md). Each API's driver has its own handle behind it.
 */
public interface DeviceKernel {
    /** The kernel's name in the sources (what errors name). */
    String name();

    /** The most threads per group this kernel can run on the device (registers, group memory). */
    int maxThreads();
}
