package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A CUDA event, for timing GPU work ({@link #elapsedMillis}) and ordering streams. */
public final class CudaEvent implements AutoCloseable {

    private final CudaContext context;
    private MemorySegment handle;

    /** A timing event ({@code CU_EVENT_DEFAULT}). */
    public CudaEvent(CudaContext context) {
        this(context, Cuda.CU_EVENT_DEFAULT);
    }

    public CudaEvent(CudaContext context, int flags) {
        this.context = context;
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.CUevent);
            check("cuEventCreate", Cuda.cuEventCreate(out, flags));
            handle = out.get(Cuda.CUevent, 0);
        }
    }

    public MemorySegment handle() {
        if (handle == null) {
            throw new IllegalStateException("CUDA event is closed");
        }
        return handle;
    }

    public void record(CudaStream stream) {
        check("cuEventRecord", Cuda.cuEventRecord(handle(), stream.handle()));
    }

    public void synchronize() {
        check("cuEventSynchronize", Cuda.cuEventSynchronize(handle()));
    }

    /** Milliseconds between two recorded events (waits for {@code end}). */
    public static float elapsedMillis(CudaEvent start, CudaEvent end) {
        end.synchronize();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ms = arena.allocate(Cuda.C_FLOAT);
            check("cuEventElapsedTime_v2", Cuda.cuEventElapsedTime_v2(ms, start.handle(), end.handle()));
            return ms.get(Cuda.C_FLOAT, 0);
        }
    }

    @Override
    public void close() {
        if (handle != null) {
            context.makeCurrent();
            MemorySegment h = handle;
            handle = null;
            check("cuEventDestroy_v2", Cuda.cuEventDestroy_v2(h));
        }
    }
}
