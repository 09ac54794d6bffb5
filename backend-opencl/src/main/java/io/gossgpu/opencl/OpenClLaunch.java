package io.gossgpu.opencl;

import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;

import static io.gossgpu.opencl.OpenCl.check;
import static org.lwjgl.opencl.CL10.*;

/** One kernel launch: its arguments set in order ({@code mem}, {@code i32}, … {@code local}), then {@link #run} enqueues it. */
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

    OpenClLaunch i32(int v) {
        check(clSetKernelArg1i(kernel, i++, v), name + " argument " + (i - 1));
        return this;
    }

    OpenClLaunch i64(long v) {
        check(clSetKernelArg1l(kernel, i++, v), name + " argument " + (i - 1));
        return this;
    }

    OpenClLaunch f32(float v) {
        check(clSetKernelArg1f(kernel, i++, v), name + " argument " + (i - 1));
        return this;
    }

    OpenClLaunch f64(double v) {
        check(clSetKernelArg1d(kernel, i++, v), name + " argument " + (i - 1));
        return this;
    }

    /** A {@code __local} buffer of {@code bytes}. */
    OpenClLaunch local(long bytes) {
        check(clSetKernelArg(kernel, i++, bytes), name + " local argument " + (i - 1));
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
