package io.gossgpu.cuda.bindings;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * FFM bindings to the CUDA driver API ({@code cuda.h}, checked against CUDA 13.0).
 *
 * <p>jextract is not installed where this was written, so this class is written by hand in the
 * style jextract generates: one class for the header, the C types as {@link java.lang.foreign.MemoryLayout}
 * constants, the enum values used as {@code int} constants, and per function a nested holder class
 * with its {@link FunctionDescriptor} and downcall {@link MethodHandle} plus a thin static wrapper
 * that returns the raw {@code CUresult}. Callers check results with
 * {@link CudaException#check(String, int)}.
 *
 * <p>Everything is lazy. Loading this class never touches the driver; the library is opened the
 * first time a function is called (or {@link #unavailableReason()} is asked), and each symbol is
 * looked up when its holder class is first used. On a machine without the driver no call throws
 * {@link UnsatisfiedLinkError} or an initialisation error: each one throws a {@link CudaException}
 * with the message {@code "CUDA unavailable: libcuda.so.1 not found"} ({@code nvcuda.dll} on Windows).
 *
 * <p>Names are the versioned symbols the CUDA 13 header maps its API names to ({@code cuMemAlloc}
 * is {@code cuMemAlloc_v2}, {@code cuEventElapsedTime} is {@code cuEventElapsedTime_v2}, ...), with
 * the per-thread-default-stream variants ({@code _ptds}/{@code _ptsz}) not used: goss-gpu always
 * passes an explicit stream. 64-bit platforms only ({@code size_t} and {@code CUdeviceptr} are
 * {@code long}).
 */
public final class Cuda {

    private Cuda() {}

    // ---- C types ----

    public static final ValueLayout.OfByte C_CHAR = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG_LONG = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfFloat C_FLOAT = ValueLayout.JAVA_FLOAT;
    public static final AddressLayout C_POINTER =
            ValueLayout.ADDRESS.withTargetLayout(java.lang.foreign.MemoryLayout.sequenceLayout(Long.MAX_VALUE, C_CHAR));

    /** {@code typedef enum cudaError_enum CUresult} */
    public static final ValueLayout.OfInt CUresult = C_INT;
    /** {@code typedef int CUdevice} (CUdevice_v1) */
    public static final ValueLayout.OfInt CUdevice = C_INT;
    /** {@code typedef unsigned long long CUdeviceptr} (CUdeviceptr_v2) */
    public static final ValueLayout.OfLong CUdeviceptr = C_LONG_LONG;
    /** {@code size_t} on a 64-bit platform */
    public static final ValueLayout.OfLong size_t = C_LONG_LONG;
    /** Opaque handles: {@code typedef struct CUctx_st *CUcontext} and friends. */
    public static final AddressLayout CUcontext = ValueLayout.ADDRESS;

    public static final AddressLayout CUmodule = ValueLayout.ADDRESS;
    public static final AddressLayout CUfunction = ValueLayout.ADDRESS;
    public static final AddressLayout CUstream = ValueLayout.ADDRESS;
    public static final AddressLayout CUevent = ValueLayout.ADDRESS;
    public static final AddressLayout CUgraph = ValueLayout.ADDRESS;
    public static final AddressLayout CUgraphExec = ValueLayout.ADDRESS;
    /** {@code CUjit_option} (an enum, passed as an array of int) */
    public static final ValueLayout.OfInt CUjit_option = C_INT;

    // ---- enum values and flags (cuda.h, CUDA 13.0) ----

    public static final int CUDA_SUCCESS = 0;
    public static final int CUDA_ERROR_INVALID_VALUE = 1;
    public static final int CUDA_ERROR_OUT_OF_MEMORY = 2;
    public static final int CUDA_ERROR_NOT_INITIALIZED = 3;
    public static final int CUDA_ERROR_DEINITIALIZED = 4;
    public static final int CUDA_ERROR_STUB_LIBRARY = 34;
    public static final int CUDA_ERROR_NO_DEVICE = 100;
    public static final int CUDA_ERROR_INVALID_DEVICE = 101;
    public static final int CUDA_ERROR_INVALID_PTX = 218;
    public static final int CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
    public static final int CUDA_ERROR_NOT_FOUND = 500;

    public static final int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
    public static final int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
    public static final int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
    public static final int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;
    public static final int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
    public static final int CU_DEVICE_ATTRIBUTE_INTEGRATED = 18;
    public static final int CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36;
    public static final int CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37;
    public static final int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
    public static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
    public static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
    public static final int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

    public static final int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
    public static final int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
    public static final int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
    public static final int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

    public static final int CU_STREAM_DEFAULT = 0x0;
    public static final int CU_STREAM_NON_BLOCKING = 0x1;

    public static final int CU_EVENT_DEFAULT = 0x0;
    public static final int CU_EVENT_BLOCKING_SYNC = 0x1;
    public static final int CU_EVENT_DISABLE_TIMING = 0x2;

    public static final int CU_MEMHOSTALLOC_PORTABLE = 0x01;
    public static final int CU_MEMHOSTALLOC_DEVICEMAP = 0x02;
    public static final int CU_MEMHOSTALLOC_WRITECOMBINED = 0x04;

    public static final int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;
    public static final int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
    public static final int CU_STREAM_CAPTURE_MODE_RELAXED = 2;

    public static final int CU_JIT_MAX_REGISTERS = 0;
    public static final int CU_JIT_THREADS_PER_BLOCK = 1;
    public static final int CU_JIT_WALL_TIME = 2;
    public static final int CU_JIT_INFO_LOG_BUFFER = 3;
    public static final int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
    public static final int CU_JIT_ERROR_LOG_BUFFER = 5;
    public static final int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
    public static final int CU_JIT_OPTIMIZATION_LEVEL = 7;
    public static final int CU_JIT_TARGET_FROM_CUCONTEXT = 8;
    public static final int CU_JIT_LOG_VERBOSE = 12;
    public static final int CU_JIT_GENERATE_LINE_INFO = 13;

    // ---- the library ----

    /** The driver library this platform loads: {@code libcuda.so.1}, or {@code nvcuda.dll} on Windows. */
    public static String libraryName() {
        return Library.NAME;
    }

    /**
     * Why the driver library cannot be used ({@code "CUDA unavailable: libcuda.so.1 not found"}), or
     * empty when it was opened. Opens the library on first use; never throws.
     */
    public static Optional<String> unavailableReason() {
        return Optional.ofNullable(Library.FAILURE);
    }

    /** {@code cuGetErrorName} as a Java string, or null when the driver cannot name the code. */
    public static String errorName(int result) {
        return errorText(result, true);
    }

    /** {@code cuGetErrorString} as a Java string, or null when the driver cannot describe the code. */
    public static String errorString(int result) {
        return errorText(result, false);
    }

    private static String errorText(int result, boolean name) {
        if (Library.FAILURE != null) {
            return null;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(C_POINTER);
            int rc = name ? cuGetErrorName(result, p) : cuGetErrorString(result, p);
            MemorySegment s = p.get(C_POINTER, 0);
            if (rc != CUDA_SUCCESS || s.equals(MemorySegment.NULL)) {
                return null;
            }
            return s.getString(0);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Why a library path cannot be a driver, found before dlopen (whose failure on a file that is no library says
     * only "cannot open", and makes HotSpot print a stack-guard warning): a missing file, a folder, or a file that
     * is not an ELF shared object on Linux. Null for a bare library name (the loader searches for it) and for a
     * file that may load.
     */
    static String unloadable(String name) {
        if (!name.contains("/") && !name.contains("\\")) return null;
        Path path = Path.of(name);
        if (!Files.exists(path)) return name + " not found";
        if (Files.isDirectory(path)) return name + " is a folder, not the driver library";
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) return null;
        byte[] head = new byte[4];
        try (var in = Files.newInputStream(path)) {
            if (in.readNBytes(head, 0, 4) == 4
                    && head[0] == 0x7f
                    && head[1] == 'E'
                    && head[2] == 'L'
                    && head[3] == 'F') {
                return null;
            }
        } catch (java.io.IOException e) {
            return name + " cannot be read (" + e.getMessage() + ")";
        }
        return name + " is not a shared library (no ELF header); point GOSS_CUDA_LIBRARY at libcuda.so.1";
    }

    /**
     * Opens the driver once, in a holder class so that loading {@link Cuda} does nothing native. The
     * library can be overridden with {@code -Dgoss.cuda.library=PATH} or {@code GOSS_CUDA_LIBRARY=PATH}.
     */
    private static final class Library {
        static final String NAME;
        static final SymbolLookup LOOKUP;
        static final String FAILURE;

        static {
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            String override = System.getProperty("goss.cuda.library", System.getenv("GOSS_CUDA_LIBRARY"));
            boolean overridden = override != null && !override.isBlank();
            NAME = overridden ? override : os.startsWith("windows") ? "nvcuda.dll" : "libcuda.so.1";
            SymbolLookup lookup = null;
            String failure = null;
            if (!overridden && (os.startsWith("mac") || os.startsWith("darwin"))) {
                failure = "CUDA unavailable: CUDA is not supported on macOS";
            } else if ((failure = unloadable(NAME)) != null) {
                failure = "CUDA unavailable: " + failure;
            } else {
                try {
                    lookup = NAME.contains("/") || NAME.contains("\\")
                            ? SymbolLookup.libraryLookup(Path.of(NAME), Arena.global())
                            : SymbolLookup.libraryLookup(NAME, Arena.global());
                } catch (IllegalArgumentException | IllegalCallerException e) {
                    failure = e instanceof IllegalCallerException
                            ? "CUDA unavailable: native access is not enabled (run java with --enable-native-access=ALL-UNNAMED)"
                            : NAME.contains("/") || NAME.contains("\\")
                                    ? "CUDA unavailable: " + NAME + " cannot be loaded (" + e.getMessage() + ")"
                                    : "CUDA unavailable: " + NAME + " not found";
                }
            }
            LOOKUP = lookup;
            FAILURE = failure;
        }

        /** The downcall for the first of the names the library has, or null (the call then explains). */
        static MethodHandle downcall(FunctionDescriptor desc, String... names) {
            if (LOOKUP == null) {
                return null;
            }
            for (String name : names) {
                Optional<MemorySegment> addr = LOOKUP.find(name);
                if (addr.isPresent()) {
                    return Linker.nativeLinker().downcallHandle(addr.get(), desc);
                }
            }
            return null;
        }

        static MethodHandle require(MethodHandle handle, String name) {
            if (handle != null) {
                return handle;
            }
            if (FAILURE != null) {
                throw new CudaException(FAILURE);
            }
            throw new CudaException("CUDA driver " + NAME + " has no function " + name
                    + " (the driver is too old for goss-gpu; update the NVIDIA driver)");
        }

        static RuntimeException rethrow(Throwable t) {
            if (t instanceof RuntimeException r) {
                return r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            return new IllegalStateException(t);
        }
    }

    // ---- functions ----

    private static final class cuGetErrorName {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUresult, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuGetErrorName");
    }

    /**
     * <pre>{@code CUresult cuGetErrorName(CUresult error, const char **pStr)}</pre>
     */
    public static int cuGetErrorName(int error, MemorySegment pStr) {
        MethodHandle mh = Library.require(cuGetErrorName.HANDLE, "cuGetErrorName");
        try {
            return (int) mh.invokeExact(error, pStr);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuGetErrorString {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUresult, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuGetErrorString");
    }

    /**
     * <pre>{@code CUresult cuGetErrorString(CUresult error, const char **pStr)}</pre>
     */
    public static int cuGetErrorString(int error, MemorySegment pStr) {
        MethodHandle mh = Library.require(cuGetErrorString.HANDLE, "cuGetErrorString");
        try {
            return (int) mh.invokeExact(error, pStr);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuInit {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuInit");
    }

    /**
     * <pre>{@code CUresult cuInit(unsigned int Flags)}</pre>
     */
    public static int cuInit(int Flags) {
        MethodHandle mh = Library.require(cuInit.HANDLE, "cuInit");
        try {
            return (int) mh.invokeExact(Flags);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDriverGetVersion {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDriverGetVersion");
    }

    /**
     * <pre>{@code CUresult cuDriverGetVersion(int *driverVersion)}</pre>
     */
    public static int cuDriverGetVersion(MemorySegment driverVersion) {
        MethodHandle mh = Library.require(cuDriverGetVersion.HANDLE, "cuDriverGetVersion");
        try {
            return (int) mh.invokeExact(driverVersion);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDeviceGetCount {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDeviceGetCount");
    }

    /**
     * <pre>{@code CUresult cuDeviceGetCount(int *count)}</pre>
     */
    public static int cuDeviceGetCount(MemorySegment count) {
        MethodHandle mh = Library.require(cuDeviceGetCount.HANDLE, "cuDeviceGetCount");
        try {
            return (int) mh.invokeExact(count);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDeviceGet {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDeviceGet");
    }

    /**
     * <pre>{@code CUresult cuDeviceGet(CUdevice *device, int ordinal)}</pre>
     */
    public static int cuDeviceGet(MemorySegment device, int ordinal) {
        MethodHandle mh = Library.require(cuDeviceGet.HANDLE, "cuDeviceGet");
        try {
            return (int) mh.invokeExact(device, ordinal);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDeviceGetName {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, C_INT, CUdevice);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDeviceGetName");
    }

    /**
     * <pre>{@code CUresult cuDeviceGetName(char *name, int len, CUdevice dev)}</pre>
     */
    public static int cuDeviceGetName(MemorySegment name, int len, int dev) {
        MethodHandle mh = Library.require(cuDeviceGetName.HANDLE, "cuDeviceGetName");
        try {
            return (int) mh.invokeExact(name, len, dev);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDeviceGetAttribute {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, C_INT, CUdevice);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDeviceGetAttribute");
    }

    /**
     * <pre>{@code CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)}</pre>
     */
    public static int cuDeviceGetAttribute(MemorySegment pi, int attrib, int dev) {
        MethodHandle mh = Library.require(cuDeviceGetAttribute.HANDLE, "cuDeviceGetAttribute");
        try {
            return (int) mh.invokeExact(pi, attrib, dev);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDeviceTotalMem_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, CUdevice);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDeviceTotalMem_v2");
    }

    /**
     * <pre>{@code CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)  [cuDeviceTotalMem]}</pre>
     */
    public static int cuDeviceTotalMem_v2(MemorySegment bytes, int dev) {
        MethodHandle mh = Library.require(cuDeviceTotalMem_v2.HANDLE, "cuDeviceTotalMem_v2");
        try {
            return (int) mh.invokeExact(bytes, dev);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDevicePrimaryCtxRetain {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, CUdevice);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDevicePrimaryCtxRetain");
    }

    /**
     * <pre>{@code CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)}</pre>
     */
    public static int cuDevicePrimaryCtxRetain(MemorySegment pctx, int dev) {
        MethodHandle mh = Library.require(cuDevicePrimaryCtxRetain.HANDLE, "cuDevicePrimaryCtxRetain");
        try {
            return (int) mh.invokeExact(pctx, dev);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuDevicePrimaryCtxRelease_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdevice);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuDevicePrimaryCtxRelease_v2");
    }

    /**
     * <pre>{@code CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)  [cuDevicePrimaryCtxRelease]}</pre>
     */
    public static int cuDevicePrimaryCtxRelease_v2(int dev) {
        MethodHandle mh = Library.require(cuDevicePrimaryCtxRelease_v2.HANDLE, "cuDevicePrimaryCtxRelease_v2");
        try {
            return (int) mh.invokeExact(dev);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuCtxSetCurrent {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUcontext);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuCtxSetCurrent");
    }

    /**
     * <pre>{@code CUresult cuCtxSetCurrent(CUcontext ctx)}</pre>
     */
    public static int cuCtxSetCurrent(MemorySegment ctx) {
        MethodHandle mh = Library.require(cuCtxSetCurrent.HANDLE, "cuCtxSetCurrent");
        try {
            return (int) mh.invokeExact(ctx);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuCtxGetCurrent {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuCtxGetCurrent");
    }

    /**
     * <pre>{@code CUresult cuCtxGetCurrent(CUcontext *pctx)}</pre>
     */
    public static int cuCtxGetCurrent(MemorySegment pctx) {
        MethodHandle mh = Library.require(cuCtxGetCurrent.HANDLE, "cuCtxGetCurrent");
        try {
            return (int) mh.invokeExact(pctx);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuCtxSynchronize {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuCtxSynchronize");
    }

    /**
     * <pre>{@code CUresult cuCtxSynchronize(void)}</pre>
     */
    public static int cuCtxSynchronize() {
        MethodHandle mh = Library.require(cuCtxSynchronize.HANDLE, "cuCtxSynchronize");
        try {
            return (int) mh.invokeExact();
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemGetInfo_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemGetInfo_v2");
    }

    /**
     * <pre>{@code CUresult cuMemGetInfo_v2(size_t *free, size_t *total)  [cuMemGetInfo]}</pre>
     */
    public static int cuMemGetInfo_v2(MemorySegment free, MemorySegment total) {
        MethodHandle mh = Library.require(cuMemGetInfo_v2.HANDLE, "cuMemGetInfo_v2");
        try {
            return (int) mh.invokeExact(free, total);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuStreamCreate {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuStreamCreate");
    }

    /**
     * <pre>{@code CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)}</pre>
     */
    public static int cuStreamCreate(MemorySegment phStream, int Flags) {
        MethodHandle mh = Library.require(cuStreamCreate.HANDLE, "cuStreamCreate");
        try {
            return (int) mh.invokeExact(phStream, Flags);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuStreamSynchronize {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuStreamSynchronize");
    }

    /**
     * <pre>{@code CUresult cuStreamSynchronize(CUstream hStream)}</pre>
     */
    public static int cuStreamSynchronize(MemorySegment hStream) {
        MethodHandle mh = Library.require(cuStreamSynchronize.HANDLE, "cuStreamSynchronize");
        try {
            return (int) mh.invokeExact(hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuStreamWaitEvent {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUstream, CUevent, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuStreamWaitEvent");
    }

    /**
     * <pre>{@code CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)}</pre>
     */
    public static int cuStreamWaitEvent(MemorySegment hStream, MemorySegment hEvent, int Flags) {
        MethodHandle mh = Library.require(cuStreamWaitEvent.HANDLE, "cuStreamWaitEvent");
        try {
            return (int) mh.invokeExact(hStream, hEvent, Flags);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuStreamDestroy_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuStreamDestroy_v2");
    }

    /**
     * <pre>{@code CUresult cuStreamDestroy_v2(CUstream hStream)  [cuStreamDestroy]}</pre>
     */
    public static int cuStreamDestroy_v2(MemorySegment hStream) {
        MethodHandle mh = Library.require(cuStreamDestroy_v2.HANDLE, "cuStreamDestroy_v2");
        try {
            return (int) mh.invokeExact(hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuEventCreate {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuEventCreate");
    }

    /**
     * <pre>{@code CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)}</pre>
     */
    public static int cuEventCreate(MemorySegment phEvent, int Flags) {
        MethodHandle mh = Library.require(cuEventCreate.HANDLE, "cuEventCreate");
        try {
            return (int) mh.invokeExact(phEvent, Flags);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuEventRecord {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUevent, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuEventRecord");
    }

    /**
     * <pre>{@code CUresult cuEventRecord(CUevent hEvent, CUstream hStream)}</pre>
     */
    public static int cuEventRecord(MemorySegment hEvent, MemorySegment hStream) {
        MethodHandle mh = Library.require(cuEventRecord.HANDLE, "cuEventRecord");
        try {
            return (int) mh.invokeExact(hEvent, hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuEventSynchronize {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUevent);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuEventSynchronize");
    }

    /**
     * <pre>{@code CUresult cuEventSynchronize(CUevent hEvent)}</pre>
     */
    public static int cuEventSynchronize(MemorySegment hEvent) {
        MethodHandle mh = Library.require(cuEventSynchronize.HANDLE, "cuEventSynchronize");
        try {
            return (int) mh.invokeExact(hEvent);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuEventElapsedTime_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, CUevent, CUevent);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    }

    /**
     * <pre>{@code CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)  [cuEventElapsedTime since CUDA 12.8;
     * drivers older than 12.8 only have cuEventElapsedTime with the same signature, used as a fallback]}</pre>
     */
    public static int cuEventElapsedTime_v2(MemorySegment pMilliseconds, MemorySegment hStart, MemorySegment hEnd) {
        MethodHandle mh = Library.require(cuEventElapsedTime_v2.HANDLE, "cuEventElapsedTime_v2");
        try {
            return (int) mh.invokeExact(pMilliseconds, hStart, hEnd);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuEventDestroy_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUevent);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuEventDestroy_v2");
    }

    /**
     * <pre>{@code CUresult cuEventDestroy_v2(CUevent hEvent)  [cuEventDestroy]}</pre>
     */
    public static int cuEventDestroy_v2(MemorySegment hEvent) {
        MethodHandle mh = Library.require(cuEventDestroy_v2.HANDLE, "cuEventDestroy_v2");
        try {
            return (int) mh.invokeExact(hEvent);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuModuleLoadDataEx {
        static final FunctionDescriptor DESC =
                FunctionDescriptor.of(CUresult, C_POINTER, C_POINTER, C_INT, C_POINTER, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuModuleLoadDataEx");
    }

    /**
     * <pre>{@code CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues)}</pre>
     */
    public static int cuModuleLoadDataEx(
            MemorySegment module,
            MemorySegment image,
            int numOptions,
            MemorySegment options,
            MemorySegment optionValues) {
        MethodHandle mh = Library.require(cuModuleLoadDataEx.HANDLE, "cuModuleLoadDataEx");
        try {
            return (int) mh.invokeExact(module, image, numOptions, options, optionValues);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuModuleGetFunction {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, CUmodule, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuModuleGetFunction");
    }

    /**
     * <pre>{@code CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)}</pre>
     */
    public static int cuModuleGetFunction(MemorySegment hfunc, MemorySegment hmod, MemorySegment name) {
        MethodHandle mh = Library.require(cuModuleGetFunction.HANDLE, "cuModuleGetFunction");
        try {
            return (int) mh.invokeExact(hfunc, hmod, name);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuModuleUnload {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUmodule);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuModuleUnload");
    }

    /**
     * <pre>{@code CUresult cuModuleUnload(CUmodule hmod)}</pre>
     */
    public static int cuModuleUnload(MemorySegment hmod) {
        MethodHandle mh = Library.require(cuModuleUnload.HANDLE, "cuModuleUnload");
        try {
            return (int) mh.invokeExact(hmod);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuFuncGetAttribute {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, C_INT, CUfunction);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuFuncGetAttribute");
    }

    /**
     * <pre>{@code CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)}</pre>
     */
    public static int cuFuncGetAttribute(MemorySegment pi, int attrib, MemorySegment hfunc) {
        MethodHandle mh = Library.require(cuFuncGetAttribute.HANDLE, "cuFuncGetAttribute");
        try {
            return (int) mh.invokeExact(pi, attrib, hfunc);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuFuncSetAttribute {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUfunction, C_INT, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuFuncSetAttribute");
    }

    /**
     * <pre>{@code CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)}</pre>
     */
    public static int cuFuncSetAttribute(MemorySegment hfunc, int attrib, int value) {
        MethodHandle mh = Library.require(cuFuncSetAttribute.HANDLE, "cuFuncSetAttribute");
        try {
            return (int) mh.invokeExact(hfunc, attrib, value);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuLaunchKernel {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(
                CUresult, CUfunction, C_INT, C_INT, C_INT, C_INT, C_INT, C_INT, C_INT, CUstream, C_POINTER, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuLaunchKernel");
    }

    /**
     * <pre>{@code CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
     *     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
     *     CUstream hStream, void **kernelParams, void **extra)}</pre>
     */
    public static int cuLaunchKernel(
            MemorySegment f,
            int gridDimX,
            int gridDimY,
            int gridDimZ,
            int blockDimX,
            int blockDimY,
            int blockDimZ,
            int sharedMemBytes,
            MemorySegment hStream,
            MemorySegment kernelParams,
            MemorySegment extra) {
        MethodHandle mh = Library.require(cuLaunchKernel.HANDLE, "cuLaunchKernel");
        try {
            return (int) mh.invokeExact(
                    f,
                    gridDimX,
                    gridDimY,
                    gridDimZ,
                    blockDimX,
                    blockDimY,
                    blockDimZ,
                    sharedMemBytes,
                    hStream,
                    kernelParams,
                    extra);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemAlloc_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, size_t);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemAlloc_v2");
    }

    /**
     * <pre>{@code CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)  [cuMemAlloc]}</pre>
     */
    public static int cuMemAlloc_v2(MemorySegment dptr, long bytesize) {
        MethodHandle mh = Library.require(cuMemAlloc_v2.HANDLE, "cuMemAlloc_v2");
        try {
            return (int) mh.invokeExact(dptr, bytesize);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemFree_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdeviceptr);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemFree_v2");
    }

    /**
     * <pre>{@code CUresult cuMemFree_v2(CUdeviceptr dptr)  [cuMemFree]}</pre>
     */
    public static int cuMemFree_v2(long dptr) {
        MethodHandle mh = Library.require(cuMemFree_v2.HANDLE, "cuMemFree_v2");
        try {
            return (int) mh.invokeExact(dptr);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemcpyHtoD_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdeviceptr, C_POINTER, size_t);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemcpyHtoD_v2");
    }

    /**
     * <pre>{@code CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)  [cuMemcpyHtoD]}</pre>
     */
    public static int cuMemcpyHtoD_v2(long dstDevice, MemorySegment srcHost, long ByteCount) {
        MethodHandle mh = Library.require(cuMemcpyHtoD_v2.HANDLE, "cuMemcpyHtoD_v2");
        try {
            return (int) mh.invokeExact(dstDevice, srcHost, ByteCount);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemcpyDtoH_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, CUdeviceptr, size_t);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemcpyDtoH_v2");
    }

    /**
     * <pre>{@code CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)  [cuMemcpyDtoH]}</pre>
     */
    public static int cuMemcpyDtoH_v2(MemorySegment dstHost, long srcDevice, long ByteCount) {
        MethodHandle mh = Library.require(cuMemcpyDtoH_v2.HANDLE, "cuMemcpyDtoH_v2");
        try {
            return (int) mh.invokeExact(dstHost, srcDevice, ByteCount);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemcpyDtoD_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdeviceptr, CUdeviceptr, size_t);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemcpyDtoD_v2");
    }

    /**
     * <pre>{@code CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)  [cuMemcpyDtoD]}</pre>
     */
    public static int cuMemcpyDtoD_v2(long dstDevice, long srcDevice, long ByteCount) {
        MethodHandle mh = Library.require(cuMemcpyDtoD_v2.HANDLE, "cuMemcpyDtoD_v2");
        try {
            return (int) mh.invokeExact(dstDevice, srcDevice, ByteCount);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemcpyHtoDAsync_v2 {
        static final FunctionDescriptor DESC =
                FunctionDescriptor.of(CUresult, CUdeviceptr, C_POINTER, size_t, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemcpyHtoDAsync_v2");
    }

    /**
     * <pre>{@code CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)  [cuMemcpyHtoDAsync]}</pre>
     */
    public static int cuMemcpyHtoDAsync_v2(
            long dstDevice, MemorySegment srcHost, long ByteCount, MemorySegment hStream) {
        MethodHandle mh = Library.require(cuMemcpyHtoDAsync_v2.HANDLE, "cuMemcpyHtoDAsync_v2");
        try {
            return (int) mh.invokeExact(dstDevice, srcHost, ByteCount, hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemcpyDtoHAsync_v2 {
        static final FunctionDescriptor DESC =
                FunctionDescriptor.of(CUresult, C_POINTER, CUdeviceptr, size_t, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemcpyDtoHAsync_v2");
    }

    /**
     * <pre>{@code CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)  [cuMemcpyDtoHAsync]}</pre>
     */
    public static int cuMemcpyDtoHAsync_v2(
            MemorySegment dstHost, long srcDevice, long ByteCount, MemorySegment hStream) {
        MethodHandle mh = Library.require(cuMemcpyDtoHAsync_v2.HANDLE, "cuMemcpyDtoHAsync_v2");
        try {
            return (int) mh.invokeExact(dstHost, srcDevice, ByteCount, hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemcpyDtoDAsync_v2 {
        static final FunctionDescriptor DESC =
                FunctionDescriptor.of(CUresult, CUdeviceptr, CUdeviceptr, size_t, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemcpyDtoDAsync_v2");
    }

    /**
     * <pre>{@code CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)  [cuMemcpyDtoDAsync]}</pre>
     */
    public static int cuMemcpyDtoDAsync_v2(long dstDevice, long srcDevice, long ByteCount, MemorySegment hStream) {
        MethodHandle mh = Library.require(cuMemcpyDtoDAsync_v2.HANDLE, "cuMemcpyDtoDAsync_v2");
        try {
            return (int) mh.invokeExact(dstDevice, srcDevice, ByteCount, hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemsetD8_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdeviceptr, C_CHAR, size_t);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemsetD8_v2");
    }

    /**
     * <pre>{@code CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)  [cuMemsetD8]}</pre>
     */
    public static int cuMemsetD8_v2(long dstDevice, byte uc, long N) {
        MethodHandle mh = Library.require(cuMemsetD8_v2.HANDLE, "cuMemsetD8_v2");
        try {
            return (int) mh.invokeExact(dstDevice, uc, N);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemsetD32_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdeviceptr, C_INT, size_t);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemsetD32_v2");
    }

    /**
     * <pre>{@code CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)  [cuMemsetD32]}</pre>
     */
    public static int cuMemsetD32_v2(long dstDevice, int ui, long N) {
        MethodHandle mh = Library.require(cuMemsetD32_v2.HANDLE, "cuMemsetD32_v2");
        try {
            return (int) mh.invokeExact(dstDevice, ui, N);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemsetD8Async {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdeviceptr, C_CHAR, size_t, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemsetD8Async");
    }

    /**
     * <pre>{@code CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)}</pre>
     */
    public static int cuMemsetD8Async(long dstDevice, byte uc, long N, MemorySegment hStream) {
        MethodHandle mh = Library.require(cuMemsetD8Async.HANDLE, "cuMemsetD8Async");
        try {
            return (int) mh.invokeExact(dstDevice, uc, N, hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemsetD32Async {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUdeviceptr, C_INT, size_t, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemsetD32Async");
    }

    /**
     * <pre>{@code CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)}</pre>
     */
    public static int cuMemsetD32Async(long dstDevice, int ui, long N, MemorySegment hStream) {
        MethodHandle mh = Library.require(cuMemsetD32Async.HANDLE, "cuMemsetD32Async");
        try {
            return (int) mh.invokeExact(dstDevice, ui, N, hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemHostAlloc {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, size_t, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemHostAlloc");
    }

    /**
     * <pre>{@code CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)}</pre>
     */
    public static int cuMemHostAlloc(MemorySegment pp, long bytesize, int Flags) {
        MethodHandle mh = Library.require(cuMemHostAlloc.HANDLE, "cuMemHostAlloc");
        try {
            return (int) mh.invokeExact(pp, bytesize, Flags);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuMemFreeHost {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuMemFreeHost");
    }

    /**
     * <pre>{@code CUresult cuMemFreeHost(void *p)}</pre>
     */
    public static int cuMemFreeHost(MemorySegment p) {
        MethodHandle mh = Library.require(cuMemFreeHost.HANDLE, "cuMemFreeHost");
        try {
            return (int) mh.invokeExact(p);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuStreamBeginCapture_v2 {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUstream, C_INT);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuStreamBeginCapture_v2");
    }

    /**
     * <pre>{@code CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)  [cuStreamBeginCapture]}</pre>
     */
    public static int cuStreamBeginCapture_v2(MemorySegment hStream, int mode) {
        MethodHandle mh = Library.require(cuStreamBeginCapture_v2.HANDLE, "cuStreamBeginCapture_v2");
        try {
            return (int) mh.invokeExact(hStream, mode);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuStreamEndCapture {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUstream, C_POINTER);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuStreamEndCapture");
    }

    /**
     * <pre>{@code CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)}</pre>
     */
    public static int cuStreamEndCapture(MemorySegment hStream, MemorySegment phGraph) {
        MethodHandle mh = Library.require(cuStreamEndCapture.HANDLE, "cuStreamEndCapture");
        try {
            return (int) mh.invokeExact(hStream, phGraph);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuGraphInstantiateWithFlags {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, C_POINTER, CUgraph, C_LONG_LONG);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuGraphInstantiateWithFlags");
    }

    /**
     * <pre>{@code CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
     * [cuGraphInstantiate since CUDA 12; the old five-argument cuGraphInstantiate/_v2 is not bound]}</pre>
     */
    public static int cuGraphInstantiateWithFlags(MemorySegment phGraphExec, MemorySegment hGraph, long flags) {
        MethodHandle mh = Library.require(cuGraphInstantiateWithFlags.HANDLE, "cuGraphInstantiateWithFlags");
        try {
            return (int) mh.invokeExact(phGraphExec, hGraph, flags);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuGraphLaunch {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUgraphExec, CUstream);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuGraphLaunch");
    }

    /**
     * <pre>{@code CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)}</pre>
     */
    public static int cuGraphLaunch(MemorySegment hGraphExec, MemorySegment hStream) {
        MethodHandle mh = Library.require(cuGraphLaunch.HANDLE, "cuGraphLaunch");
        try {
            return (int) mh.invokeExact(hGraphExec, hStream);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuGraphExecDestroy {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUgraphExec);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuGraphExecDestroy");
    }

    /**
     * <pre>{@code CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)}</pre>
     */
    public static int cuGraphExecDestroy(MemorySegment hGraphExec) {
        MethodHandle mh = Library.require(cuGraphExecDestroy.HANDLE, "cuGraphExecDestroy");
        try {
            return (int) mh.invokeExact(hGraphExec);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }

    private static final class cuGraphDestroy {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(CUresult, CUgraph);
        static final MethodHandle HANDLE = Library.downcall(DESC, "cuGraphDestroy");
    }

    /**
     * <pre>{@code CUresult cuGraphDestroy(CUgraph hGraph)}</pre>
     */
    public static int cuGraphDestroy(MemorySegment hGraph) {
        MethodHandle mh = Library.require(cuGraphDestroy.HANDLE, "cuGraphDestroy");
        try {
            return (int) mh.invokeExact(hGraph);
        } catch (Throwable t) {
            throw Library.rethrow(t);
        }
    }
}
