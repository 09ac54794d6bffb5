package io.gossgpu.opencl;

import static io.gossgpu.opencl.OpenCl.check;
import static org.lwjgl.opencl.CL10.*;

import io.gossgpu.GossException;
import io.gossgpu.device.KernelSource;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;

/**
 * The OpenCL kernels (sources in the kernels-opencl module, {@code io/gossgpu/kernels/opencl/*.cl}: goss.cl and the files it
 * includes, inlined by {@link KernelSource}) built once for one device, and the kernels made from them, one
 * {@code cl_kernel} per name however often it is looked up (a launch sets all its arguments, which the enqueue captures),
 * released together.
 */
final class OpenClProgram implements AutoCloseable {
    private final OpenCl.DeviceInfo device;
    private final long program;
    /** Each name looked up so far: its kernel, or null when the program lacks it. */
    private final Map<String, OpenClKernel> kernels = new HashMap<>();

    /** Builds the sources for {@code device} with the compiler {@code options}; a one-line error with the build log when it fails. */
    OpenClProgram(long context, OpenCl.DeviceInfo device, String options) {
        this.device = device;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long prog = clCreateProgramWithSource(context, source(), rc);
            check(rc.get(0), "clCreateProgramWithSource");
            int b = clBuildProgram(prog, device.device(), options, null, 0);
            if (b != CL_SUCCESS) {
                String log = buildLog(prog, stack);
                clReleaseProgram(prog);
                throw new GossException("OpenCL kernels failed to build on " + device.name() + " ("
                        + OpenCl.errorName(b) + "): " + log);
            }
            program = prog;
        }
    }

    private String buildLog(long prog, MemoryStack stack) {
        PointerBuffer size = stack.mallocPointer(1);
        clGetProgramBuildInfo(prog, device.device(), CL_PROGRAM_BUILD_LOG, (ByteBuffer) null, size);
        ByteBuffer log = MemoryUtil.memAlloc((int) Math.max(1, size.get(0)));
        try {
            clGetProgramBuildInfo(prog, device.device(), CL_PROGRAM_BUILD_LOG, log, null);
            byte[] bytes = new byte[log.remaining()];
            log.get(bytes);
            return new String(bytes, StandardCharsets.UTF_8).trim();
        } finally {
            MemoryUtil.memFree(log);
        }
    }

    /** The program's source: goss.cl with its includes inlined. */
    static String source() {
        return KernelSource.inlined("opencl", "goss.cl");
    }

    /** The kernel {@code name}; an error when the program lacks it. */
    OpenClKernel kernel(String name) {
        OpenClKernel k = optionalKernel(name);
        if (k == null) throw new GossException("OpenCL kernel " + name + " is missing from the program");
        return k;
    }

    /** The kernel {@code name}, or null when the program lacks it (compiled only with an optional extension). */
    OpenClKernel optionalKernel(String name) {
        if (kernels.containsKey(name)) return kernels.get(name);
        OpenClKernel made = null;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long k = clCreateKernel(program, name, rc);
            if (rc.get(0) == CL_SUCCESS) {
                try {
                    made = new OpenClKernel(name, k, (int) Math.min(Integer.MAX_VALUE, workGroupLimit(k)));
                } catch (RuntimeException e) {
                    clReleaseKernel(k);
                    throw e;
                }
            }
        }
        kernels.put(name, made);
        return made;
    }

    /** How many {@code cl_kernel}s this program has made (one per name found). */
    int kernelsMade() {
        return (int)
                kernels.values().stream().filter(java.util.Objects::nonNull).count();
    }

    /** The largest work-group the kernel {@code handle} can run on this device (registers, local memory). */
    private long workGroupLimit(long handle) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer p = stack.mallocPointer(1);
            check(
                    clGetKernelWorkGroupInfo(handle, device.device(), CL_KERNEL_WORK_GROUP_SIZE, p, null),
                    "clGetKernelWorkGroupInfo");
            return p.get(0);
        }
    }

    /** A work-group above what {@code kernel} can run is the knob's error, not a launch failure. */
    void checkWorkGroup(OpenClKernel kernel, io.gossgpu.backend.Knob knob, int wg) {
        long max = kernel.maxThreads();
        if (wg > max)
            throw knob.invalid(
                    Integer.toString(wg),
                    (int) Math.min(max, 1 << 20),
                    "this kernel's work-group limit on " + device.name());
    }

    @Override
    public void close() {
        for (OpenClKernel k : kernels.values()) if (k != null) clReleaseKernel(k.handle());
        kernels.clear();
        clReleaseProgram(program);
    }
}
