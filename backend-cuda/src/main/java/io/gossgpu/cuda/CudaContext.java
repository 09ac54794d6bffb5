package io.gossgpu.cuda;

import static io.gossgpu.cuda.bindings.CudaException.check;

import io.gossgpu.cuda.bindings.Cuda;
import io.gossgpu.cuda.bindings.CudaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One device's primary context (retained on open, released on close) and a stream for the work of
 * this context. The CUDA runtime and other libraries in the process share the same primary context.
 *
 * <p>A CUDA context is current per thread. Every method here and in the classes that take a
 * context makes it current first ({@code cuCtxSetCurrent}, a cheap call), so any thread may use it,
 * but a context and what it owns are not safe for concurrent use from several threads at once.
 *
 * <p>Close buffers, modules, events and graphs before the context: when the last retain of the
 * primary context is released the driver destroys it together with everything allocated in it.
 */
public final class CudaContext implements AutoCloseable {

    private final CudaDevice device;
    private final int cuDevice;
    private MemorySegment context;
    private final CudaStream stream;

    private CudaContext(CudaDevice device, int cuDevice, MemorySegment context) {
        this.device = device;
        this.cuDevice = cuDevice;
        this.context = context;
        CudaStream s;
        try {
            s = new CudaStream(this);
        } catch (RuntimeException e) {
            Cuda.cuDevicePrimaryCtxRelease_v2(cuDevice);
            throw e;
        }
        this.stream = s;
    }

    /** Opens device {@code ordinal}; throws a {@link CudaException} with the one-line reason when CUDA is unavailable. */
    public static CudaContext open(int ordinal) {
        CudaDevice device = CudaDriver.device(ordinal);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.C_INT);
            check("cuDeviceGet", Cuda.cuDeviceGet(out, ordinal));
            int dev = out.get(Cuda.C_INT, 0);
            MemorySegment pctx = arena.allocate(Cuda.CUcontext);
            check("cuDevicePrimaryCtxRetain", Cuda.cuDevicePrimaryCtxRetain(pctx, dev));
            MemorySegment ctx = pctx.get(Cuda.CUcontext, 0);
            int rc = Cuda.cuCtxSetCurrent(ctx);
            if (rc != Cuda.CUDA_SUCCESS) {
                Cuda.cuDevicePrimaryCtxRelease_v2(dev);
                check("cuCtxSetCurrent", rc);
            }
            return new CudaContext(device, dev, ctx);
        }
    }

    public CudaDevice device() {
        return device;
    }

    /** The stream all work of this context goes to unless another is given. */
    public CudaStream stream() {
        return stream;
    }

    /** The {@code CUcontext} handle. */
    public MemorySegment handle() {
        if (context == null) {
            throw new IllegalStateException("CUDA context is closed");
        }
        return context;
    }

    /** Makes this context current on the calling thread. */
    public void makeCurrent() {
        check("cuCtxSetCurrent", Cuda.cuCtxSetCurrent(handle()));
    }

    /** Waits for the context's stream. */
    public void synchronize() {
        stream.synchronize();
    }

    /** Allocates {@code bytes} of device memory (not initialised). */
    public CudaBuffer allocate(long bytes) {
        return new CudaBuffer(this, bytes);
    }

    /** Loads a packaged kernel file (e.g. "rmsnorm") as PTX for this device's architecture. */
    public CudaModule loadModule(String kernel) {
        return CudaModule.load(this, kernel);
    }

    /** {free, total} device memory in bytes ({@code cuMemGetInfo_v2}). */
    public long[] memoryInfo() {
        makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment free = arena.allocate(Cuda.size_t);
            MemorySegment total = arena.allocate(Cuda.size_t);
            check("cuMemGetInfo_v2", Cuda.cuMemGetInfo_v2(free, total));
            return new long[] {free.get(Cuda.size_t, 0), total.get(Cuda.size_t, 0)};
        }
    }

    @Override
    public void close() {
        if (context == null) {
            return;
        }
        try {
            makeCurrent();
            stream.synchronize();
            stream.close();
        } finally {
            context = null;
            check("cuDevicePrimaryCtxRelease_v2", Cuda.cuDevicePrimaryCtxRelease_v2(cuDevice));
        }
    }
}
