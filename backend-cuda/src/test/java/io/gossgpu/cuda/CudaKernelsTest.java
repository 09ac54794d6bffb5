package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.cuda.bindings.CudaException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The packaged PTX, checked without a GPU. */
class CudaKernelsTest {

    static final List<String> KERNELS = List.of("rmsnorm", "add");
    static final List<String> ARCHS = List.of("sm_75", "sm_80", "sm_90");
    /** A manifest as the build writes it today: each target at the lowest ISA ptxas accepts. */
    static final CudaKernels.Manifest BUILT = new CudaKernels.Manifest(
            "nvcc", "13.0", KERNELS, ARCHS, java.util.Map.of("sm_75", "6.3", "sm_80", "7.0", "sm_90", "7.8"));

    /** Whether this machine has nvcc where backend-cuda/kernels/tools/PtxBuild.java looks (then the build must have packaged PTX). */
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

    /**
     * The packaged PTX's manifest. Without one: a failure where the build must have packaged PTX (nvcc is installed
     * here, or GOSS_REQUIRE_CUDA=1), else the test is skipped with {@link CudaKernels#NOT_BUILT}.
     */
    static CudaKernels.Manifest packagedManifest() {
        var manifest = CudaKernels.manifest();
        if (manifest.isPresent()) return manifest.get();
        if (nvccPresent())
            fail("nvcc is installed here but the build packaged no CUDA kernels (" + CudaKernels.MANIFEST
                    + " missing)");
        if (RequiredBackends.required("cuda"))
            fail(RequiredBackends.variable("cuda") + "=1 but the build packaged no CUDA kernels ("
                    + CudaKernels.MANIFEST + " missing)");
        assertEquals(CudaKernels.NOT_BUILT, CudaKernels.unavailableReason().orElseThrow());
        return abort(CudaKernels.NOT_BUILT);
    }

    @Test
    void packagedPtxExistsForEveryTargetAtTheIsaTheManifestNames() {
        CudaKernels.Manifest manifest = packagedManifest();
        assertTrue(CudaKernels.unavailableReason().isEmpty());
        assertTrue(manifest.archs().containsAll(ARCHS), "archs " + manifest.archs());
        assertTrue(manifest.kernels().containsAll(KERNELS), "kernels " + manifest.kernels());
        assertTrue(manifest.cudaRelease().matches("\\d+\\.\\d+"), manifest.cudaRelease());
        for (String kernel : KERNELS) {
            for (String arch : ARCHS) {
                String ptx = new String(CudaKernels.ptx(kernel, arch), StandardCharsets.UTF_8);
                assertTrue(ptx.contains("\n.target " + arch), kernel + "." + arch + " targets " + arch);
                assertTrue(
                        ptx.contains(".visible .entry " + kernel + "("), kernel + "." + arch + " has entry " + kernel);
            }
        }
        // every packaged file declares at most its target's ISA, and one of them exactly that
        for (String arch : ARCHS) {
            String isa = manifest.isa().get(arch);
            assertTrue(isa != null && isa.matches("\\d+\\.\\d"), arch + " has ISA " + isa);
            boolean reached = false;
            for (String kernel : manifest.kernels()) {
                String v = ptxVersion(new String(CudaKernels.ptx(kernel, arch), StandardCharsets.UTF_8));
                assertTrue(
                        Double.parseDouble(v) <= Double.parseDouble(isa),
                        kernel + "." + arch + " is ISA " + v + ", above " + isa);
                reached |= v.equals(isa);
            }
            assertTrue(reached, arch + ": no file at ISA " + isa);
            assertTrue(
                    CudaVersions.cudaForIsa(isa).isPresent(),
                    "ISA " + isa + " of " + arch + " is not in CudaVersions' table");
        }
        // PTX ISA 9.0 (what nvcc 13 writes) would need a CUDA 13 driver: the build lowered every target below it
        assertTrue(manifest.archs().stream().allMatch(a -> manifest.cudaNeeded(a) < 13000), manifest.toString());
    }

