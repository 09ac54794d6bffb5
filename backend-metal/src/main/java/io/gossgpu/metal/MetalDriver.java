package io.gossgpu.metal;

import static io.gossgpu.metal.bindings.goss_metal_h.*;

import io.gossgpu.GossException;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.device.DeviceDriver;
import io.gossgpu.device.HostStaging;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The Metal device under the device layer: shared buffers (Apple Silicon's unified memory, so the host reads and
 * writes them in place) and the one pending command buffer that dispatches are encoded into ({@link #commandBuffer}),
 * committed by {@link #flush} when the host needs a result or rewrites memory the pending work may use; host values
 * for the kernels (token ids, positions) go through a staging ring instead, without a commit. Memory is counted
 * against the device's recommended working set.
 */
final class MetalDriver implements DeviceDriver<MetalDriver.Buf>, HostStaging<MetalDriver.Buf> {
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final long STAGING_BYTES = 1 << 20;

    /** A shared Metal buffer and its host view. */
    final class Buf {
        final MemorySegment handle;
        final MemorySegment host;
        final long bytes;
        private boolean released;

        Buf(MemorySegment handle, long bytes) {
            this.handle = handle;
            this.bytes = bytes;
            this.host = goss_mtl_buffer_contents(handle).reinterpret(bytes);
        }

        void release() {
            if (released) return;
            released = true;
            live.remove(this);
            allocated -= bytes;
            goss_mtl_buffer_release(handle);
        }
    }

    private final MemorySegment dev, queue;
    private final String name;
    private final long deviceMemory;
    private final Set<Buf> live = new LinkedHashSet<>();
    private final List<Buf> releaseAfterFlush = new ArrayList<>();
    private final Buf staging;
    private long allocated, stagingUsed, commits;
    private double gpuSeconds;
    private MemorySegment cmd; // the pending command buffer, or null
    private boolean closed;

    MetalDriver(MemorySegment dev, MemorySegment queue, String name) {
        this.dev = dev;
        this.queue = queue;
        this.name = name;
        this.deviceMemory = goss_mtl_device_memory(dev);
        this.staging = allocate(STAGING_BYTES, "staging");
    }

    MemorySegment device() {
        return dev;
    }

    MemorySegment queue() {
        return queue;
    }

    @Override
    public Buf allocate(long bytes, String what) {
        long n = Math.max(bytes, 16);
        if (allocated + n > deviceMemory)
            throw new GossException("metal: " + what + " needs " + KvCacheSpec.humanBytes(n) + " but only "
                    + KvCacheSpec.humanBytes(Math.max(0, deviceMemory - allocated)) + " of the device's "
                    + KvCacheSpec.humanBytes(deviceMemory) + " working set is left");
        MemorySegment h = goss_mtl_buffer_new(dev, n, GOSS_MTL_STORAGE_SHARED);
        if (h.equals(MemorySegment.NULL))
            throw new GossException("metal: cannot allocate " + KvCacheSpec.humanBytes(n) + " for " + what + ": "
                    + MetalNative.lastError());
        return track(new Buf(h, n));
    }

    /**
     * {@code len} bytes of host memory at {@code address} used in place (a memory-mapped checkpoint): a buffer over the
     * whole pages that hold them, or null when Metal will not wrap them (the caller copies instead).
     */
    Buf wrap(long address, long len) {
        long page = goss_mtl_page_size();
        long base = address & -page, end = (address + len + page - 1) & -page;
        if (allocated + (end - base) > deviceMemory) return null; // the copy path reports it
        MemorySegment h = goss_mtl_buffer_wrap(dev, MemorySegment.ofAddress(base), end - base);
        return h.equals(MemorySegment.NULL) ? null : track(new Buf(h, end - base));
    }

    private Buf track(Buf b) {
        live.add(b);
        allocated += b.bytes;
        return b;
    }

    /** After the pending work (which may still use it). */
    @Override
    public void release(Buf b) {
        flush();
        b.release();
    }

    /** Fills the host view: only ever asked of a buffer just allocated, which no encoded work uses yet. */
    @Override
    public void zero(Buf b, long bytes) {
        b.host.asSlice(0, bytes).fill((byte) 0);
    }

    @Override
    public void write(Buf dst, long offset, MemorySegment src) {
        flush();
        MemorySegment.copy(src, 0, dst.host, offset, src.byteSize());
    }

    @Override
    public void read(Buf src, long offset, MemorySegment dst) {
        flush();
        MemorySegment.copy(src.host, offset, dst, 0, dst.byteSize());
    }

    /** Token ids staged (not a write through the driver: that would commit the step). */
    @Override
    public At<Buf> ids(int[] tokens) {
        return stage(tokens);
    }

    /** A sequence's first position staged (no commit). */
    @Override
    public At<Buf> position(int sequence, int start) {
        return stage(new int[] {start});
    }

    /**
     * Copies {@code values} to device memory that the pending work may read, without committing it: a piece of the
     * staging ring, or a one-off buffer released after the commit.
     */
    private At<Buf> stage(int[] values) {
        long bytes = 4L * values.length, aligned = (bytes + 255) & ~255L;
        At<Buf> s;
        if (aligned > STAGING_BYTES) {
            Buf b = allocate(bytes, "staged upload");
            releaseAfterFlush.add(b);
            s = new At<>(b, 0);
        } else {
            if (stagingUsed + aligned > STAGING_BYTES) flush();
            s = new At<>(staging, stagingUsed);
            stagingUsed += aligned;
        }
        MemorySegment.copy(values, 0, s.buffer().host, I32, s.offset(), values.length);
        return s;
    }

    /** The pending command buffer, begun when the first dispatch needs one. */
    MemorySegment commandBuffer() {
        if (closed) throw new GossException("metal: backend is closed");
        if (cmd == null) cmd = goss_mtl_cmd_begin(queue);
        return cmd;
    }

    /** Commits the pending command buffer (if any) and waits for it. */
    void flush() {
        if (cmd == null) return;
        MemorySegment c = cmd;
        cmd = null;
        int rc = goss_mtl_cmd_commit_wait(c);
        commits++;
        String err = rc != 0 ? MetalNative.lastError() : null;
        gpuSeconds += goss_mtl_cmd_gpu_seconds(c);
        goss_mtl_cmd_release(c);
        stagingUsed = 0;
        for (Buf b : releaseAfterFlush) b.release();
        releaseAfterFlush.clear();
        if (err != null) throw new GossException("metal: command buffer failed: " + err);
    }

    @Override
    public void synchronize() {
        flush();
    }

    @Override
    public long freeBytes() {
        return deviceMemory - allocated;
    }

    @Override
    public String deviceName() {
        return name;
    }

    /** Command buffers committed so far. */
    long commits() {
        return commits;
    }

    /** GPU seconds of the command buffers committed so far. */
    double gpuSeconds() {
        return gpuSeconds;
    }

    /** Commits what is pending, then releases every buffer still alive. */
    void close() {
        if (closed) return;
        try {
            flush();
        } finally {
            closed = true;
            for (Buf b : new ArrayList<>(live)) b.release();
        }
    }
}
