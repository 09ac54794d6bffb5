package io.gossgpu.cuda;

import io.gossgpu.cuda.bindings.Cuda;
import io.gossgpu.cuda.bindings.CudaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/** A loaded PTX module ({@code cuModuleLoadDataEx}: the driver JIT-compiles it for the device). */
public final class CudaModule implements AutoCloseable {

    private static final int LOG_BYTES = 16 * 1024;

    private final CudaContext context;
    private final String label;
    private MemorySegment handle;

    private CudaModule(CudaContext context, String label, MemorySegment handle) {
        this.context = context;
        this.label = label;
        this.handle = handle;
    }

    /**
     * Loads a packaged kernel file (e.g. "rmsnorm") for the context's device: the highest packaged sm_XX PTX not
     * above its compute capability. A failure names the driver's CUDA version and the PTX's ISA; a driver too old
     * for it says which CUDA version and driver branch it needs.
     */
    public static CudaModule load(CudaContext context, String kernel) {
        CudaKernels.Manifest manifest =
                CudaKernels.manifest().orElseThrow(() -> new CudaException(CudaKernels.NOT_BUILT));
        int cc = context.device().computeCapability();
        String arch = CudaKernels.archFor(cc, manifest.archs());
        byte[] ptx = CudaKernels.ptx(kernel, arch);
        String label = kernel + "." + arch + ".ptx";
        try {
            return loadPtx(context, label, ptx);
        } catch (CudaException e) {
            int driver = CudaDriver.driverVersionNow();
            String tooOld = e.result() == Cuda.CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                    ? CudaKernels.driverTooOld(driver, cc)
                            .map(r -> r.replaceFirst("^CUDA unavailable: ", ""))
                            .orElse(null)
                    : null;
            throw new CudaException(
                    e.getMessage() + "; "
                            + (tooOld != null
                                    ? tooOld
                                    : "driver CUDA " + CudaDriver.versionString(driver) + ", " + label + " is PTX ISA "
                                            + manifest.isaOf(arch)),
                    e.result());
        }
    }

    /**
     * JIT-loads PTX text. A failure's message carries the JIT error log on the same line, e.g.
     * {@code cuModuleLoadDataEx(x.ptx) failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): ptxas ... error ...}.
     */
    public static CudaModule loadPtx(CudaContext context, String label, byte[] ptx) {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment image = arena.allocate(ptx.length + 1L);
            MemorySegment.copy(ptx, 0, image, ValueLayout.JAVA_BYTE, 0, ptx.length);
            image.set(ValueLayout.JAVA_BYTE, ptx.length, (byte) 0);
            MemorySegment errorLog = arena.allocate(LOG_BYTES);
            MemorySegment infoLog = arena.allocate(LOG_BYTES);
            int[] keys = {
                Cuda.CU_JIT_ERROR_LOG_BUFFER,
                Cuda.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                Cuda.CU_JIT_INFO_LOG_BUFFER,
                Cuda.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
            };
            MemorySegment options = arena.allocateFrom(Cuda.CUjit_option, keys);
            MemorySegment values = arena.allocate(ValueLayout.ADDRESS, keys.length);
            // Pointer options point at the buffers; size options are integers stored in the void* itself.
            values.setAtIndex(ValueLayout.ADDRESS, 0, errorLog);
            values.setAtIndex(ValueLayout.ADDRESS, 1, MemorySegment.ofAddress(LOG_BYTES));
            values.setAtIndex(ValueLayout.ADDRESS, 2, infoLog);
            values.setAtIndex(ValueLayout.ADDRESS, 3, MemorySegment.ofAddress(LOG_BYTES));
            MemorySegment out = arena.allocate(Cuda.CUmodule);
            int rc = Cuda.cuModuleLoadDataEx(out, image, keys.length, options, values);
            if (rc != Cuda.CUDA_SUCCESS) {
                String log = errorLog.getString(0, StandardCharsets.UTF_8);
                CudaException.check("cuModuleLoadDataEx(" + label + ")", rc, log.isBlank() ? null : "JIT log: " + log);
            }
            return new CudaModule(context, label, out.get(Cuda.CUmodule, 0));
        }
    }

    /** The kernel with this {@code extern "C"} name. */
    public CudaKernel function(String name) {
        return function(name, null);
    }

    /** The kernel of {@code entry}, whose launches are checked against it ({@link CudaEntry#check}). */
    CudaKernel function(CudaEntry entry) {
        return function(entry.name(), entry);
    }

    private CudaKernel function(String name, CudaEntry entry) {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(Cuda.CUfunction);
            int rc = Cuda.cuModuleGetFunction(out, handle(), arena.allocateFrom(name));
            if (rc == Cuda.CUDA_ERROR_NOT_FOUND) {
                throw new CudaException("no CUDA kernel " + name + " in " + label, rc);
            }
            CudaException.check("cuModuleGetFunction(" + name + ")", rc);
            return new CudaKernel(this, name, out.get(Cuda.CUfunction, 0), entry);
        }
    }

    public CudaContext context() {
        return context;
    }

    public String label() {
        return label;
    }

    public MemorySegment handle() {
        if (handle == null) {
            throw new IllegalStateException("CUDA module " + label + " is closed");
        }
        return handle;
    }

    @Override
    public void close() {
        if (handle != null) {
            context.makeCurrent();
            MemorySegment h = handle;
            handle = null;
            CudaException.check("cuModuleUnload", Cuda.cuModuleUnload(h));
        }
    }
}
