package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Page-locked host memory ({@code cuMemHostAlloc}) for asynchronous copies, e.g. the logits read back per token. */
public final class CudaHostBuffer implements AutoCloseable {

    private final CudaContext context;
    private MemorySegment segment;

    public CudaHostBuffer(CudaContext context, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned host buffer size must be positive, got " + bytes);
        }
        this.context = context;
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.C_POINTER);
            int rc = Cuda.cuMemHostAlloc(out, bytes, Cuda.CU_MEMHOSTALLOC_PORTABLE);
            check(
                    "cuMemHostAlloc",
                    rc,
                    rc == Cuda.CUDA_ERROR_OUT_OF_MEMORY
                            ? "allocating " + CudaBuffer.humanBytes(bytes) + " of pinned host memory"
                            : null);
            segment = out.get(Cuda.C_POINTER, 0).reinterpret(bytes);
        }
    }

    /** The memory; do not use it after {@link #close()}. */
    public MemorySegment segment() {
        if (segment == null) {
            throw new IllegalStateException("pinned host buffer is closed");
        }
        return segment;
    }

    @Override
    public void close() {
        if (segment != null) {
            context.makeCurrent();
            MemorySegment s = segment;
            segment = null;
            check("cuMemFreeHost", Cuda.cuMemFreeHost(s));
        }
    }
}
