package io.gossgpu.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

/** The packaged PTX, checked without a GPU. */
class CudaKernelsTest {

    static final List<String> KERNELS = List.of("rmsnorm", "add");
    static final List<String> ARCHS = List.of("sm_80", "sm_90");

    /** Whether this machine has nvcc where kernels/tools/PtxBuild.java looks (then the build must have packaged PTX). */
    static boolean nvccPresent() {
        List<Path> candidates = new ArrayList<>();
        for (String var : List.of("CUDA_HOME", "CUDA_PATH")) {
            String home = System.getenv(var);
            if (home != null && !home.isBlank()) {
                candidates.add(Path.of(home, "bin", "nvcc"));
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                if (!dir.isBlank()) {
                    candidates.add(Path.of(dir, "nvcc"));
                }
            }
        }
        candidates.add(Path.of("/usr/local/cuda/bin/nvcc"));
        return candidates.stream().anyMatch(p -> Files.isRegularFile(p) && Files.isExecutable(p));
    }

    @Test
    void packagedPtxExistsForSm80AndSm90() {
        var manifest = CudaKernels.manifest();
        if (manifest.isEmpty()) {
            if (nvccPresent()) {
                fail("nvcc is installed here but the build packaged no CUDA kernels (" + CudaKernels.MANIFEST + " missing)");
            }
            assertEquals(CudaKernels.NOT_BUILT, CudaKernels.unavailableReason().orElseThrow());
            abort(CudaKernels.NOT_BUILT);
        }
        assertTrue(CudaKernels.unavailableReason().isEmpty());
        assertTrue(manifest.get().archs().containsAll(ARCHS), "archs " + manifest.get().archs());
        assertTrue(manifest.get().kernels().containsAll(KERNELS), "kernels " + manifest.get().kernels());
        assertTrue(manifest.get().cudaRelease().matches("\\d+\\.\\d+"), manifest.get().cudaRelease());
        for (String kernel : KERNELS) {
            for (String arch : ARCHS) {
                String ptx = new String(CudaKernels.ptx(kernel, arch), StandardCharsets.UTF_8);
                assertTrue(ptx.contains("\n.target " + arch), kernel + "." + arch + " targets " + arch);
                assertTrue(ptx.contains(".visible .entry " + kernel + "_f32("), kernel + "." + arch + " has entry " + kernel + "_f32");
            }
        }
    }

    @Test
    void missingKernelIsAClearError() {
        CudaException e = assertThrows(CudaException.class, () -> CudaKernels.ptx("no_such_kernel", "sm_80"));
        assertTrue(e.getMessage().equals(CudaKernels.NOT_BUILT)
                || e.getMessage().equals("CUDA kernel no_such_kernel for sm_80 is not packaged "
                        + "(io/gossgpu/kernels/cuda/no_such_kernel.sm_80.ptx missing from the class path)"), e.getMessage());
    }

    @Test
    void archSelectionPicksTheHighestNotAboveTheDevice() {
        assertEquals("sm_80", CudaKernels.archFor(80, ARCHS));
        assertEquals("sm_80", CudaKernels.archFor(86, ARCHS));
        assertEquals("sm_80", CudaKernels.archFor(89, ARCHS));
        assertEquals("sm_90", CudaKernels.archFor(90, ARCHS));
        assertEquals("sm_90", CudaKernels.archFor(100, ARCHS));
        assertEquals("sm_90", CudaKernels.archFor(120, ARCHS));
        CudaException e = assertThrows(CudaException.class, () -> CudaKernels.archFor(75, ARCHS));
        assertEquals("CUDA device with compute capability 7.5 is not supported: the kernels are built for sm_80, sm_90 "
                + "(compute capability 8.0 or newer)", e.getMessage());
    }

    @Test
    void driverVersionAgainstTheToolkitThatWroteThePtx() {
        assertEquals(13000, CudaKernels.releaseToVersion("13.0"));
        assertEquals(12080, CudaKernels.releaseToVersion("12.8"));
        assertEquals(0, CudaKernels.releaseToVersion("?"));
        var manifest = CudaKernels.manifest();
        if (manifest.isEmpty()) {
            abort(CudaKernels.NOT_BUILT);
        }
        int needed = CudaKernels.releaseToVersion(manifest.get().cudaRelease());
        assertTrue(CudaKernels.driverTooOld(needed).isEmpty());
        assertTrue(CudaKernels.driverTooOld(needed + 10).isEmpty());
        String reason = CudaKernels.driverTooOld(needed - 10).orElseThrow();
        assertTrue(reason.startsWith("CUDA unavailable: the NVIDIA driver supports CUDA "), reason);
        assertFalse(reason.contains("\n"));
    }
}
