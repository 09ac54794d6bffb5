package io.gossgpu.metal.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * FFM bindings to {@code backend-metal/shim/goss_metal.h}, in the style jextract generates (one class per header,
 * C names, a downcall handle and a {@link FunctionDescriptor} per function, pointers as
 * {@link MemorySegment}). Written by hand because jextract is not part of the build; keep it in step with
 * the header ({@link #GOSS_MTL_ABI_VERSION} is checked at {@link #load}).
 *
 * <p>The library is chosen at run time (the macOS shim or the Linux emulator), so the handles are bound by
 * {@link #load(Path)} rather than in a static initialiser; calling a function before that throws.
 */
@SuppressWarnings({"unused", "checkstyle:MethodName"})
public final class goss_metal_h {
    private goss_metal_h() {}

    public static final int GOSS_MTL_ABI_VERSION = 1;
    public static final int GOSS_MTL_STORAGE_SHARED = 0;
    public static final int GOSS_MTL_STORAGE_PRIVATE = 1;

    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG_LONG = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfDouble C_DOUBLE = ValueLayout.JAVA_DOUBLE;
    public static final MemoryLayout C_POINTER =
            ValueLayout.ADDRESS.withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, ValueLayout.JAVA_BYTE));

    private static volatile Path loaded;
    private static SymbolLookup lookup;

    private static MethodHandle abi_version,
            last_error,
            device_create,
            device_name,
            device_memory,
            device_is_emulated,
            device_release,
            queue_create,
            queue_release,
            library_from_source,
            library_from_file,
            library_release,
            pipeline_create,
            pipeline_max_threads,
            pipeline_simd_width,
            pipeline_release,
            buffer_new,
            buffer_wrap,
            page_size,
            buffer_contents,
            buffer_length,
            buffer_release,
            cmd_begin,
            cmd_set_pipeline,
            cmd_set_buffer,
            cmd_set_bytes,
            cmd_set_threadgroup_memory,
            cmd_dispatch,
            cmd_copy,
            cmd_commit_wait,
            cmd_gpu_seconds,
            cmd_release;

    /** Binds every function of {@code library} (once per JVM); throws {@link IllegalStateException} on an ABI mismatch. */
    public static synchronized void load(Path library) {
        if (loaded != null) {
            if (!loaded.equals(library))
                throw new IllegalStateException(
                        "goss_metal already bound to " + loaded + ", cannot also load " + library);
            return;
        }
        lookup = SymbolLookup.libraryLookup(library, Arena.global());
        MemoryLayout P = C_POINTER;
        abi_version = bind("goss_mtl_abi_version", FunctionDescriptor.of(C_INT));
        last_error = bind("goss_mtl_last_error", FunctionDescriptor.of(P));
        device_create = bind("goss_mtl_device_create", FunctionDescriptor.of(P));
        device_name = bind("goss_mtl_device_name", FunctionDescriptor.of(P, P));
        device_memory = bind("goss_mtl_device_memory", FunctionDescriptor.of(C_LONG_LONG, P));
        device_is_emulated = bind("goss_mtl_device_is_emulated", FunctionDescriptor.of(C_INT, P));
        device_release = bind("goss_mtl_device_release", FunctionDescriptor.ofVoid(P));
        queue_create = bind("goss_mtl_queue_create", FunctionDescriptor.of(P, P));
        queue_release = bind("goss_mtl_queue_release", FunctionDescriptor.ofVoid(P));
        library_from_source = bind("goss_mtl_library_from_source", FunctionDescriptor.of(P, P, P));
        library_from_file = bind("goss_mtl_library_from_file", FunctionDescriptor.of(P, P, P));
        library_release = bind("goss_mtl_library_release", FunctionDescriptor.ofVoid(P));
        pipeline_create = bind("goss_mtl_pipeline_create", FunctionDescriptor.of(P, P, P));
        pipeline_max_threads = bind("goss_mtl_pipeline_max_threads", FunctionDescriptor.of(C_INT, P));
        pipeline_simd_width = bind("goss_mtl_pipeline_simd_width", FunctionDescriptor.of(C_INT, P));
        pipeline_release = bind("goss_mtl_pipeline_release", FunctionDescriptor.ofVoid(P));
        buffer_new = bind("goss_mtl_buffer_new", FunctionDescriptor.of(P, P, C_LONG_LONG, C_INT));
        buffer_wrap = bind("goss_mtl_buffer_wrap", FunctionDescriptor.of(P, P, P, C_LONG_LONG));
        page_size = bind("goss_mtl_page_size", FunctionDescriptor.of(C_LONG_LONG));
        buffer_contents = bind("goss_mtl_buffer_contents", FunctionDescriptor.of(P, P));
        buffer_length = bind("goss_mtl_buffer_length", FunctionDescriptor.of(C_LONG_LONG, P));
        buffer_release = bind("goss_mtl_buffer_release", FunctionDescriptor.ofVoid(P));
        cmd_begin = bind("goss_mtl_cmd_begin", FunctionDescriptor.of(P, P));
        cmd_set_pipeline = bind("goss_mtl_cmd_set_pipeline", FunctionDescriptor.ofVoid(P, P));
        cmd_set_buffer = bind("goss_mtl_cmd_set_buffer", FunctionDescriptor.ofVoid(P, C_INT, P, C_LONG_LONG));
        cmd_set_bytes = bind("goss_mtl_cmd_set_bytes", FunctionDescriptor.ofVoid(P, C_INT, P, C_LONG_LONG));
        cmd_set_threadgroup_memory =
                bind("goss_mtl_cmd_set_threadgroup_memory", FunctionDescriptor.ofVoid(P, C_INT, C_INT));
        cmd_dispatch = bind(
                "goss_mtl_cmd_dispatch", FunctionDescriptor.of(C_INT, P, C_INT, C_INT, C_INT, C_INT, C_INT, C_INT));
        cmd_copy =
                bind("goss_mtl_cmd_copy", FunctionDescriptor.of(C_INT, P, P, C_LONG_LONG, P, C_LONG_LONG, C_LONG_LONG));
        cmd_commit_wait = bind("goss_mtl_cmd_commit_wait", FunctionDescriptor.of(C_INT, P));
        cmd_gpu_seconds = bind("goss_mtl_cmd_gpu_seconds", FunctionDescriptor.of(C_DOUBLE, P));
        cmd_release = bind("goss_mtl_cmd_release", FunctionDescriptor.ofVoid(P));
        int v;
        try {
            v = (int) abi_version.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("goss_mtl_abi_version failed", t);
        }
        if (v != GOSS_MTL_ABI_VERSION)
            throw new IllegalStateException(
                    library + " has goss_metal ABI " + v + ", this build needs " + GOSS_MTL_ABI_VERSION);
        loaded = library;
    }

    public static Path loadedLibrary() {
        return loaded;
    }

    private static MethodHandle bind(String name, FunctionDescriptor d) {
        MemorySegment addr = lookup.find(name)
                .orElseThrow(
                        () -> new IllegalStateException("symbol " + name + " missing from the goss_metal library"));
        return Linker.nativeLinker().downcallHandle(addr, d);
    }

    private static RuntimeException fail(Throwable t) {
        if (t instanceof RuntimeException r) return r;
        if (t instanceof Error e) throw e;
        return new IllegalStateException(t);
    }

    // ---- functions (names as in the header) ------------------------------------------------------------

    public static int goss_mtl_abi_version() {
        try {
            return (int) abi_version.invokeExact();
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_last_error() {
        try {
            return (MemorySegment) last_error.invokeExact();
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_device_create() {
        try {
            return (MemorySegment) device_create.invokeExact();
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_device_name(MemorySegment dev) {
        try {
            return (MemorySegment) device_name.invokeExact(dev);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static long goss_mtl_device_memory(MemorySegment dev) {
        try {
            return (long) device_memory.invokeExact(dev);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static int goss_mtl_device_is_emulated(MemorySegment dev) {
        try {
            return (int) device_is_emulated.invokeExact(dev);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_device_release(MemorySegment dev) {
        try {
            device_release.invokeExact(dev);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_queue_create(MemorySegment dev) {
        try {
            return (MemorySegment) queue_create.invokeExact(dev);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_queue_release(MemorySegment q) {
        try {
            queue_release.invokeExact(q);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_library_from_source(MemorySegment dev, MemorySegment source) {
        try {
            return (MemorySegment) library_from_source.invokeExact(dev, source);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_library_from_file(MemorySegment dev, MemorySegment path) {
        try {
            return (MemorySegment) library_from_file.invokeExact(dev, path);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_library_release(MemorySegment lib) {
        try {
            library_release.invokeExact(lib);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_pipeline_create(MemorySegment lib, MemorySegment name) {
        try {
            return (MemorySegment) pipeline_create.invokeExact(lib, name);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static int goss_mtl_pipeline_max_threads(MemorySegment p) {
        try {
            return (int) pipeline_max_threads.invokeExact(p);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static int goss_mtl_pipeline_simd_width(MemorySegment p) {
        try {
            return (int) pipeline_simd_width.invokeExact(p);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_pipeline_release(MemorySegment p) {
        try {
            pipeline_release.invokeExact(p);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_buffer_new(MemorySegment dev, long length, int storage) {
        try {
            return (MemorySegment) buffer_new.invokeExact(dev, length, storage);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_buffer_wrap(MemorySegment dev, MemorySegment ptr, long length) {
        try {
            return (MemorySegment) buffer_wrap.invokeExact(dev, ptr, length);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static long goss_mtl_page_size() {
        try {
            return (long) page_size.invokeExact();
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_buffer_contents(MemorySegment b) {
        try {
            return (MemorySegment) buffer_contents.invokeExact(b);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static long goss_mtl_buffer_length(MemorySegment b) {
        try {
            return (long) buffer_length.invokeExact(b);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_buffer_release(MemorySegment b) {
        try {
            buffer_release.invokeExact(b);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static MemorySegment goss_mtl_cmd_begin(MemorySegment q) {
        try {
            return (MemorySegment) cmd_begin.invokeExact(q);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_cmd_set_pipeline(MemorySegment c, MemorySegment p) {
        try {
            cmd_set_pipeline.invokeExact(c, p);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_cmd_set_buffer(MemorySegment c, int index, MemorySegment b, long offset) {
        try {
            cmd_set_buffer.invokeExact(c, index, b, offset);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_cmd_set_bytes(MemorySegment c, int index, MemorySegment bytes, long length) {
        try {
            cmd_set_bytes.invokeExact(c, index, bytes, length);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_cmd_set_threadgroup_memory(MemorySegment c, int index, int length) {
        try {
            cmd_set_threadgroup_memory.invokeExact(c, index, length);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static int goss_mtl_cmd_dispatch(MemorySegment c, int gx, int gy, int gz, int tx, int ty, int tz) {
        try {
            return (int) cmd_dispatch.invokeExact(c, gx, gy, gz, tx, ty, tz);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static int goss_mtl_cmd_copy(
            MemorySegment c, MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long length) {
        try {
            return (int) cmd_copy.invokeExact(c, src, srcOffset, dst, dstOffset, length);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static int goss_mtl_cmd_commit_wait(MemorySegment c) {
        try {
            return (int) cmd_commit_wait.invokeExact(c);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static double goss_mtl_cmd_gpu_seconds(MemorySegment c) {
        try {
            return (double) cmd_gpu_seconds.invokeExact(c);
        } catch (Throwable t) {
            throw fail(t);
        }
    }

    public static void goss_mtl_cmd_release(MemorySegment c) {
        try {
            cmd_release.invokeExact(c);
        } catch (Throwable t) {
            throw fail(t);
        }
    }
}
