package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A CUDA stream ({@code CU_STREAM_NON_BLOCKING}: it does not synchronise with the legacy NULL stream). */
public final class CudaStream implements AutoCloseable {

    private final CudaContext context;
    private MemorySegment handle;

    CudaStream(CudaContext context) {
        this.context = context;
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.CUstream);
            check("cuStreamCreate", Cuda.cuStreamCreate(out, Cuda.CU_STREAM_NON_BLOCKING));
            handle = out.get(Cuda.CUstream, 0);
        }
    }

    /** The {@code CUstream} handle. */
    public MemorySegment handle() {
        if (handle == null) {
            throw new IllegalStateException("CUDA stream is closed");
        }
        return handle;
    }

    public CudaContext context() {
        return context;
    }

    /** Waits until everything queued on this stream has finished; an asynchronous kernel error surfaces here. */
    public void synchronize() {
        context.makeCurrent();
        check("cuStreamSynchronize", Cuda.cuStreamSynchronize(handle()));
    }

    /** Makes later work on this stream wait for the event. */
    public void waitFor(CudaEvent event) {
        check("cuStreamWaitEvent", Cuda.cuStreamWaitEvent(handle(), event.handle(), 0));
    }

    @Override
    public void close() {
        if (handle != null) {
            context.makeCurrent();
            MemorySegment h = handle;
            handle = null;
            check("cuStreamDestroy_v2", Cuda.cuStreamDestroy_v2(h));
        }
    }
}
