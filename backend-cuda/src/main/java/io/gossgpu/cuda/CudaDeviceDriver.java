package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.cuda.bindings.CudaException;
import io.gossgpu.device.DeviceDriver;

import java.lang.foreign.MemorySegment;

/**
 * The CUDA device under the device layer: buffers of one primary context, copies on its one stream. Launches go
 * through the {@link LaunchQueue}, which may be recording a step: anything that waits for the stream (a copy, a free)
 * first launches what is recorded ({@link LaunchQueue#flush}); {@link #submit} runs a recorded step as one graph.
 */
final class CudaDeviceDriver implements DeviceDriver<CudaBuffer> {
    private final CudaContext ctx;
    private final CudaStream stream;
    private final LaunchQueue queue;

    CudaDeviceDriver(CudaContext ctx, LaunchQueue queue) {
        this.ctx = ctx;
        this.stream = ctx.stream();
        this.queue = queue;
    }

    @Override
    public CudaBuffer allocate(long bytes, String what) {
        long n = Math.max(4, bytes);
        try {
            return ctx.allocate(n);
        } catch (CudaException e) {
            throw new GossException(what + ": allocating " + KvCacheSpec.humanBytes(n) + " on " + ctx.device().name()
                    + " failed (" + KvCacheSpec.humanBytes(freeBytes()) + " free): " + e.getMessage(), e);
        }
    }

    /** After the stream got past every launch that may use it. */
    @Override
    public void release(CudaBuffer b) {
        synchronize();
        b.close();
    }

    /** On the stream: ordered before any later launch (a buffer just allocated is used by none before). */
    @Override
    public void zero(CudaBuffer b, long bytes) {
        b.zero();
    }

    @Override
    public void write(CudaBuffer dst, long offset, MemorySegment src) {
        queue.flush();
        dst.copyFrom(src, offset);
    }

    @Override
    public void read(CudaBuffer src, long offset, MemorySegment dst) {
        queue.flush();
        src.copyTo(offset, dst);
    }

    /** A recorded decode step runs now, as one CUDA graph. */
    @Override
    public void submit() {
        queue.endStep();
    }

    /** Launches whatever a step recorded, then waits for the stream. */
    @Override
    public void synchronize() {
        queue.flush();
        stream.synchronize();
    }

    @Override
    public long freeBytes() {
        return ctx.memoryInfo()[0];
    }

    @Override
    public String deviceName() {
        return ctx.device().name();
    }
}
