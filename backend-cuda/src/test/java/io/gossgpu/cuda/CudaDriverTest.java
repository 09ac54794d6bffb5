package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.cuda.bindings.Cuda;
import io.gossgpu.cuda.bindings.CudaException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The driver-less path: runs everywhere, and asserts the exact reason where libcuda.so.1 is absent. */
class CudaDriverTest {

    static final String NOT_FOUND = "CUDA unavailable: libcuda.so.1 not found";

    /** Looks for the driver library without asking the code under test: ldconfig's cache and the usual folders. */
    static boolean libcudaInstalled() {
        if (System.getenv("GOSS_CUDA_LIBRARY") != null || System.getProperty("goss.cuda.library") != null) {
            return true;
        }
        List<String> dirs = new ArrayList<>(List.of(
                "/usr/lib/x86_64-linux-gnu",
                "/usr/lib/aarch64-linux-gnu",
                "/usr/lib64",
                "/usr/lib",
                "/lib/x86_64-linux-gnu",
                "/lib64",
                "/usr/lib/wsl/lib",
                "/usr/local/nvidia/lib64",
                "/usr/local/nvidia/lib",
                "/usr/local/cuda/compat",
                "/usr/local/cuda/lib64"));
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) {
            dirs.addAll(List.of(ld.split(":")));
        }
        for (String d : dirs) {
            if (!d.isBlank() && Files.exists(Path.of(d, "libcuda.so.1"))) {
                return true;
            }
        }
        for (String ldconfig : List.of("/sbin/ldconfig", "/usr/sbin/ldconfig")) {
            if (Files.isExecutable(Path.of(ldconfig))) {
                try {
                    Process p = new ProcessBuilder(ldconfig, "-p")
                            .redirectErrorStream(true)
                            .start();
                    String out = new String(p.getInputStream().readAllBytes());
                    p.waitFor(10, TimeUnit.SECONDS);
                    if (out.contains("libcuda.so.1 ")) {
                        return true;
                    }
                } catch (IOException e) {
                    // fall through: treat as not listed
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return false;
    }

    static boolean linux() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
    }

    @Test
    void withoutTheDriverLibraryTheReasonIsExact() {
        assumeTrue(linux(), "the exact libcuda.so.1 message is the Linux one");
        assumeFalse(libcudaInstalled(), "libcuda.so.1 is installed on this machine");
        CudaDriver.Availability a = CudaDriver.availability();
        assertFalse(a.available());
        assertEquals(NOT_FOUND, a.reason());
        assertEquals(0, a.deviceCount());
        assertEquals(NOT_FOUND, Cuda.unavailableReason().orElseThrow());
        assertEquals(NOT_FOUND, CudaDriver.backendAvailability().reason());
        assertEquals("libcuda.so.1", Cuda.libraryName());
    }

    @Test
    void callsWithoutTheDriverThrowTheReasonNotALinkError() {
        assumeTrue(linux(), "the exact libcuda.so.1 message is the Linux one");
        assumeFalse(libcudaInstalled(), "libcuda.so.1 is installed on this machine");
        CudaException e = assertThrows(CudaException.class, () -> Cuda.cuInit(0));
        assertEquals(NOT_FOUND, e.getMessage());
        e = assertThrows(CudaException.class, () -> Cuda.cuMemAlloc_v2(java.lang.foreign.MemorySegment.NULL, 16));
        assertEquals(NOT_FOUND, e.getMessage());
        e = assertThrows(CudaException.class, () -> CudaContext.open(0));
        assertEquals(NOT_FOUND, e.getMessage());
        e = assertThrows(CudaException.class, CudaDriver::devices);
        assertEquals(NOT_FOUND, e.getMessage());
        // error names are simply unknown without a driver; formatting still works
        assertEquals(null, Cuda.errorName(2));
        e = assertThrows(CudaException.class, () -> CudaException.check("cuMemAlloc_v2", 2));
        assertEquals("cuMemAlloc_v2 failed: CUDA error 2", e.getMessage());
    }

    @Test
    void availabilityIsOneLineAndCached() {
        CudaDriver.Availability a = CudaDriver.availability();
        assertTrue(a == CudaDriver.availability(), "cached");
        if (!a.available()) {
            assertTrue(a.reason().startsWith("CUDA unavailable: "), a.reason());
            assertFalse(a.reason().contains("\n"), a.reason());
        } else {
            assertTrue(a.deviceCount() > 0);
            assertTrue(a.driverVersion() >= 11000, "driver version " + a.driverVersion());
        }
    }

    @Test
    void loadingTheBindingClassTouchesNothingNative() throws Exception {
        // Class initialisation must not open the library (holder classes do that lazily).
        Class<?> c =
                Class.forName("io.gossgpu.cuda.bindings.Cuda", true, getClass().getClassLoader());
        assertEquals("Cuda", c.getSimpleName());
        assertEquals(0, Cuda.CUDA_SUCCESS);
    }

    @Test
    void versionString() {
        assertEquals("13.0", CudaDriver.versionString(13000));
        assertEquals("12.4", CudaDriver.versionString(12040));
        assertEquals("12.8", CudaDriver.versionString(12080));
    }
}
