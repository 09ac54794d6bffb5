package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The fake CUDA driver's in-process controls (backend-cuda/emu/fake-driver/fakecuda.c), found only when the tests run
 * under it (test-with-fake-driver.sh); {@link #present()} is false elsewhere. As a JUnit extension
 * ({@code @ExtendWith(FakeCudaDriver.class)}) it skips each test of a class that needs the driver, saying why, unless
 * the driver is there, and puts the driver back to its defaults after each.
 */
final class FakeCudaDriver implements BeforeEachCallback, AfterEachCallback {
    static final String NEEDED = "needs the fake CUDA driver (backend-cuda/emu/fake-driver/test-with-fake-driver.sh)";

    private static final Optional<SymbolLookup> LIBRARY = library();
    private static final MethodHandle CONFIGURE =
            handle("goss_fake_cuda_configure", FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle SET_FREE_MEMORY =
            handle("goss_fake_cuda_set_free_memory", FunctionDescriptor.ofVoid(ValueLayout.JAVA_LONG));
    private static final MethodHandle HOST_ALLOCATIONS =
            handle("goss_fake_cuda_host_allocations", FunctionDescriptor.of(ValueLayout.JAVA_INT));
    private static final MethodHandle PINNED_COPIES =
            handle("goss_fake_cuda_pinned_copies", FunctionDescriptor.of(ValueLayout.JAVA_LONG));
    /** What the fake driver reports as free until a test changes it. */
    static final long DEFAULT_FREE_MEMORY = 1L << 29;

    FakeCudaDriver() {} // JUnit creates the extension

    @Override
    public void beforeEach(ExtensionContext context) {
        assumeTrue(present(), NEEDED);
        assumeTrue(CudaKernels.manifest().isPresent(), CudaKernels.NOT_BUILT);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!present()) return;
        configure(13000, 90);
        setFreeMemory(DEFAULT_FREE_MEMORY);
    }

    static boolean present() {
        return CONFIGURE != null && SET_FREE_MEMORY != null;
    }

    /** The driver's CUDA version (e.g. 11070) and the device's compute capability (e.g. 90) from now on. */
    static void configure(int driverVersion, int computeCapability) {
        invoke(CONFIGURE, driverVersion, computeCapability);
    }

    /** What cuMemGetInfo reports as free from now on. */
    static void setFreeMemory(long bytes) {
        invoke(SET_FREE_MEMORY, bytes);
    }

    /** Page-locked host allocations ({@code cuMemHostAlloc}) not yet freed. */
    static int hostAllocations() {
        try {
            return (int) HOST_ALLOCATIONS.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Asynchronous copies so far whose host side lay inside a page-locked allocation. */
    static long pinnedCopies() {
        try {
            return (long) PINNED_COPIES.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private static Optional<SymbolLookup> library() {
        String lib = System.getProperty("goss.cuda.library", System.getenv("GOSS_CUDA_LIBRARY"));
        if (lib == null || !lib.contains("fake-driver")) return Optional.empty();
        return Optional.of(SymbolLookup.libraryLookup(Path.of(lib), Arena.global()));
    }

    private static MethodHandle handle(String name, FunctionDescriptor d) {
        return LIBRARY.flatMap(l -> l.find(name))
                .map(a -> Linker.nativeLinker().downcallHandle(a, d))
                .orElse(null);
    }

    private static void invoke(MethodHandle h, Object... args) {
        try {
            h.invokeWithArguments(args);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
