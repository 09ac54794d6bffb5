package io.gossgpu.opencl;

import static io.gossgpu.opencl.OpenCl.check;
import static org.lwjgl.opencl.CL10.*;

import io.gossgpu.GossException;
import io.gossgpu.device.DeviceKernel;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelLaunch;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.Launcher;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;

/**
 * The OpenCL {@link Launcher}: kernels of the built {@link OpenClProgram}, their arguments set with
 * {@code clSetKernelArg} in the kernel's order (a {@code cl_mem} per buffer, a {@code __local} size per
 * {@link KernelLaunch#local}, then the params struct's bytes) and enqueued with {@code clEnqueueNDRangeKernel} on the
 * one in-order queue: global size groups × threads per dimension, local size the grid's threads (none for an
 * {@link Grid#items} grid: the driver's choice). One launch object, reused: not thread-safe.
 */
final class OpenClLauncher implements Launcher<Long> {
    private final OpenClProgram program;
    private final long queue;
    private final Launch launch = new Launch();

    OpenClLauncher(OpenClProgram program, long queue) {
        this.program = program;
        this.queue = queue;
    }

    @Override
    public OpenClKernel kernel(String name) {
        return program.kernel(name);
    }

    @Override
    public KernelLaunch<Long> launch(DeviceKernel kernel) {
        return launch.start((OpenClKernel) kernel);
    }

    private final class Launch implements KernelLaunch<Long> {
        private long kernel;
        private String name;
        private int i;

        Launch start(OpenClKernel k) {
            kernel = k.handle();
            name = k.name();
            i = 0;
            return this;
        }

        @Override
        public Launch buffer(Long mem, long offset) {
            if (offset != 0)
                throw new GossException(
                        "OpenCL kernel " + name + ": a buffer bound at an offset (pass a row index instead)");
            check(clSetKernelArg1p(kernel, i++, mem), name + " argument " + (i - 1));
            return this;
        }

        @Override
        public Launch local(long bytes) {
            check(clSetKernelArg(kernel, i++, bytes), name + " local argument " + (i - 1));
            return this;
        }

        /**
         * The params struct's bytes in C layout ({@link KernelParams#writeTo}), which {@code clSetKernelArg} copies,
         * so they live on LWJGL's thread-local stack only for this call; then the enqueue.
         */
        @Override
        public void run(KernelParams p, Grid grid) {
            try (MemoryStack stack = MemoryStack.stackPush()) {
                ByteBuffer bytes = stack.malloc(8, (int) p.byteSize());
                p.writeTo(MemorySegment.ofBuffer(bytes));
                int rc = clSetKernelArg(kernel, i++, bytes);
                if (rc != CL_SUCCESS)
                    check(rc, name + " params argument " + (i - 1) + " (" + p + ", " + bytes.remaining() + " bytes)");
                if (grid.empty()) return;
                int dims = grid.dimensions();
                long t = grid.threads();
                PointerBuffer gb = stack.mallocPointer(dims), lb = null;
                gb.put(0, grid.apiGroups() ? grid.x() : grid.x() * t);
                if (dims > 1) gb.put(1, grid.y());
                if (dims > 2) gb.put(2, grid.z());
                if (!grid.apiGroups()) {
                    lb = stack.mallocPointer(dims);
                    for (int d = 0; d < dims; d++) lb.put(d, d == 0 ? t : 1);
                }
                check(clEnqueueNDRangeKernel(queue, kernel, dims, null, gb, lb, null, null), "launch of " + name);
            }
        }
    }
}
