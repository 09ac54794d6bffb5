package io.gossgpu.device;

/**
 * One kernel launch being set up, in the order every kernel of kernels/ takes its arguments: its buffers
 * ({@link #buffer}, the kernel's first parameters in order), then its dynamic group memory where the API needs it
 * passed ({@link #local}), then its one params struct and the grid ({@link #run}). Made by {@link Launcher#launch};
 * a launch is not kept after {@code run}.
 *
 * @param <B> the handle a kernel's buffer argument takes on this API (a CUDA device address, a {@code cl_mem}, an
 *            {@code MTLBuffer})
 */
public interface KernelLaunch<B> {
    /** The next buffer argument, from its start. */
    default KernelLaunch<B> buffer(B buffer) {
        return buffer(buffer, 0);
    }

    /**
     * The next buffer argument from byte {@code offset} on. An API that cannot bind part of a buffer (OpenCL 1.2
     * without sub-buffers: its kernels take a row index in their params instead) refuses a nonzero offset.
     */
    KernelLaunch<B> buffer(B buffer, long offset);

    /**
     * Dynamic group memory of {@code bytes}: on OpenCL the next {@code __local} argument, on CUDA added to the
     * launch's dynamic shared memory, on Metal the threadgroup memory at the next threadgroup index.
     */
    KernelLaunch<B> local(long bytes);

    /** Sets the params struct (the kernel's last argument) and launches on {@code grid}; nothing for an empty grid. */
    void run(KernelParams params, Grid grid);
}
