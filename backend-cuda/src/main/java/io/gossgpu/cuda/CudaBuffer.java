package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * A device allocation ({@code cuMemAlloc_v2}). Copies are ordered on the context's stream, so a
 * download sees the results of kernels launched before it on that stream. The blocking copies
 * ({@link #copyFrom(MemorySegment, long)}, {@link #copyTo(long, MemorySegment)}) return when the data
 * has arrived; the {@code Async} ones return at once and need pinned host memory
 * ({@link CudaHostBuffer}) to overlap with other work.
 */
public final class CudaBuffer implements AutoCloseable {

    /** Heap segments (and only they) go through an off-heap staging buffer of at most this size. */
    private static final long STAGING_CHUNK = 16L << 20;

    private final CudaContext context;
    private final long byteSize;
    private long address;

    CudaBuffer(CudaContext context, long byteSize) {
        if (byteSize <= 0) {
            throw new IllegalArgumentException("CUDA buffer size must be positive, got " + byteSize);
        }
        this.context = context;
        this.byteSize = byteSize;
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.CUdeviceptr);
            int rc = Cuda.cuMemAlloc_v2(out, byteSize);
            check(
                    "cuMemAlloc_v2",
                    rc,
                    rc == Cuda.CUDA_ERROR_OUT_OF_MEMORY
                            ? "allocating " + humanBytes(byteSize) + " on "
                                    + context.device().name()
                            : null);
            address = out.get(Cuda.CUdeviceptr, 0);
        }
    }

    public CudaContext context() {
        return context;
    }

    public long byteSize() {
        return byteSize;
    }

    /** The device pointer ({@code CUdeviceptr}). */
    public long address() {
        if (address == 0) {
            throw new IllegalStateException("CUDA buffer is closed");
        }
        return address;
    }

    /** The device pointer {@code offset} bytes into the buffer. */
    public long address(long offset) {
        checkRange(offset, 0, "address");
        return address() + offset;
    }

    /** Uploads all of {@code src} to the start of this buffer and waits. */
    public void copyFrom(MemorySegment src) {
        copyFrom(src, 0);
    }

    /** Uploads all of {@code src} to {@code dstOffset} and waits. */
    public void copyFrom(MemorySegment src, long dstOffset) {
        long n = src.byteSize();
        checkRange(dstOffset, n, "upload");
        context.makeCurrent();
        CudaStream s = context.stream();
        if (src.isNative()) {
            check("cuMemcpyHtoDAsync_v2", Cuda.cuMemcpyHtoDAsync_v2(address() + dstOffset, src, n, s.handle()));
            s.synchronize();
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staging = arena.allocate(Math.min(n, STAGING_CHUNK), 64);
            for (long done = 0; done < n; done += staging.byteSize()) {
                long len = Math.min(staging.byteSize(), n - done);
                MemorySegment.copy(src, done, staging, 0, len);
                check(
                        "cuMemcpyHtoDAsync_v2",
                        Cuda.cuMemcpyHtoDAsync_v2(address() + dstOffset + done, staging, len, s.handle()));
                s.synchronize();
            }
        }
    }

    /** Downloads {@code dst.byteSize()} bytes from the start of this buffer, after the work queued before it. */
    public void copyTo(MemorySegment dst) {
        copyTo(0, dst);
    }

    /** Downloads {@code dst.byteSize()} bytes from {@code srcOffset}, after the work queued before it. */
    public void copyTo(long srcOffset, MemorySegment dst) {
        long n = dst.byteSize();
        checkRange(srcOffset, n, "download");
        context.makeCurrent();
        CudaStream s = context.stream();
        if (dst.isNative()) {
            check("cuMemcpyDtoHAsync_v2", Cuda.cuMemcpyDtoHAsync_v2(dst, address() + srcOffset, n, s.handle()));
            s.synchronize();
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment staging = arena.allocate(Math.min(n, STAGING_CHUNK), 64);
            for (long done = 0; done < n; done += staging.byteSize()) {
                long len = Math.min(staging.byteSize(), n - done);
                check(
                        "cuMemcpyDtoHAsync_v2",
                        Cuda.cuMemcpyDtoHAsync_v2(staging, address() + srcOffset + done, len, s.handle()));
                s.synchronize();
                MemorySegment.copy(staging, 0, dst, done, len);
            }
        }
    }

    /** Queues an upload from native (ideally pinned) memory; {@code src} must stay alive until the stream gets there. */
    public void copyFromAsync(MemorySegment src, long dstOffset, CudaStream stream) {
        requireNative(src);
        checkRange(dstOffset, src.byteSize(), "upload");
        context.makeCurrent();
        check(
                "cuMemcpyHtoDAsync_v2",
                Cuda.cuMemcpyHtoDAsync_v2(address() + dstOffset, src, src.byteSize(), stream.handle()));
    }

    /** Queues a download into native (ideally pinned) memory; read {@code dst} only after synchronising the stream. */
    public void copyToAsync(long srcOffset, MemorySegment dst, CudaStream stream) {
        requireNative(dst);
        checkRange(srcOffset, dst.byteSize(), "download");
        context.makeCurrent();
        check(
                "cuMemcpyDtoHAsync_v2",
                Cuda.cuMemcpyDtoHAsync_v2(dst, address() + srcOffset, dst.byteSize(), stream.handle()));
    }

    /** Queues a device-to-device copy of {@code bytes} from {@code src} at {@code srcOffset} to this buffer at {@code dstOffset}. */
    public void copyFrom(CudaBuffer src, long srcOffset, long dstOffset, long bytes, CudaStream stream) {
        src.checkRange(srcOffset, bytes, "device copy source");
        checkRange(dstOffset, bytes, "device copy");
        context.makeCurrent();
        check(
                "cuMemcpyDtoDAsync_v2",
                Cuda.cuMemcpyDtoDAsync_v2(address() + dstOffset, src.address() + srcOffset, bytes, stream.handle()));
    }

    /** Queues setting every 32-bit word to {@code value} (the buffer size must be a multiple of 4). */
    public void fill32(int value) {
        if (byteSize % 4 != 0) {
            throw new IllegalArgumentException(
                    "fill32 needs a size that is a multiple of 4 bytes, buffer has " + byteSize);
        }
        context.makeCurrent();
        check(
                "cuMemsetD32Async",
                Cuda.cuMemsetD32Async(
                        address(), value, byteSize / 4, context.stream().handle()));
    }

    /** Queues writing the 32-bit word {@code value} at {@code byteOffset} (a multiple of 4) on the context's stream. */
    public void set32(long byteOffset, int value) {
        if (byteOffset % 4 != 0) {
            throw new IllegalArgumentException(
                    "set32 needs an offset that is a multiple of 4 bytes, got " + byteOffset);
        }
        checkRange(byteOffset, 4, "set32");
        context.makeCurrent();
        check(
                "cuMemsetD32Async",
                Cuda.cuMemsetD32Async(
                        address() + byteOffset, value, 1, context.stream().handle()));
    }

    /** Queues setting every byte to zero. */
    public void zero() {
        context.makeCurrent();
        check(
                "cuMemsetD8Async",
                Cuda.cuMemsetD8Async(
                        address(), (byte) 0, byteSize, context.stream().handle()));
    }

    private void checkRange(long offset, long length, String what) {
        if (offset < 0 || length < 0 || offset > byteSize || length > byteSize - offset) {
            throw new IndexOutOfBoundsException("CUDA buffer " + what + " of " + length + " bytes at offset " + offset
                    + " is outside the buffer of " + byteSize + " bytes");
        }
    }

    private static void requireNative(MemorySegment s) {
        if (!s.isNative()) {
            throw new IllegalArgumentException(
                    "asynchronous CUDA copies need native memory (a CudaHostBuffer), not a heap segment");
        }
    }

    static String humanBytes(long bytes) {
        if (bytes < 1024) {
            return bytes + " bytes";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    @Override
    public void close() {
        if (address != 0) {
            context.makeCurrent();
            long a = address;
            address = 0;
            check("cuMemFree_v2", Cuda.cuMemFree_v2(a));
        }
    }
}
