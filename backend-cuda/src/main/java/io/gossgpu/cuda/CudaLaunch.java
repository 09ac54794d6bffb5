package io.gossgpu.cuda;

import io.gossgpu.cuda.CudaKernel.Dim3;

/**
 * How the launchers put kernels on the stream: through the backend's {@link LaunchQueue} (which may record the step),
 * with one argument array refilled for every launch (the driver copies the values during the launch).
 */
final class CudaLaunch {
    private final LaunchQueue queue;
    private final KernelArgs args = new KernelArgs();

    CudaLaunch(LaunchQueue queue) {
        this.queue = queue;
    }

    /** The argument array, emptied. */
    KernelArgs args() {
        return args.clear();
    }

    /** {@code gx × gy} blocks ({@code gy} capped at 65535) of {@code block} threads; nothing for an empty grid. */
    void run(CudaKernel k, int gx, int gy, int block, int shared, KernelArgs a) {
        if (gx <= 0 || gy <= 0) return;
        queue.launch(k, Dim3.of(gx, Math.min(gy, 65535)), Dim3.of(block), shared, a);
    }

    /** A 3-D grid (every dimension at least 1). */
    void run(CudaKernel k, Dim3 grid, int block, int shared, KernelArgs a) {
        queue.launch(k, grid, Dim3.of(block), shared, a);
    }

    /**
     * Makes the position-dependent kernels launched next for the step's sequence {@code seq} read {@code start} from its
     * slot of the step buffer; returns that slot's device address (their kernel parameter {@code pos}).
     */
    long position(int seq, int start) {
        if (seq < 0 || seq >= queue.slots())
            throw new io.gossgpu.GossException("cuda: a step of more than " + queue.slots() + " sequences");
        queue.position(seq, start);
        return queue.stepAddress() + 4L * seq;
    }

    /** The step buffer's device address (the positions, then the sampling parameters). */
    long stepAddress() {
        return queue.stepAddress();
    }

    static int ceilDiv(long a, long b) {
        return Math.toIntExact((a + b - 1) / b);
    }

    /** A block size above what {@code k} can launch on this device (registers) is the knob's error, not a launch failure. */
    static void checkBlock(CudaKernel k, io.gossgpu.backend.Knob knob, int block) {
        int max = k.maxThreadsPerBlock();
        if (block > max) throw knob.invalid(Integer.toString(block), max, "kernel " + k.name() + "'s limit on this device");
    }
}
