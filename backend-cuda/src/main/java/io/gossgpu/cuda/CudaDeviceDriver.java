package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.cuda.bindings.CudaException;
import io.gossgpu.device.DeviceDriver;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The CUDA device under the device layer: buffers of one primary context, copies on its one stream. Launches go
 * through the {@link LaunchQueue}, which may be recording a step: anything that waits for the stream (a copy, a free)
 * first launches what is recorded ({@link LaunchQueue#flush}); {@link #submit} runs a recorded step as one graph. The
 * queued copies of a host crossing ({@link #readQueued}, {@link #writeQueued}) end only the step's current segment
 * ({@link LaunchQueue#endSegment}) and go on the stream from pinned memory ({@link #allocateHost}).
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
            throw new GossException(
                    what + ": allocating " + KvCacheSpec.humanBytes(n) + " on "
                            + ctx.device().name() + " failed (" + KvCacheSpec.humanBytes(freeBytes()) + " free): "
                            + e.getMessage(),
                    e);
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

    /**
     * A memset on the stream, nothing flushed: in a recorded step it runs ahead of the step's recorded launches, which
     * read the value when the step's graph runs (a sampling draw, as the positions of {@link LaunchQueue}).
     */
    @Override
    public void writeWord(CudaBuffer dst, long offset, int value) {
        dst.set32(offset, value);
    }

    @Override
    public void read(CudaBuffer src, long offset, MemorySegment dst) {
        queue.flush();
        src.copyTo(offset, dst);
    }

    /** Page-locked ({@code cuMemHostAlloc}), freed ({@code cuMemFreeHost}) when {@code arena} closes. */
    @Override
    public MemorySegment allocateHost(long bytes, Arena arena) {
        CudaHostBuffer pinned = new CudaHostBuffer(ctx, bytes);
        return pinned.segment().reinterpret(bytes, arena, s -> pinned.close());
    }

    /** Behind the recorded launches so far, run as one graph; the step goes on recording. */
    @Override
    public void readQueued(CudaBuffer src, long offset, MemorySegment dst) {
        if (!dst.isNative()) {
            read(src, offset, dst);
            return;
        }
        queue.endSegment();
        src.copyToAsync(offset, dst, stream);
    }

    /** Ahead of the launches recorded next; the step goes on recording. */
    @Override
    public void writeQueued(CudaBuffer dst, long offset, MemorySegment src) {
        if (!src.isNative()) {
            write(dst, offset, src);
            return;
        }
        queue.endSegment();
        dst.copyFromAsync(src, offset, stream);
    }

    /** Waits for the stream (what a step records from now on stays recorded). */
    @Override
    public void awaitCopies() {
        stream.synchronize();
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
