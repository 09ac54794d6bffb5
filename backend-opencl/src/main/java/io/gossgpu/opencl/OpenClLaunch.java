package io.gossgpu.opencl;

import io.gossgpu.device.KernelParams;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import static io.gossgpu.opencl.OpenCl.check;
import static org.lwjgl.opencl.CL10.*;

/**
 * One kernel launch: its arguments set in the kernel's order, buffers first ({@code mem} for {@code __global},
 * {@code local} for {@code __local}), then its params struct ({@link #params}), then {@link #run} enqueues it.
 */
final class OpenClLaunch {
    private final long queue, kernel;
    private final String name;
    private int i;

    OpenClLaunch(long queue, long kernel, String name) {
        this.queue = queue;
        this.kernel = kernel;
        this.name = name;
    }

    OpenClLaunch mem(long m) {
        check(clSetKernelArg1p(kernel, i++, m), name + " argument " + (i - 1));
        return this;
    }

    /** A {@code __local} buffer of {@code bytes}. */
    OpenClLaunch local(long bytes) {
        check(clSetKernelArg(kernel, i++, bytes), name + " local argument " + (i - 1));
        return this;
    }

    /**
     * The kernel's params struct, its last argument: the record's bytes in C layout ({@link KernelParams#writeTo}),
     * which {@code clSetKernelArg} copies, so they live on LWJGL's thread-local stack only for this call.
     */
    OpenClLaunch params(KernelParams p) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            ByteBuffer bytes = stack.malloc(8, (int) p.byteSize());
            p.writeTo(MemorySegment.ofBuffer(bytes));
            int rc = clSetKernelArg(kernel, i++, bytes);
            if (rc != CL_SUCCESS) check(rc, name + " params argument " + (i - 1) + " (" + p + ", " + bytes.remaining() + " bytes)");
        }
        return this;
    }

    /** Global and local sizes per dimension; {@code local} null lets the driver choose. Nothing when a global size is 0. */
    void run(long[] global, long[] local) {
        for (long g : global) if (g == 0) return;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer gb = stack.mallocPointer(global.length);
            for (long g : global) gb.put(g);
            gb.flip();
            PointerBuffer lb = null;
            if (local != null) {
                lb = stack.mallocPointer(local.length);
                for (long l : local) lb.put(l);
                lb.flip();
            }
            check(clEnqueueNDRangeKernel(queue, kernel, global.length, null, gb, lb, null, null), "launch of " + name);
        }
    }
}