    static String ptxVersion(String ptx) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\.version (\\d+\\.\\d+)$")
                .matcher(ptx);
        assertTrue(m.find(), "PTX without .version");
        return m.group(1);
    }

    @Test
    void missingKernelIsAClearError() {
        CudaException e = assertThrows(CudaException.class, () -> CudaKernels.ptx("no_such_kernel", "sm_80"));
        assertTrue(
                e.getMessage().equals(CudaKernels.NOT_BUILT)
                        || e.getMessage()
                                .equals(
                                        "CUDA kernel no_such_kernel for sm_80 is not packaged "
                                                + "(io/gossgpu/kernels/cuda/no_such_kernel.sm_80.ptx missing from the class path)"),
                e.getMessage());
    }

    @Test
    void archSelectionPicksTheHighestNotAboveTheDevice() {
        assertEquals("sm_75", CudaKernels.archFor(75, ARCHS));
        assertEquals("sm_80", CudaKernels.archFor(80, ARCHS));
        assertEquals("sm_80", CudaKernels.archFor(86, ARCHS));
        assertEquals("sm_80", CudaKernels.archFor(89, ARCHS));
        assertEquals("sm_90", CudaKernels.archFor(90, ARCHS));
        assertEquals("sm_90", CudaKernels.archFor(100, ARCHS));
        assertEquals("sm_90", CudaKernels.archFor(120, ARCHS));
        CudaException e = assertThrows(CudaException.class, () -> CudaKernels.archFor(70, ARCHS));
        assertEquals(
                "CUDA device with compute capability 7.0 is not supported: the kernels are built for sm_75, sm_80, sm_90 "
                        + "(compute capability 7.5 or newer)",
                e.getMessage());
    }

    @Test
    void eachGpuGenerationNeedsTheDriverOfItsPtxOrOfTheDriverCalls() {
        // Turing and Ampere: the PTX loads from CUDA 10.0 / 11.0, the CUDA graph calls need 11.4
        assertTrue(CudaKernels.driverTooOld(BUILT, 11040, 75).isEmpty());
        assertTrue(CudaKernels.driverTooOld(BUILT, 11040, 86).isEmpty());
        assertEquals(
                "CUDA unavailable: the NVIDIA driver supports CUDA 11.2; goss-gpu's driver calls (CUDA graphs) need CUDA 11.4 "
                        + "(Linux driver R470 or newer) (this GPU (compute capability 7.5) runs the sm_75 PTX (ISA 6.3), which loads from "
                        + "CUDA 10.0): update the NVIDIA driver",
                CudaKernels.driverTooOld(BUILT, 11020, 75).orElseThrow());
        // Hopper and Blackwell run the sm_90 PTX, ISA 7.8: CUDA 11.8 (an R535, R550 or R570 driver is plenty)
        assertTrue(CudaKernels.driverTooOld(BUILT, 11080, 90).isEmpty());
        assertTrue(CudaKernels.driverTooOld(BUILT, 12020, 100).isEmpty());
        assertEquals(
                "CUDA unavailable: the NVIDIA driver supports CUDA 11.7; this GPU (compute capability 9.0) runs the sm_90 PTX "
                        + "(ISA 7.8), which needs CUDA 11.8 (Linux driver R520 or newer): update the NVIDIA driver",
                CudaKernels.driverTooOld(BUILT, 11070, 90).orElseThrow());
        assertEquals(
                "CUDA unavailable: CUDA device with compute capability 6.1 is not supported: the kernels are built for "
                        + "sm_75, sm_80, sm_90 (compute capability 7.5 or newer)",
                CudaKernels.driverTooOld(BUILT, 13000, 61).orElseThrow());
        // a manifest from before the ISA was lowered: its PTX needs nvcc's own release
        var old = new CudaKernels.Manifest("nvcc", "13.0", KERNELS, List.of("sm_80", "sm_90"), java.util.Map.of());
        assertEquals(13000, old.cudaNeeded("sm_80"));
        assertTrue(CudaKernels.driverTooOld(old, 12080, 80)
                .orElseThrow()
                .contains("needs CUDA 13.0 (Linux driver R580 or newer)"));
    }

    @Test
    void whichPtxADriverLoads() {
        assertEquals(
                "loads the PTX for sm_75 (ISA 6.3), sm_80 (ISA 7.0), sm_90 (ISA 7.8)",
                CudaKernels.loadable(BUILT, 12040));
        assertEquals(
                "loads the PTX for sm_75 (ISA 6.3), sm_80 (ISA 7.0); not for sm_90 (ISA 7.8 needs CUDA 11.8)",
                CudaKernels.loadable(BUILT, 11040));
        assertEquals(
                "loads none of the packaged PTX; not for sm_75 (ISA 6.3 needs CUDA 10.0), sm_80 (ISA 7.0 needs CUDA 11.0), "
                        + "sm_90 (ISA 7.8 needs CUDA 11.8)",
                CudaKernels.loadable(BUILT, 9020));
    }

    @Test
    void releaseStrings() {
        assertEquals(13000, CudaKernels.releaseToVersion("13.0"));
        assertEquals(12080, CudaKernels.releaseToVersion("12.8"));
        assertEquals(0, CudaKernels.releaseToVersion("?"));
        assertEquals(java.util.Optional.of(11000), CudaVersions.cudaForIsa("7.0"));
        assertEquals(java.util.Optional.of(12070), CudaVersions.cudaForIsa("8.6")); // there was no CUDA 12.6 ISA
        assertTrue(CudaVersions.cudaForIsa("9.9").isEmpty());
        assertEquals("CUDA 11.0 (Linux driver R450 or newer)", CudaVersions.describeCuda(11000));
        assertEquals("CUDA 13.2", CudaVersions.describeCuda(13020));
    }
}
