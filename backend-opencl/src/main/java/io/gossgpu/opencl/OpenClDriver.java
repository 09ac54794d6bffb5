package io.gossgpu.opencl;

import static io.gossgpu.opencl.OpenCl.check;
import static org.lwjgl.opencl.CL10.*;
import static org.lwjgl.opencl.CL12.clEnqueueFillBuffer;

import io.gossgpu.GossException;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.device.DeviceDriver;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.util.HashMap;
import java.util.Map;
import org.lwjgl.system.MemoryStack;

/**
 * The OpenCL device under the device layer: {@code cl_mem} buffers (handles as {@code long}) of one context, copies
 * on one in-order queue, and the memory accounting the checks need (OpenCL reports no free memory: this counts what
 * it allocated against the device's global memory and refuses a buffer above its largest allocation).
 */
final class OpenClDriver implements DeviceDriver<Long> {
    private final long context, queue;
    private final OpenCl.DeviceInfo device;
    private final Map<Long, Long> sizes = new HashMap<>();
    private long allocated;

    OpenClDriver(long context, long queue, OpenCl.DeviceInfo device) {
        this.context = context;
        this.queue = queue;
        this.device = device;
    }

    long context() {
        return context;
    }

    long queue() {
        return queue;
    }

    OpenCl.DeviceInfo device() {
        return device;
    }

    @Override
    public Long allocate(long bytes, String what) {
        long n = Math.max(4, bytes);
        if (n > device.maxAllocBytes())
            throw new GossException(what + " needs " + KvCacheSpec.humanBytes(n) + " in one buffer, more than "
                    + device.name() + " allows (" + KvCacheSpec.humanBytes(device.maxAllocBytes()) + ")");
        if (allocated + n > device.globalMemBytes())
            throw new GossException(what + " needs " + KvCacheSpec.humanBytes(n) + " but only "
                    + KvCacheSpec.humanBytes(Math.max(0, device.globalMemBytes() - allocated)) + " of "
                    + device.name() + "'s " + KvCacheSpec.humanBytes(device.globalMemBytes()) + " are free");
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long mem = clCreateBuffer(context, CL_MEM_READ_WRITE, n, rc);
            if (rc.get(0) != CL_SUCCESS)
                throw new GossException(what + ": allocating " + KvCacheSpec.humanBytes(n) + " on " + device.name()
                        + " failed: " + OpenCl.errorName(rc.get(0)));
            allocated += n;
            sizes.put(mem, n);
            return mem;
        }
    }

    /** OpenCL frees a released buffer once the queued commands that use it are done: nothing to wait for. */
    @Override
    public void release(Long mem) {
        Long n = sizes.remove(mem);
        if (n == null) return;
        clReleaseMemObject(mem);
        allocated -= n;
    }

    /** clEnqueueFillBuffer of a 4-byte zero, or of a 1-byte one where {@code bytes} is no multiple of 4 (a Q8_0 cache). */
    @Override
    public void zero(Long mem, long bytes) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            ByteBuffer pattern = stack.calloc(bytes % 4 == 0 ? 4 : 1);
            check(clEnqueueFillBuffer(queue, mem, pattern, 0, bytes, null, null), "clEnqueueFillBuffer");
        }
    }

    /**
     * clEnqueueFillBuffer of the 4 bytes: it copies its pattern when called, so nothing waits and no host memory has to
     * outlive the call (the kernels' position before each sequence, the sampling draws).
     */
    @Override
    public void writeWord(Long mem, long offset, int value) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            ByteBuffer pattern =
                    stack.malloc(4).order(java.nio.ByteOrder.nativeOrder()).putInt(0, value);
            check(clEnqueueFillBuffer(queue, mem, pattern, offset, 4, null, null), "clEnqueueFillBuffer");
        }
    }

    /** A blocking write: whole float/int arrays directly, native memory in pieces below 2 GiB, anything else through a native copy. */
    @Override
    public void write(Long dst, long offset, MemorySegment src) {
        Object array = src.heapBase().orElse(null);
        if (array instanceof float[] f && src.byteSize() == 4L * f.length) {
            check(clEnqueueWriteBuffer(queue, dst, true, offset, f, null, null), "clEnqueueWriteBuffer");
        } else if (array instanceof int[] i && src.byteSize() == 4L * i.length) {
            check(clEnqueueWriteBuffer(queue, dst, true, offset, i, null, null), "clEnqueueWriteBuffer");
        } else if (src.isNative()) {
            for (long off = 0; off < src.byteSize(); off += 1L << 30) {
                ByteBuffer bb = src.asSlice(off, Math.min(1L << 30, src.byteSize() - off))
                        .asByteBuffer();
                check(clEnqueueWriteBuffer(queue, dst, true, offset + off, bb, null, null), "clEnqueueWriteBuffer");
            }
        } else {
            try (Arena arena = Arena.ofConfined()) {
                write(dst, offset, arena.allocate(src.byteSize(), 64).copyFrom(src));
            }
        }
    }

    @Override
    public void read(Long src, long offset, MemorySegment dst) {
        Object array = dst.heapBase().orElse(null);
        if (array instanceof float[] f && dst.byteSize() == 4L * f.length) {
            check(clEnqueueReadBuffer(queue, src, true, offset, f, null, null), "clEnqueueReadBuffer");
        } else if (array instanceof int[] i && dst.byteSize() == 4L * i.length) {
            check(clEnqueueReadBuffer(queue, src, true, offset, i, null, null), "clEnqueueReadBuffer");
        } else if (dst.isNative()) {
            for (long off = 0; off < dst.byteSize(); off += 1L << 30) {
                ByteBuffer bb = dst.asSlice(off, Math.min(1L << 30, dst.byteSize() - off))
                        .asByteBuffer();
                check(clEnqueueReadBuffer(queue, src, true, offset + off, bb, null, null), "clEnqueueReadBuffer");
            }
        } else {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment staging = arena.allocate(dst.byteSize(), 64);
                read(src, offset, staging);
                dst.copyFrom(staging);
            }
        }
    }

    /**
     * A {@code CL_MEM_ALLOC_HOST_PTR} buffer mapped once for the host: page-locked where the driver pins such memory
     * (NVIDIA's does), so the crossings' copies from and to it are DMA; unmapped and released when {@code arena} closes.
     * Host memory, not counted against the device's.
     */
    @Override
    public MemorySegment allocateHost(long bytes, Arena arena) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, rc);
            check(rc.get(0), "clCreateBuffer (host staging)");
            ByteBuffer mapped =
                    clEnqueueMapBuffer(queue, mem, true, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, null, null, rc, null);
            if (rc.get(0) != CL_SUCCESS || mapped == null) {
                clReleaseMemObject(mem);
                check(rc.get(0) != CL_SUCCESS ? rc.get(0) : CL_MAP_FAILURE, "clEnqueueMapBuffer (host staging)");
            }
            return MemorySegment.ofAddress(org.lwjgl.system.MemoryUtil.memAddress(mapped))
                    .reinterpret(bytes, arena, s -> {
                        clEnqueueUnmapMemObject(queue, mem, mapped, null, null);
                        clFinish(queue);
                        clReleaseMemObject(mem);
                    });
        }
    }

    /** A non-blocking read on the in-order queue ({@link #awaitCopies} waits for it). */
    @Override
    public void readQueued(Long src, long offset, MemorySegment dst) {
        if (!dst.isNative() || dst.byteSize() > 1L << 30) {
            read(src, offset, dst);
            return;
        }
        check(clEnqueueReadBuffer(queue, src, false, offset, dst.asByteBuffer(), null, null), "clEnqueueReadBuffer");
    }

    /** A non-blocking write on the in-order queue: the kernels enqueued next run after it. */
    @Override
    public void writeQueued(Long dst, long offset, MemorySegment src) {
        if (!src.isNative() || src.byteSize() > 1L << 30) {
            write(dst, offset, src);
            return;
        }
        check(clEnqueueWriteBuffer(queue, dst, false, offset, src.asByteBuffer(), null, null), "clEnqueueWriteBuffer");
    }

    @Override
    public void awaitCopies() {
        check(clFinish(queue), "clFinish");
    }

    @Override
    public void synchronize() {
        check(clFinish(queue), "clFinish");
    }

    @Override
    public long freeBytes() {
        return device.globalMemBytes() - allocated;
    }

    @Override
    public String deviceName() {
        return device.name();
    }
}
